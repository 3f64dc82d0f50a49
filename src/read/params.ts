import { badRequest, issuesFromZod } from '../contract/errors.ts';
import { productSlugParamSchema, searchParamsSchema, type SearchQuery } from '../contract/schemas.ts';

/** A letter or digit: what a search word is made of (see src/search/words.ts). */
const HAS_WORD = /[\p{L}\p{N}]/u;

/**
 * Validates search parameters as REST (query string) or MCP (tool arguments) give them.
 * Throws a 400 CatalogError with one issue per rejected parameter.
 */
export function parseSearchParams(input: unknown): SearchQuery {
  const parsed = searchParamsSchema.safeParse(input ?? {});
  if (!parsed.success) throw badRequest(issuesFromZod(parsed.error));
  const { q, category, label, tag, page, limit } = parsed.data;
  // A query of punctuation or symbols alone names no word: searching it would return the whole
  // catalog, which is never what the caller meant.
  if (q !== undefined && !HAS_WORD.test(q)) {
    throw badRequest([{ path: ['q'], message: 'must contain at least one letter or digit' }]);
  }
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
