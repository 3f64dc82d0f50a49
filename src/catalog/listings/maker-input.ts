import { Parser } from 'htmlparser2';
import { Marked, type Token } from 'marked';
import { z } from 'zod';
import { pricingModelSchema, productTypeSchema, SLUG_PATTERN } from '../../contract/schemas.ts';
import type { ValidationIssue } from '../../contract/schemas.ts';
import { parseWebsiteInput } from '../../sites/website-identity.ts';
import { LISTING_LIMITS } from '../../contract/listing-limits.ts';
import { DESCRIPTION_ALLOWED_TAGS, sanitizeDescription } from './sanitize-description.ts';

/**
 * What a maker may write into a listing, through the MCP tools or the web forms: one set of rules
 * for both, so update_listing and the edit page accept and refuse the same things.
 *
 * - name, punchline and the social handle are plain text: markup is refused with a clear message
 *   rather than silently stripped (what the maker sees is what is stored);
 * - the description is Markdown or plain text, or the few HTML tags a listing page shows (p,
 *   strong, em, lists, headings, links…, so an imported description can be edited as it is);
 *   any other tag (script, style, iframe, img…), any attribute but a link's href, and links
 *   other than http(s) or mailto are refused. It is stored as sanitized HTML (the same
 *   allowlist as imports) next to the maker's own text, which the edit page shows again;
 * - the category must exist (checked by the caller against the write model);
 * - the website is an http(s) address with a real domain name (src/sites/website-identity.ts).
 */

export const MAKER_LIMITS = {
  nameMax: LISTING_LIMITS.nameMax,
  punchlineMax: LISTING_LIMITS.punchlineMax,
  descriptionMax: 20_000,
  socialMax: LISTING_LIMITS.socialMax,
  tagsMax: 10,
  tagMax: 50,
} as const;

const MARKUP = /<\/?[a-z!][^>]*>|<\?|&#|javascript:/i;

/** Whether a plain-text value carries markup: a tag, a processing instruction, a character reference or a javascript: URL. */
export function hasMarkup(value: string): boolean {
  return MARKUP.test(value);
}

/** Whether a text carries control characters other than the usual whitespace (tab, line feed, carriage return). */
export function hasControlCharacters(value: string): boolean {
  return [...value].some((c) => {
    const n = c.charCodeAt(0);
    return (n < 32 && n !== 9 && n !== 10 && n !== 13) || n === 127;
  });
}

const plainText = (label: string, max: number) =>
  z
    .string({ error: `${label} must be text` })
    .trim()
    .min(1, { error: `${label} must not be empty` })
    .max(max, { error: `${label} must be at most ${max} characters` })
    .refine((v) => !hasMarkup(v), { error: `${label} must be plain text, without HTML or scripts` })
    .refine((v) => !hasControlCharacters(v), { error: `${label} must not contain control characters` });

const markdown = new Marked({ gfm: true, breaks: false, async: false });

const ALLOWED_TAGS = new Set<string>(DESCRIPTION_ALLOWED_TAGS);
const LINK = /^(https?:\/\/|mailto:)/i;

