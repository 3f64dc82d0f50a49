import { z } from 'zod';
import { pricingModelSchema, productTypeSchema, SLUG_MAX, SLUG_PATTERN } from '../../contract/schemas.ts';
import { LISTING_LIMITS } from '../../contract/listing-limits.ts';
import { sanitizeDescription } from './sanitize-description.ts';
import { hasControlCharacters } from './maker-input.ts';

/**
 * What an operator may write into the catalog: the lines of an import file. One schema per line
 * kind; they validate, apply defaults and normalize (trimmed text, handle without @, description
 * sanitized), so a parsed line is ready to be written.
 *
 * A listing line carries the public Product fields plus the write-model fields status, plan and
 * maker_email. The Product's `url` is derived from the slug: it is accepted (so an exported
 * document imports back) and ignored.
 */

const listingStatusSchema = z.enum(['draft', 'pending', 'live', 'rejected', 'hidden'], {
  error: 'must be one of draft, pending, live, rejected, hidden',
});
const listingPlanSchema = z.enum(['free', 'premium'], { error: 'must be free or premium' });

export type ListingStatus = z.infer<typeof listingStatusSchema>;

const slug = z
  .string({ error: 'must be a string' })
  .min(1, { error: 'must not be empty' })
  .max(SLUG_MAX, { error: `must be at most ${SLUG_MAX} characters` })
  .regex(SLUG_PATTERN, { error: 'must be a slug: lowercase letters and digits in words joined by single hyphens' });

