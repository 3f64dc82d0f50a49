import type { SearchRequest } from '../port.ts';

/** A filter value as a double-quoted Meilisearch string: `\` and `"` escaped, nothing else can break out. */
export function quoteFilterValue(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** The request's filters as Meilisearch filter expressions, combined with AND (array form). */
export function filterExpressions(request: Pick<SearchRequest, 'category' | 'label' | 'tag'>): string[] {
  const filters: string[] = [];
  if (request.category !== undefined) filters.push(`category = ${quoteFilterValue(request.category)}`);
  if (request.label !== undefined) filters.push(`labels = ${quoteFilterValue(request.label)}`);
  if (request.tag !== undefined) filters.push(`tags = ${quoteFilterValue(request.tag)}`);
  return filters;
}