/** Problems with HTML written inside a Markdown description. */
function htmlProblems(html: string, problems: Set<string>): void {
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (!ALLOWED_TAGS.has(name)) problems.add(`must not contain <${name}>: only ${DESCRIPTION_ALLOWED_TAGS.join(', ')} are accepted`);
        for (const [attribute, value] of Object.entries(attributes)) {
          if (name === 'a' && attribute === 'href') {
            if (!LINK.test(value.trim())) problems.add('links must be http(s) or mailto addresses');
          } else {
            problems.add(`must not carry HTML attributes such as ${attribute}="…" (only a link's href)`);
          }
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
}

/** Problems with a Markdown description: markup beyond the allowed tags, links of other schemes. */
function descriptionProblems(source: string): string[] {
  const problems = new Set<string>();
  const visit = (token: Token) => {
    if (token.type === 'html') htmlProblems((token as { text: string }).text, problems);
    if (token.type === 'link' || token.type === 'image') {
      if (token.type === 'image') problems.add('must not contain images');
      if (!LINK.test((token as { href: string }).href.trim())) problems.add('links must be http(s) or mailto addresses');
    }
  };
  markdown.walkTokens(markdown.lexer(source), visit);
  return [...problems];
}

/** A description as stored: the maker's Markdown rendered to HTML, then sanitized. */
export function renderDescription(source: string): string {
  return sanitizeDescription(markdown.parse(source, { async: false }));
}

const description = z
  .string({ error: 'description must be text' })
  .trim()
  .max(MAKER_LIMITS.descriptionMax, { error: `description must be at most ${MAKER_LIMITS.descriptionMax} characters` })
  .superRefine((value, ctx) => {
    for (const problem of descriptionProblems(value)) ctx.addIssue({ code: 'custom', message: `description ${problem}` });
  });

const category = z
  .string({ error: 'category must be a category slug' })
  .trim()
  .toLowerCase()
  .regex(SLUG_PATTERN, { error: 'category must be a category slug such as "developer-tools" (see list_categories)' });

const social = z
  .string({ error: 'social must be text' })
  .trim()
  .transform((v) => v.replace(/^@+/, ''))
  .pipe(
    z
      .string()
      .min(1, { error: 'social must not be empty' })
      .max(MAKER_LIMITS.socialMax, { error: `social must be at most ${MAKER_LIMITS.socialMax} characters` })
      .regex(/^[\p{L}\p{N}_.-]+(@[\p{L}\p{N}.-]+)?$/u, { error: 'social must be a handle such as "pixelforge", without spaces, markup or a URL' }),
  );

const tag = z
  .string({ error: 'tags must be text' })
  .trim()
  .toLowerCase()
  .transform((v) => v.replace(/[\s_]+/g, '-'))
  .pipe(
    z
      .string()
      .max(MAKER_LIMITS.tagMax, { error: `a tag must be at most ${MAKER_LIMITS.tagMax} characters` })
      .regex(SLUG_PATTERN, { error: 'tags must be words of lowercase letters and digits joined by hyphens, such as "ai" or "note-taking"' }),
  );

const website = z.string({ error: 'website must be text' }).transform((value, ctx) => {
  const parsed = parseWebsiteInput(value);
  if (parsed.ok) return parsed.url;
  ctx.addIssue({ code: 'custom', message: parsed.message });
  return z.NEVER;
});

const pricingModel = z.enum(pricingModelSchema.options, { error: `pricing_model must be one of ${pricingModelSchema.options.join(', ')}` });
const productType = z.enum(productTypeSchema.options, { error: `product_type must be ${productTypeSchema.options.join(' or ')}` });
const planSchema = z.enum(['free', 'premium'], { error: 'plan must be free or premium' });

/** The editable fields (update_listing and the edit page); the website too (listingChangesSchema). */
export const listingChangesShape = {
  name: plainText('name', MAKER_LIMITS.nameMax),
  punchline: plainText('punchline', MAKER_LIMITS.punchlineMax),
  description,
  category,
  pricing_model: pricingModel,
  social: social.nullable(),
};

/** A submission (submit_product and the submission form). Only the website is required here. */
export const submissionShape = {
  website,
  name: listingChangesShape.name.optional(),
  punchline: listingChangesShape.punchline.optional(),
  description: description.optional(),
  category: category.optional(),
  pricing_model: pricingModel.optional(),
  product_type: productType.optional(),
  social: social.optional(),
  tags: z.array(tag, { error: 'tags must be a list of words' }).max(MAKER_LIMITS.tagsMax, { error: `at most ${MAKER_LIMITS.tagsMax} tags` }).optional(),
  plan: planSchema.optional(),
};

export const submissionSchema = z.strictObject(submissionShape);
export type Submission = z.output<typeof submissionSchema>;

export const listingChangesSchema = z
  .strictObject({
    website: website.optional(),
    name: listingChangesShape.name.optional(),
    punchline: listingChangesShape.punchline.optional(),
    description: listingChangesShape.description.optional(),
    category: listingChangesShape.category.optional(),
    pricing_model: listingChangesShape.pricing_model.optional(),
    social: listingChangesShape.social.optional(),
  })
  .refine((v) => Object.values(v).some((x) => x !== undefined), { error: 'give at least one field to change: website, name, punchline, description, category, pricing_model or social' });
export type ListingChanges = z.output<typeof listingChangesSchema>;

/** One issue per rejected field, its message naming the field. */
export function makerIssues(error: z.ZodError): ValidationIssue[] {
  const byField = new Map<string, ValidationIssue>();
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) byField.set(key, { path: [key], message: `${key} is not a field that can be set here` });
      continue;
    }
    const key = String(issue.path[0] ?? 'request');
    if (!byField.has(key)) byField.set(key, { path: issue.path.length ? issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)) : [key], message: issue.message });
  }
  return [...byField.values()];
}
