import { promoExpiryProblem } from '../../catalog/listings/listing-rules.ts';
import type { CategoryChoice } from '../../catalog/listings/category-choices.ts';
import type { Draft } from '../../catalog/submissions/drafts.ts';
import { listingChangesSchema, makerIssues, submissionSchema, type ListingChanges, type Submission } from '../../catalog/listings/maker-input.ts';
import type { MakerListing } from '../../catalog/listings/maker-listings.ts';
import { premiumProfileSchema, profileIssues, type PremiumProfile } from '../../catalog/listings/premium-profile.ts';
import { LISTING_LIMITS } from '../../contract/listing-limits.ts';
import type { ValidationIssue } from '../../contract/schemas.ts';
import type { FieldErrors } from '../components/forms.tsx';

/**
 * The maker pages' forms as the server reads them: a posted body becomes the values the form
 * shows again (exactly as typed, when something is refused) and the input of a catalog command,
 * checked by the catalog's own rules (maker-input.ts, premium-profile.ts). What this adds is
 * what only a form needs: empty fields, lines and rows of text, the fields a form asks for
 * before the automatic check would, and messages addressed to a person.
 */

/** A url-encoded body: a field sent twice arrives as a list. */
export type FormBody = Readonly<Record<string, string | readonly string[] | undefined>> | undefined;

/** The first value of a field, as text ('' when absent). */
function formField(body: FormBody, name: string): string {
  const value = body?.[name];
  return typeof value === 'string' ? value : Array.isArray(value) ? String(value[0] ?? '') : '';
}

/** Every value of a field sent several times (the rows of the FAQ). */
function formFields(body: FormBody, name: string): string[] {
  const value = body?.[name];
  return typeof value === 'string' ? [value] : Array.isArray(value) ? value.map(String) : [];
}

export type FormResult<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

const FIELD_LABELS: Readonly<Record<string, string>> = {
  website: 'Website',
  name: 'Name',
  punchline: 'Punchline',
  description: 'Description',
  category: 'Category',
  pricing_model: 'Pricing model',
  product_type: 'Product type',
  social: 'Social handle',
  tags: 'Tags',
  plan: 'Plan',
};

