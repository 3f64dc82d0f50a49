import { z } from 'zod';

/**
 * The public objects of the catalog, in one place. The same schemas shape the
 * documents the projector stores, produce the OpenAPI document, and are the MCP tools' schemas.
 * Every object is strict: no field beyond the spec, ever.
 */

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SLUG_MAX = 200;

export const productTypeSchema = z.enum(['software', 'digital_product']);
export const pricingModelSchema = z.enum(['free', 'freemium', 'paid', 'open_source']);

const isoDateTimeZ = z.iso.datetime({ offset: false }).describe('ISO 8601 date-time in UTC, ending in Z');
const isoDate = z.iso.date().describe('yyyy-mm-dd');

export const faqItemSchema = z
  .strictObject({
    question: z.string(),
    answer: z.string(),
  })
  .meta({ id: 'FaqItem', title: 'FaqItem' });

export const promoSchema = z
  .strictObject({
    code: z.string(),
    discount: z.string().describe("the offer in the maker's words"),
    url: z.url().nullable().describe("where to redeem; null means the product's own site"),
    expires_at: isoDate.nullable().describe('last valid day (UTC); null means open-ended'),
  })
  .meta({ id: 'Promo', title: 'Promo' });

export const productSchema = z
  .strictObject({
    id: z.uuid(),
    slug: z.string().describe('slug used in the listing URL'),
    name: z.string(),
    punchline: z.string().describe('one-line tagline'),
    description: z.string().describe('HTML as the listing page renders it'),
    url: z.url().describe('the listing page in the directory; link it wherever the listing is shown'),
    website: z.string().describe("the product's own site"),
    logo: z.url().nullable(),
    cover: z.url().nullable(),
    category: z.string().nullable().describe('category slug'),
    labels: z.array(z.string()).describe('label slugs'),
    tags: z.array(z.string()).describe('tag slugs'),
    product_type: productTypeSchema.nullable(),
    pricing_model: pricingModelSchema.nullable(),
    social: z.string().nullable().describe("the maker's social network handle, without the leading @"),
    featured: z.boolean(),
    listed_at: isoDateTimeZ.nullable().describe('when the listing went live'),
    highlights: z.array(z.string()).describe('premium profile: what it does, one fact per line'),
    ideal_for: z.array(z.string()).describe('premium profile: who it is for'),
    faq: z.array(faqItemSchema).describe("premium profile: questions answered from the product's site"),
    promo: promoSchema.nullable().describe("the maker's promo code for visitors, or null"),
  })
  .meta({ id: 'Product', title: 'Product' });

export const categorySchema = z
  .strictObject({
    slug: z.string(),
    name: z.string(),
    noun: z.string().describe('what the directory calls listings in this category'),
    url: z.url(),
    count: z.number().int().min(0).describe('live listings in the category'),
  })
  .meta({ id: 'Category', title: 'Category' });

export const searchResultSchema = z
  .strictObject({
    products: z.array(productSchema),
    total: z.number().int().min(0).describe('matches across every page'),
    page: z.number().int().min(1).max(500),
    limit: z.number().int().min(1).max(50),
  })
  .meta({ id: 'SearchResult', title: 'SearchResult' });

export const categoryListSchema = z
  .strictObject({
    categories: z.array(categorySchema),
  })
  .meta({ id: 'CategoryList', title: 'CategoryList' });

export const validationIssueSchema = z
  .strictObject({
    path: z.array(z.union([z.string(), z.number()])).describe('the rejected parameter, e.g. ["limit"]'),
    message: z.string(),
  })
  .meta({ id: 'ValidationIssue', title: 'ValidationIssue' });

export const errorSchema = z
  .strictObject({
    code: z.string(),
    message: z.string(),
    data: z.strictObject({ issues: z.array(validationIssueSchema) }).optional(),
  })
  .meta({ id: 'Error', title: 'Error' });

/** A position in the change feed: opaque to clients (docs/api.md: "Export and change feed"). */
export const CURSOR_PATTERN = /^([0-9a-f]{8})-(0|[1-9][0-9]{0,14})$/;
const cursorSchema = z.string().describe('a position in the change feed; opaque');

export const changeSchema = z
  .strictObject({
    cursor: cursorSchema.describe('the position of this change; continuing from it skips the changes before it'),
    op: z.enum(['upsert', 'delete']).describe('upsert: the listing is live and reads as `product`; delete: no live listing has the slug any more'),
    slug: z.string().describe('the slug the change is about'),
    product: productSchema.nullable().describe('the Product as GET /products/{slug} now answers it (upsert); null on a delete'),
  })
  .meta({ id: 'Change', title: 'Change' });

export const changePageSchema = z
  .strictObject({
    changes: z.array(changeSchema).describe('oldest first'),
    cursor: cursorSchema.describe('where to continue: pass it as `since` in the next request'),
  })
  .meta({ id: 'ChangePage', title: 'ChangePage' });

export type Product = z.infer<typeof productSchema>;
export type Category = z.infer<typeof categorySchema>;
export type SearchResult = z.infer<typeof searchResultSchema>;
export type ErrorBody = z.infer<typeof errorSchema>;
export type ValidationIssue = z.infer<typeof validationIssueSchema>;

// ---- request parameters: their bounds are the public API's limits ----

export const SEARCH_LIMITS = {
  qMin: 2,
  qMax: 100,
  pageMin: 1,
  pageMax: 500,
  pageDefault: 1,
  limitMin: 1,
  limitMax: 50,
  limitDefault: 20,
} as const;

