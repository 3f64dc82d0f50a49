import { z } from 'zod';
import { badRequest, issuesFromZod } from '../contract/errors.ts';
import {
  changesParamsSchema,
  productSlugParamSchema,
  SEARCH_LIMITS,
  SLUG_MAX,
  SLUG_PATTERN,
  searchParamsSchema,
  type ChangesQuery,
  type SearchQuery,
} from '../contract/schemas.ts';
import type { ValidationIssue } from '../contract/schemas.ts';

/**
 * Validation of the read parameters, as REST (query string, path) and MCP (tool arguments)
 * give them; one rule for every endpoint and tool: an unknown parameter is rejected and named,
 * so a misspelt one never goes unnoticed. Each throws a 400 CatalogError with one issue per
 * rejected parameter.
 */
export function parseSearchParams(input: unknown): SearchQuery {
  return plainSearchParams(input) ?? parseSearchParamsWithSchema(input);
}

/** The schema's reading of search parameters: every rule, every message. */
export function parseSearchParamsWithSchema(input: unknown): SearchQuery {
  const parsed = searchParamsSchema.safeParse(input ?? {});
  if (!parsed.success) throw badRequest(issuesFromZod(parsed.error));
  const { q, category, label, tag, page, limit } = parsed.data;
  const query: SearchQuery = { page, limit };
  if (q !== undefined) query.q = q;
  if (category !== undefined) query.category = category;
  if (label !== undefined) query.label = label;
  if (tag !== undefined) query.tag = tag;
  return query;
}

/** A page or limit the schema takes: a number, or digits in a query string, within bounds. */
function plainInteger(value: unknown, min: number, max: number): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : Number.NaN;
  return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
}

function plainFilter(value: unknown): string | undefined {
  return typeof value === 'string' && value.length >= 1 && value.length <= SLUG_MAX && SLUG_PATTERN.test(value) ? value : undefined;
}

/**
 * Search parameters that pass the schema, read without it: what nearly every request gives.
 * Undefined as soon as anything is unusual, and the schema then decides (and words the issues).
 * test/unit/read/search-params.test.ts holds this to the schema's answers.
 */
export function parseSearchParamsIfPlain(input: unknown): SearchQuery | undefined {
  return plainSearchParams(input);
}

function plainSearchParams(input: unknown): SearchQuery | undefined {
  if (input === undefined || input === null) return { page: SEARCH_LIMITS.pageDefault, limit: SEARCH_LIMITS.limitDefault };
  if (typeof input !== 'object' || Array.isArray(input)) return undefined;
  let q: string | undefined;
  let category: string | undefined;
  let label: string | undefined;
  let tag: string | undefined;
  let page: number | undefined = SEARCH_LIMITS.pageDefault;
  let limit: number | undefined = SEARCH_LIMITS.limitDefault;
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) return undefined;
    switch (key) {
      case 'q': {
        if (typeof value !== 'string') return undefined;
        q = value.trim().normalize('NFC');
        // Characters outside the BMP take two UTF-16 units: such a q is counted by the schema.
        if (q.length < SEARCH_LIMITS.qMin || q.length > SEARCH_LIMITS.qMax || /[\uD800-\uDFFF]/.test(q)) return undefined;
        break;
      }
      case 'category':
        if ((category = plainFilter(value)) === undefined) return undefined;
        break;
      case 'label':
        if ((label = plainFilter(value)) === undefined) return undefined;
        break;
      case 'tag':
        if ((tag = plainFilter(value)) === undefined) return undefined;
        break;
      case 'page':
        if ((page = plainInteger(value, SEARCH_LIMITS.pageMin, SEARCH_LIMITS.pageMax)) === undefined) return undefined;
        break;
      case 'limit':
        if ((limit = plainInteger(value, SEARCH_LIMITS.limitMin, SEARCH_LIMITS.limitMax)) === undefined) return undefined;
        break;
      default:
        return undefined;
    }
  }
  const query: SearchQuery = { page, limit };
  if (q !== undefined) query.q = q;
  if (category !== undefined) query.category = category;
  if (label !== undefined) query.label = label;
  if (tag !== undefined) query.tag = tag;
  return query;
}

/** A slug that passes the schema as it is: what nearly every call gives, checked without zod. */
function plainSlug(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const { slug } = input as { slug?: unknown };
  if (typeof slug !== 'string' || slug.length < 1 || slug.length > SLUG_MAX) return undefined;
  for (const key in input) if (key !== 'slug') return undefined;
  return slug;
}

/**
 * A path segment that is a well-formed slug as it stands (no escapes, no trailing slash, no
 * query): the slug, else undefined. The direct read path answers only such requests.
 */
export function plainProductSlug(segment: string): string | undefined {
  return segment.length >= 1 && segment.length <= SLUG_MAX && SLUG_PATTERN.test(segment) ? segment : undefined;
}

export function parseProductSlug(input: unknown): string {
  return plainSlug(input) ?? parseProductSlugWithSchema(input);
}

/** The schema's reading of the slug parameter: every rule, every message. */
export function parseProductSlugWithSchema(input: unknown): string {
  const parsed = productSlugParamSchema.safeParse(input ?? {});
  if (!parsed.success) throw badRequest(issuesFromZod(parsed.error));
  return parsed.data.slug;
}

const noParamsSchema = z.strictObject({});

function unknownParams(input: unknown): ValidationIssue[] {
  const parsed = noParamsSchema.safeParse(input ?? {});
  return parsed.success ? [] : issuesFromZod(parsed.error);
}

function hasKeys(input: unknown): boolean {
  if (typeof input !== 'object' || input === null) return input !== undefined;
  for (const _key in input) return true;
  return false;
}

/** For an endpoint or tool that takes no parameter: any parameter given is rejected. */
export function parseNoParams(input: unknown): void {
  if (!hasKeys(input)) return;
  throw badRequest(unknownParams(input));
}

/**
 * GET /products/{slug}: the slug from the path, and a query string that must be empty. Every
 * rejected parameter is named at once, the slug first.
 */
export function parseProductRequest(slug: string, query: unknown): string {
  if (!hasKeys(query)) return parseProductSlug({ slug });
  const issues: ValidationIssue[] = [];
  const parsed = productSlugParamSchema.safeParse({ slug });
  if (!parsed.success) issues.push(...issuesFromZod(parsed.error));
  issues.push(...unknownParams(query));
  throw badRequest(issues);
}

/** GET /changes: since, limit and wait, every rejected parameter named at once. */
export function parseChangesParams(input: unknown): ChangesQuery {
  const parsed = changesParamsSchema.safeParse(input ?? {});
  if (!parsed.success) throw badRequest(issuesFromZod(parsed.error));
  const { since, limit, wait } = parsed.data;
  return since === undefined ? { limit, wait } : { since, limit, wait };
}
