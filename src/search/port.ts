/**
 * The search index port. Two adapters implement it: the embedded in-process engine (default)
 * and Meilisearch (when MEILI_URL is set). One contract test suite runs against both.
 *
 * Semantics both share:
 * - q matches name, punchline and description text (HTML stripped); every query word must
 *   match; the last word also as a prefix; typos tolerated as Meilisearch does by default
 *   (1 typo from 5 letters, 2 from 9);
 * - category, label, tag match slugs exactly and combine with each other and with q;
 * - order is listed_at newest first (null last), ties by id ascending;
 * - total counts every match; offset/limit slice it.
 */
export interface SearchDocument {
  id: string;
  name: string;
  punchline: string;
  /** The description as plain text, HTML stripped and entities decoded. */
  description_text: string;
  category: string | null;
  labels: string[];
  tags: string[];
  /** Milliseconds since the epoch, or null. */
  listed_at: number | null;
}

export interface SearchRequest {
  q?: string;
  category?: string;
  label?: string;
  tag?: string;
  offset: number;
  limit: number;
}

export interface SearchHits {
  /** Product ids of the requested slice, in order. */
  ids: string[];
  /** Matches across every page. */
  total: number;
}

export interface SearchIndex {
  readonly kind: 'embedded' | 'meilisearch';
  /**
   * Names the content this index holds: the same for every handle on one Meilisearch index,
   * unique to each embedded engine (each starts empty). The projector rebuilds an external
   * index whose target differs from the one its search checkpoint recorded.
   */
  readonly target: string;
  search(request: SearchRequest): Promise<SearchHits>;
  /** Adds or replaces documents by id. Resolves once the index confirmed them. */
  upsert(docs: readonly SearchDocument[]): Promise<void>;
  /** Removes documents by id; unknown ids are ignored. */
  remove(ids: readonly string[]): Promise<void>;
  /**
   * Replaces the whole content with the given documents, atomically for readers: a search
   * sees either the old content or the new, never a partial one.
   */
  replaceAll(batches: AsyncIterable<readonly SearchDocument[]>): Promise<void>;
  close(): Promise<void>;
}