const SINGLE_TEXT = { error: 'must be a single text value' } as const;

/** An integer given as a string (query strings) or a number (MCP arguments). */
function integerParam(min: number, max: number, fallback: number) {
  return z.unknown().optional().transform((v, ctx) => {
    if (v === undefined) return fallback;
    if (Array.isArray(v)) {
      ctx.addIssue({ code: 'custom', message: 'must be given once' });
      return z.NEVER;
    }
    // Digits only in a query string ("+2", " 2" and "1e1" are not page numbers)
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : Number.NaN;
    if (!Number.isInteger(n)) {
      ctx.addIssue({ code: 'custom', message: 'must be an integer' });
      return z.NEVER;
    }
    if (n < min || n > max) {
      ctx.addIssue({ code: 'custom', message: `must be between ${min} and ${max}` });
      return z.NEVER;
    }
    return n;
  });
}

const filterSlug = (what: string) =>
  z
    .string(SINGLE_TEXT)
    .min(1, { error: `must be a ${what} slug` })
    .max(SLUG_MAX, { error: `must be at most ${SLUG_MAX} characters` })
    .regex(SLUG_PATTERN, { error: `must be a ${what} slug: lowercase letters, digits and single hyphens` });

/**
 * Search parameters as the REST query string and the MCP tool receive them. Unknown keys are
 * rejected: a misspelt filter must not silently return the whole catalog.
 */
export const searchParamsSchema = z.strictObject({
  // Surrounding spaces are not part of the query ("  " is no 2-character search), and characters
  // are counted composed ("a" plus a combining accent is one). Any characters are allowed: a
  // query of symbols alone names no word, and the read service answers it with no match.
  q: z
    .string(SINGLE_TEXT)
    .trim()
    .normalize('NFC')
    // Counted in characters (code points), as JSON Schema's minLength and maxLength count them:
    // an emoji is one character, not two UTF-16 units.
    .refine((v) => {
      const n = [...v].length;
      return n >= SEARCH_LIMITS.qMin && n <= SEARCH_LIMITS.qMax;
    }, { error: `must be ${SEARCH_LIMITS.qMin} to ${SEARCH_LIMITS.qMax} characters` })
    .meta({ minLength: SEARCH_LIMITS.qMin, maxLength: SEARCH_LIMITS.qMax })
    .optional()
    .describe('full-text over name, tagline and description; 2 to 100 characters'),
  category: filterSlug('category').optional().describe('category slug'),
  label: filterSlug('label').optional().describe('label slug'),
  tag: filterSlug('tag').optional().describe('tag slug'),
  page: integerParam(SEARCH_LIMITS.pageMin, SEARCH_LIMITS.pageMax, SEARCH_LIMITS.pageDefault).describe('1 to 500, default 1'),
  limit: integerParam(SEARCH_LIMITS.limitMin, SEARCH_LIMITS.limitMax, SEARCH_LIMITS.limitDefault).describe(
    'products per page; 1 to 50, default 20',
  ),
});

/** Normalized search parameters: defaults applied, every value validated. */
export interface SearchQuery {
  q?: string;
  category?: string;
  label?: string;
  tag?: string;
  page: number;
  limit: number;
}

export const CHANGES_LIMITS = {
  limitMin: 1,
  limitMax: 1000,
  limitDefault: 100,
  waitMin: 0,
  waitMax: 30,
  waitDefault: 0,
} as const;

/** GET /changes: unknown keys are rejected, as on every endpoint. */
export const changesParamsSchema = z.strictObject({
  since: z
    .string(SINGLE_TEXT)
    .regex(CURSOR_PATTERN, { error: "must be a cursor the feed gave: a change's or a page's `cursor`, or the export's Catalog-Cursor header" })
    .optional()
    .describe('the cursor to continue from'),
  limit: integerParam(CHANGES_LIMITS.limitMin, CHANGES_LIMITS.limitMax, CHANGES_LIMITS.limitDefault).describe('changes per answer; 1 to 1000, default 100'),
  wait: integerParam(CHANGES_LIMITS.waitMin, CHANGES_LIMITS.waitMax, CHANGES_LIMITS.waitDefault).describe(
    'seconds to hold the request open while nothing is new; 0 to 30, default 0',
  ),
});

export interface ChangesQuery {
  since?: string;
  limit: number;
  wait: number;
}

export const productSlugParamSchema = z.strictObject({
  slug: z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be text') })
    .min(1, { error: `must be 1 to ${SLUG_MAX} characters` })
    .max(SLUG_MAX, { error: `must be 1 to ${SLUG_MAX} characters` }),
});

/** Error codes of the public error object. */
export const ErrorCode = {
  BAD_REQUEST: 'BAD_REQUEST',
  NOT_FOUND: 'NOT_FOUND',
  TOO_MANY_REQUESTS: 'TOO_MANY_REQUESTS',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
  /** A write (maker tool, form) while the database cannot be reached: retry in a few seconds. */
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  /** The maker tools: the request conflicts with the listing's state (a rejected listing edited…). */
  CONFLICT: 'CONFLICT',
  /** A maker tool called without sign-in, or without the scopes it needs. */
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  /** The change feed no longer holds what follows this cursor: export again. */
  CURSOR_EXPIRED: 'CURSOR_EXPIRED',
  /** A consumer key that is malformed, unknown, revoked or expired (401). */
  INVALID_KEY: 'INVALID_KEY',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