/** A catalog message as a sentence for a person: the field's label in place of its name. */
function sentence(key: string, message: string): string {
  const label = FIELD_LABELS[key];
  const text = label && message.startsWith(`${key} `) ? `${label}${message.slice(key.length)}` : message;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function addError(errors: Record<string, string>, key: string, message: string): void {
  if (!(key in errors)) errors[key] = message;
}

/** Field errors from a catalog command's refusal (an unknown category, a website refused…). */
export function fieldErrorsFromIssues(issues: readonly ValidationIssue[], keyOf: (path: readonly (string | number)[]) => string = (p) => String(p[0] ?? 'form')): FieldErrors {
  const errors: Record<string, string> = {};
  for (const issue of issues) {
    const key = keyOf(issue.path);
    addError(errors, key, sentence(key, issue.message));
  }
  return errors;
}

const unknownCategory = (value: string) => `Choose a category from the list: "${value.slice(0, 100)}" is not one of the directory's categories`;

// ---------------------------------------------------------------------------------------------
// The submission form (/dashboard/new and the claim page)

const SUBMISSION_FIELDS = ['website', 'name', 'punchline', 'description', 'category', 'pricing_model', 'product_type', 'social', 'tags', 'plan'] as const;
export type SubmissionValues = Record<(typeof SUBMISSION_FIELDS)[number], string>;

/** What the form asks for although the automatic check would only hold the listing without it. */
const REQUIRED_TO_SUBMIT: Readonly<Record<string, string>> = {
  website: "Enter the product's website, such as https://example.com",
  name: "Enter the product's name",
  punchline: 'Enter a punchline: one line saying what the product does',
  description: 'Enter a description of the product',
  category: 'Choose a category',
};

export function submissionValuesFrom(body: FormBody): SubmissionValues {
  const values = Object.fromEntries(SUBMISSION_FIELDS.map((name) => [name, formField(body, name)])) as SubmissionValues;
  return { ...values, plan: values.plan || 'free' };
}

export function emptySubmissionValues(): SubmissionValues {
  return submissionValuesFrom(undefined);
}

/** A draft's fields as the form shows them, for the maker to check and submit. */
export function submissionValuesFromDraft(draft: Draft): SubmissionValues {
  const f = draft.fields;
  return {
    website: draft.website,
    name: f.name ?? '',
    punchline: f.punchline ?? '',
    description: f.description ?? '',
    category: f.category ?? '',
    pricing_model: f.pricing_model ?? '',
    product_type: f.product_type ?? '',
    social: f.social ?? '',
    tags: (f.tags ?? []).join(', '),
    plan: f.plan ?? 'free',
  };
}

/** Tags as typed: separated by commas or line breaks. */
function tagList(value: string): string[] {
  return value
    .split(/[,\n]/)
    .map((t) => t.trim())
    .filter((t) => t !== '');
}

export function parseSubmissionForm(values: SubmissionValues, categories: readonly CategoryChoice[]): FormResult<Submission> {
  const input: Record<string, unknown> = {};
  for (const name of SUBMISSION_FIELDS) {
    const value = values[name];
    if (value.trim() === '') continue;
    input[name] = name === 'tags' ? tagList(value) : value;
  }
  const errors: Record<string, string> = {};
  for (const [name, message] of Object.entries(REQUIRED_TO_SUBMIT)) if (values[name as keyof SubmissionValues].trim() === '') errors[name] = message;
  const parsed = submissionSchema.safeParse(input);
  if (!parsed.success) for (const issue of makerIssues(parsed.error)) addError(errors, String(issue.path[0]), sentence(String(issue.path[0]), issue.message));
  checkCategory(errors, values.category, categories);
  if (!parsed.success || Object.keys(errors).length > 0) return { ok: false, errors: ordered(errors, SUBMISSION_FIELDS) };
  return { ok: true, value: parsed.data };
}

/**
 * A category that does not exist, reported with every other problem of the form (not only once
 * the rest is valid): the value as the schema would read it, when the schema itself had nothing
 * to say about it.
 */
function checkCategory(errors: Record<string, string>, value: string, categories: readonly CategoryChoice[]): void {
  const slug = value.trim().toLowerCase();
  if (slug !== '' && !errors.category && !categories.some((c) => c.slug === slug)) addError(errors, 'category', unknownCategory(value));
}

/** Errors in the order the fields appear, so the summary reads top to bottom. */
function ordered(errors: Record<string, string>, order: readonly string[]): FieldErrors {
  const rank = (k: string) => {
    const i = order.findIndex((o) => k === o || k.startsWith(`${o}-`));
    return i === -1 ? order.length : i;
  };
  return Object.fromEntries(Object.entries(errors).sort(([a], [b]) => rank(a) - rank(b)));
}

// ---------------------------------------------------------------------------------------------
// The edit form of a listing (the fields update_listing changes)

const LISTING_FIELDS = ['website', 'name', 'punchline', 'description', 'category', 'pricing_model', 'social'] as const;
export type ListingValues = Record<(typeof LISTING_FIELDS)[number], string>;

const REQUIRED_TO_EDIT: Readonly<Record<string, string>> = {
  website: "Enter the product's website, such as https://example.com",
  name: "Enter the product's name",
  punchline: 'Enter a punchline: one line saying what the product does',
  description: 'Enter a description of the product',
};

export function listingValuesFrom(body: FormBody): ListingValues {
  return Object.fromEntries(LISTING_FIELDS.map((name) => [name, formField(body, name)])) as ListingValues;
}

export function listingValuesOf(listing: MakerListing): ListingValues {
  return {
    website: listing.website,
    name: listing.name,
    punchline: listing.punchline,
    description: listing.descriptionSource,
    category: listing.category ?? '',
    pricing_model: listing.pricingModel ?? '',
    social: listing.social ?? '',
  };
}

/**
 * The changes an edit form asks for. Every field is sent; an empty category or pricing model
 * (offered only while the listing has none) leaves it as it is, an empty social handle removes it.
 * The website as it stands changes nothing; another one is a change of website.
 */
export function parseListingForm(values: ListingValues, categories: readonly CategoryChoice[]): FormResult<ListingChanges> {
  const errors: Record<string, string> = {};
  for (const [name, message] of Object.entries(REQUIRED_TO_EDIT)) if (values[name as keyof ListingValues].trim() === '') errors[name] = message;
  const input: Record<string, unknown> = { name: values.name, punchline: values.punchline, description: values.description, social: values.social.trim() === '' ? null : values.social };
  if (values.website.trim() !== '') input.website = values.website;
  if (values.category.trim() !== '') input.category = values.category;
  if (values.pricing_model.trim() !== '') input.pricing_model = values.pricing_model;
  const parsed = listingChangesSchema.safeParse(input);
  if (!parsed.success) for (const issue of makerIssues(parsed.error)) addError(errors, String(issue.path[0]), sentence(String(issue.path[0]), issue.message));
  checkCategory(errors, values.category, categories);
  if (!parsed.success || Object.keys(errors).length > 0) return { ok: false, errors: ordered(errors, LISTING_FIELDS) };
  return { ok: true, value: parsed.data };
}

// ---------------------------------------------------------------------------------------------
// The premium profile form

export interface ProfileValues {
  /** One highlight per line. */
  highlights: string;
  /** One audience per line. */
  ideal_for: string;
  faq: { question: string; answer: string }[];
  promo_code: string;
  promo_discount: string;
  promo_url: string;
  promo_expires_at: string;
}

/** Empty question rows the form offers below the filled ones, within the limit. */
export const EMPTY_FAQ_ROWS = 3;
/** Rows read from a posted form: the limit, and one more so an extra row is reported, not dropped. */
const FAQ_ROWS_READ = LISTING_LIMITS.faqMax + EMPTY_FAQ_ROWS;

const PROFILE_FIELDS = ['highlights', 'ideal_for', 'faq', 'faq_question', 'faq_answer', 'promo_code', 'promo_discount', 'promo_url', 'promo_expires_at'] as const;

export function profileValuesFrom(body: FormBody): ProfileValues {
  const questions = formFields(body, 'faq_question').slice(0, FAQ_ROWS_READ);
  const answers = formFields(body, 'faq_answer').slice(0, FAQ_ROWS_READ);
  const rows = Math.max(questions.length, answers.length);
  return {
    highlights: formField(body, 'highlights'),
    ideal_for: formField(body, 'ideal_for'),
    faq: Array.from({ length: rows }, (_, i) => ({ question: questions[i] ?? '', answer: answers[i] ?? '' })),
    promo_code: formField(body, 'promo_code'),
    promo_discount: formField(body, 'promo_discount'),
    promo_url: formField(body, 'promo_url'),
    promo_expires_at: formField(body, 'promo_expires_at'),
  };
}

export function profileValuesOf(profile: PremiumProfile): ProfileValues {
  return {
    highlights: profile.highlights.join('\n'),
    ideal_for: profile.idealFor.join('\n'),
    faq: profile.faq.map((f) => ({ question: f.question, answer: f.answer })),
    promo_code: profile.promo?.code ?? '',
    promo_discount: profile.promo?.discount ?? '',
    promo_url: profile.promo?.url ?? '',
    promo_expires_at: profile.promo?.expiresAt ?? '',
  };
}

/** The lines of a textarea that hold something. */
function lines(value: string): string[] {
  return value
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** The form field a profile issue belongs to: `faq_question-2` for the third question's row. */
export function profileFieldOf(path: readonly (string | number)[]): string {
  const [field, index, part] = path;
  if (field === 'promo') return typeof index === 'string' ? `promo_${index}` : 'promo_code';
  if (field === 'faq' && typeof index === 'number') return `faq_${part === 'answer' ? 'answer' : 'question'}-${index}`;
  return String(field ?? 'form');
}

/**
 * The premium profile a form asks for. Empty FAQ rows are skipped (the form always offers a few);
 * a promo with every field empty is no promo. Issues on FAQ items name the row they came from.
 */
export function parseProfileForm(values: ProfileValues, now: Date = new Date()): FormResult<PremiumProfile> {
  // Which form row each kept question came from, so an error lands next to the right fields.
  const kept = values.faq.map((row, i) => ({ row, i })).filter(({ row }) => row.question.trim() !== '' || row.answer.trim() !== '');
  const promoFields = [values.promo_code, values.promo_discount, values.promo_url, values.promo_expires_at];
  const promo = promoFields.every((v) => v.trim() === '')
    ? null
    : { code: values.promo_code, discount: values.promo_discount, url: values.promo_url.trim() === '' ? null : values.promo_url, expires_at: values.promo_expires_at.trim() === '' ? null : values.promo_expires_at };
  const parsed = premiumProfileSchema.safeParse({
    highlights: lines(values.highlights),
    ideal_for: lines(values.ideal_for),
    faq: kept.map(({ row }) => ({ question: row.question, answer: row.answer })),
    promo,
  });
  const errors: Record<string, string> = {};
  // A last day already past, reported with every other problem of the form.
  const expiry = values.promo_expires_at.trim();
  const expiryProblem = /^\d{4}-\d{2}-\d{2}$/.test(expiry) ? promoExpiryProblem(expiry, now) : undefined;
  if (expiryProblem) addError(errors, 'promo_expires_at', sentence('promo_expires_at', `promo expiry date ${expiryProblem}`));
  if (parsed.success) return expiryProblem ? { ok: false, errors: ordered(errors, PROFILE_FIELDS) } : { ok: true, value: parsed.data };
  for (const issue of profileIssues(parsed.error)) {
    // Back from the position among kept rows to the row of the form.
    const faqRow = issue.path[0] === 'faq' && typeof issue.path[1] === 'number' ? (kept[issue.path[1]]?.i ?? issue.path[1]) : undefined;
    const path = faqRow === undefined ? issue.path : ['faq', faqRow, ...issue.path.slice(2)];
    const message = faqRow === undefined ? issue.message : issue.message.replace(/^(question|answer) \d+/, `$1 ${faqRow + 1}`);
    const key = profileFieldOf(path);
    addError(errors, key, sentence(key, message));
  }
  return { ok: false, errors: ordered(errors, PROFILE_FIELDS) };
}
