import { badRequest, issuesFromZod } from '../contract/errors.ts';
import { productSlugParamSchema, searchParamsSchema, type SearchQuery } from '../contract/schemas.ts';

/**
 * Validates search parameters as REST (query string) or MCP (tool arguments) give them.
 * Throws a 400 CatalogError with one issue per rejected parameter.
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

export function parseProductSlug(input: unknown): string {
  const parsed = productSlugParamSchema.safeParse(input ?? {});
  if (!parsed.success) throw badRequest(issuesFromZod(parsed.error));
  return parsed.data.slug;
}
