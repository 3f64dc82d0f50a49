import type { SearchDocument } from './port.ts';

/**
 * The searchable columns of projection.products, as the projector (feeding an external index)
 * and each API process's mirror (feeding its embedded engine) read them.
 */
export type SearchRow = Omit<SearchDocument, 'listed_at'> & { listed_at: Date | null };

export const SEARCH_COLUMNS = 'id, name, punchline, description_text, category, labels, tags, listed_at';

export function searchDocumentOf(row: SearchRow): SearchDocument {
  return {
    id: row.id,
    name: row.name,
    punchline: row.punchline,
    description_text: row.description_text,
    category: row.category,
    labels: row.labels,
    tags: row.tags,
    listed_at: row.listed_at === null ? null : row.listed_at.getTime(),
  };
}
