/**
 * The embedded search engine: an in-process index, one per API process, answering with the
 * same matches, order and totals as the Meilisearch adapter.
 *
 * Matching rules (Meilisearch 1.x defaults with matchingStrategy "all"; words come from
 * ../words.ts, which normalizes as Meilisearch does: NFKD, lowercase, æ/œ → ae/oe, combining
 * marks removed, a word is a run of letters and digits):
 * - A document matches when every query word matches some word of its searchable fields
 *   (search-config/meilisearch.json: name, punchline, description_text). Only the first ten
 *   query words count; a query without any word matches every document.
 * - A query word tolerates typos by its length in characters: 0 typos up to 4, 1 typo from 5,
 *   2 typos from 9 (minWordSizeForTypos in the config). Distance is the optimal string
 *   alignment distance: an insertion, deletion, substitution, or transposition of two adjacent
 *   characters each counts one typo (Meilisearch's Levenshtein automata with transpositions).
 * - A typo on the first character counts two: with a one-typo allowance the candidate must
 *   start with the query word's first character; with a two-typo allowance a candidate starting
 *   with another character may carry one typo in all.
 * - The last query word also matches the beginning of longer words, typos included: some
 *   beginning of the candidate must lie within the allowance (e.g. `keybaord` matches
 *   `keyboards`). It is not a prefix when the query ends with a separator (`web `) or has more
 *   than ten words, as in Meilisearch.
 * - Query words longer than 250 bytes match nothing; document words longer than that are not
 *   indexed.
 * - Filters (category, label, tag) match slugs exactly and combine with each other and with q.
 * - Order: listed_at newest first, documents never listed last, ties by id ascending; never
 *   relevance. `total` counts every match.
 *
 * Where parity with Meilisearch is not attempted:
 * - Meilisearch also matches two adjacent query words against their concatenation
 *   (`note book` finds `notebook`) and a query word against a split pair of document words
 *   (`notebook` finds `note book`); this engine does neither.
 * - Meilisearch stops expanding a word after 50 prefix derivations (for beginnings of five
 *   letters or more), 150 one-typo and 50 two-typo derivations; this engine expands them all,
 *   so on a large vocabulary Meilisearch can match fewer documents.
 * - Segmentation follows Meilisearch for Latin text only: Meilisearch splits camelCase words,
 *   keeps some symbols (`+`, `$`) as words, segments Chinese, Japanese, Thai and Korean with
 *   dictionaries, and only strips marks in some scripts; here every non-letter, non-digit
 *   character separates words and a run of CJK letters is one word. The Meilisearch adapter
 *   sends the query words parsed here, so quoting (phrase search) and `-word` (negation) are
 *   plain words for both adapters.
 *
 * Writes apply synchronously between two reads. replaceAll builds a separate index and swaps it
 * in with one assignment; writes that arrive while it builds are applied to both.
 */
import { randomUUID } from 'node:crypto';
import type { SearchDocument, SearchHits, SearchIndex, SearchRequest } from '../port.ts';
import { embeddedOptions, loadSearchSettings, type EmbeddedSearchOptions } from '../search-settings.ts';
import { IndexState } from './index-state.ts';

type Write = { upsert: readonly SearchDocument[] } | { remove: readonly string[] };

export class EmbeddedSearchIndex implements SearchIndex {
  readonly kind = 'embedded' as const;
  readonly target = `embedded:${randomUUID()}`;
  private readonly options: EmbeddedSearchOptions;
  private state: IndexState;
  /** Writes seen while replaceAll builds, replayed on the new index before it goes live. */
  private journal: Write[] | undefined;

  constructor(options: EmbeddedSearchOptions = embeddedOptions(loadSearchSettings())) {
    this.options = options;
    this.state = new IndexState(options);
  }

  /** Live documents. */
  get size(): number {
    return this.state.size;
  }

  async search(request: SearchRequest): Promise<SearchHits> {
    return this.state.search(request);
  }

  async upsert(docs: readonly SearchDocument[]): Promise<void> {
    this.state.upsert(docs);
    this.journal?.push({ upsert: docs });
  }

  async remove(ids: readonly string[]): Promise<void> {
    this.state.remove(ids);
    this.journal?.push({ remove: ids });
  }

  async replaceAll(batches: AsyncIterable<readonly SearchDocument[]>): Promise<void> {
    if (this.journal) throw new Error('replaceAll is already running on this index');
    const next = new IndexState(this.options);
    this.journal = [];
    try {
      for await (const batch of batches) next.upsert(batch, true);
      next.finish();
      next.trim();
      for (const write of this.journal) {
        if ('upsert' in write) next.upsert(write.upsert);
        else next.remove(write.remove);
      }
      this.state = next;
    } finally {
      this.journal = undefined;
    }
  }

  async close(): Promise<void> {
    this.state = new IndexState(this.options);
  }
}
