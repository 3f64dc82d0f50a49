import { z } from 'zod';
import { badRequest, issuesFromZod } from '../contract/errors.ts';
import { productSlugParamSchema, SLUG_MAX, searchParamsSchema, type SearchQuery } from '../contract/schemas.ts';
import type { ValidationIssue } from '../contract/schemas.ts';

/**
 * Validation of the read parameters, as REST (query string, path) and MCP (tool arguments)
 * give them; one rule for every endpoint and tool: an unknown parameter is rejected and named,
 * so a misspelt one never goes unnoticed. Each throws a 400 CatalogError with one issue per
 * rejected parameter.
 */
export function parseSearchParams(input: unknown): SearchQuery {
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

/** A slug that passes the schema as it is: what nearly every call gives, checked without zod. */
function plainSlug(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const { slug } = input as { slug?: unknown };
  if (typeof slug !== 'string' || slug.length < 1 || slug.length > SLUG_MAX) return undefined;
  for (const key in input) if (key !== 'slug') return undefined;
  return slug;
}

export function parseProductSlug(input: unknown): string {
  const slug = plainSlug(input);
  if (slug !== undefined) return slug;
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