/** Text shown to readers: surrounding whitespace removed, then length checked. */
const text = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` })
    // As the makers' paths refuse them: nothing shows them, and a name goes into e-mail subjects.
    .refine((v) => !hasControlCharacters(v), { error: 'must not contain control characters (other than tab and line breaks)' });

const httpUrl = z
  .string({ error: 'must be a string' })
  .max(LISTING_LIMITS.urlMax, { error: `must be at most ${LISTING_LIMITS.urlMax} characters` })
  .pipe(z.url({ protocol: /^https?$/, hostname: z.regexes.domain, error: 'must be an http(s) URL with a domain name' }));

const slugList = (what: string) =>
  z
    .array(slug, { error: `must be an array of ${what} slugs` })
    .max(LISTING_LIMITS.slugListMax, { error: `must have at most ${LISTING_LIMITS.slugListMax} ${what}s` })
    // the same slug twice says nothing more; keep the first occurrence's order
    .transform((slugs) => [...new Set(slugs)]);

const profileList = z
  .array(text(LISTING_LIMITS.profileItemMax), { error: 'must be an array of strings' })
  .max(LISTING_LIMITS.profileItemsMax, { error: `must have at most ${LISTING_LIMITS.profileItemsMax} items` });

const faqItem = z.strictObject(
  {
    question: text(LISTING_LIMITS.faqQuestionMax),
    answer: text(LISTING_LIMITS.faqAnswerMax),
  },
  { error: 'must be an object with question and answer' },
);

const promo = z.strictObject(
  {
    code: text(LISTING_LIMITS.promoCodeMax),
    discount: text(LISTING_LIMITS.promoDiscountMax),
    url: httpUrl.nullable().default(null),
    expires_at: z.iso.date({ error: 'must be a calendar date yyyy-mm-dd' }).nullable().default(null),
  },
  { error: 'must be an object with code and discount, or null' },
);

const social = z
  .string({ error: 'must be a string' })
  .trim()
  // a handle is stored without its leading @ (the Product shows it that way)
  .transform((v) => v.replace(/^@+/, ''))
  .pipe(
    z
      .string()
      .max(LISTING_LIMITS.socialMax, { error: `must be at most ${LISTING_LIMITS.socialMax} characters` })
      // a handle, not a link: letters, digits, _ . - (and one @host for federated networks)
      .regex(/^[\p{L}\p{N}_.-]+(@[\p{L}\p{N}.-]+)?$/u, { error: 'must be a handle such as "pixelforge": not empty, no spaces, no URL' }),
  );

const categoryLineSchema = z.strictObject({
  kind: z.literal('category'),
  slug,
  name: text(LISTING_LIMITS.categoryNameMax),
  noun: text(LISTING_LIMITS.categoryNounMax),
});

const listingLineSchema = z.strictObject({
  kind: z.literal('listing'),
  id: z
    .uuid({ error: 'must be a UUID' })
    .transform((v) => v.toLowerCase())
    .optional(),
  slug,
  name: text(LISTING_LIMITS.nameMax),
  punchline: text(LISTING_LIMITS.punchlineMax),
  description: z
    .string({ error: 'must be a string' })
    .max(LISTING_LIMITS.descriptionMax, { error: `must be at most ${LISTING_LIMITS.descriptionMax} characters` })
    .transform(sanitizeDescription),
  // derived from the slug when served; accepted so exported documents import back
  url: z.string({ error: 'must be a string' }).optional(),
  website: httpUrl,
  logo: httpUrl.nullable().default(null),
  cover: httpUrl.nullable().default(null),
  category: slug.nullable().default(null),
  labels: slugList('label').default([]),
  tags: slugList('tag').default([]),
  product_type: z.enum(productTypeSchema.options, { error: 'must be software or digital_product' }).nullable().default(null),
  pricing_model: z
    .enum(pricingModelSchema.options, { error: 'must be one of free, freemium, paid, open_source' })
    .nullable()
    .default(null),
  social: social.nullable().default(null),
  featured: z.boolean({ error: 'must be true or false' }).default(false),
  listed_at: z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T09:00:00Z' })
    // a date ahead of now would pin the listing to the top of every newest-first result
    .refine((v) => !(Date.parse(v) > Date.now() + 60 * 60 * 1000), { error: 'must not be in the future' })
    .nullable()
    .default(null),
  highlights: profileList.default([]),
  ideal_for: profileList.default([]),
  faq: z
    .array(faqItem, { error: 'must be an array of {question, answer}' })
    .max(LISTING_LIMITS.faqMax, { error: `must have at most ${LISTING_LIMITS.faqMax} items` })
    .default([]),
  promo: promo.nullable().default(null),
  status: listingStatusSchema.default('live'),
  plan: listingPlanSchema.default('free'),
  maker_email: z
    .email({ error: 'must be an e-mail address' })
    .max(LISTING_LIMITS.emailMax, { error: `must be at most ${LISTING_LIMITS.emailMax} characters` })
    .optional(),
});

export type CategoryLine = z.infer<typeof categoryLineSchema>;
export type ListingLine = z.infer<typeof listingLineSchema>;
/** A listing line as written in a file, before defaults and normalization. */
export type ListingLineInput = z.input<typeof listingLineSchema>;
export type CategoryLineInput = z.input<typeof categoryLineSchema>;
export type CatalogLine = CategoryLine | ListingLine;

/** One problem with one line of an import: `line 7: promo.expires_at: must be a calendar date`. */
export interface LineError {
  line: number;
  /** Dotted path of the field (`promo.expires_at`, `faq.0.answer`), or `json` / `kind` for the line itself. */
  field: string;
  message: string;
}

export function formatLineError(e: LineError): string {
  return `line ${e.line}: ${e.field}: ${e.message}`;
}

/** Longest line accepted: a maximal description with room for every other field. */
const MAX_LINE_CHARS = 1_000_000;

function valueAt(doc: unknown, path: readonly PropertyKey[]): unknown {
  let v = doc;
  for (const key of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

const schemas = { category: categoryLineSchema, listing: listingLineSchema } as const;

/**
 * Parses one line of an import file. Blank lines are the caller's to skip. Returns the parsed
 * line, or every problem found in it.
 */
export function parseCatalogLine(raw: string, line: number): { ok: true; value: CatalogLine } | { ok: false; errors: LineError[] } {
  const fail = (field: string, message: string) => ({ ok: false as const, errors: [{ line, field, message }] });
  if (raw.length > MAX_LINE_CHARS) return fail('json', `line is longer than ${MAX_LINE_CHARS} characters`);
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch (err) {
    return fail('json', `is not valid JSON (${(err as Error).message})`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return fail('json', 'must be a JSON object');
  const kind = (doc as Record<string, unknown>).kind;
  if (kind === undefined) return fail('kind', 'is required: category or listing');
  if (kind !== 'category' && kind !== 'listing') return fail('kind', 'must be category or listing');

  const parsed = schemas[kind].safeParse(doc);
  if (parsed.success) return { ok: true, value: parsed.data };
  const errors: LineError[] = [];
  for (const issue of parsed.error.issues) {
    const prefix = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) errors.push({ line, field: prefix ? `${prefix}.${key}` : key, message: 'is not a known field' });
    } else {
      const missing = issue.code === 'invalid_type' && valueAt(doc, issue.path) === undefined;
      errors.push({ line, field: prefix || 'json', message: missing ? 'is required' : issue.message });
    }
  }
  return { ok: false, errors };
}
