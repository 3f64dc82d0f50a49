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
 * Storage: a frozen base (frozen-index.ts: every structure a typed array, documents numbered
 * in listing order) that comes whole from a snapshot (`useSnapshot`) or from `replaceAll`, and
 * beside it the changes since: a small incremental index (index-state.ts) of the documents
 * written after the base, and a bitset of the base positions still live. A search merges the
 * two in listing order. Writes apply synchronously between two reads. replaceAll builds a new
 * base and swaps it in with one assignment; writes that arrive while it builds are applied to
 * both.
 */
import { randomUUID } from 'node:crypto';
import type { SearchDocument, SearchHits, SearchIndex, SearchRequest } from '../port.ts';
import { embeddedOptions, loadSearchSettings, type EmbeddedSearchOptions } from '../search-settings.ts';
import { FrozenIndex } from './frozen-index.ts';
import { IndexState } from './index-state.ts';
import { compareListing, ListingPositions } from './listing-positions.ts';

type Write = { upsert: readonly SearchDocument[] } | { remove: readonly string[] };

/** A frozen base: its documents' positions and its index. */
export interface SearchBase {
  readonly positions: ListingPositions;
  readonly index: FrozenIndex;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Positions in [from, to) set in `bits` and, when given, in `mask`. */
function countRange(bits: Uint32Array, mask: Uint32Array | undefined, from: number, to: number): number {
  if (from >= to) return 0;
  const first = from >>> 5;
  const last = (to - 1) >>> 5;
  const lowMask = ~0 << (from & 31);
  const highMask = (to & 31) === 0 ? ~0 : (1 << (to & 31)) - 1;
  const at = (i: number) => (mask ? bits[i]! & mask[i]! : bits[i]!);
  if (first === last) return popcount(at(first) & lowMask & highMask);
  let n = popcount(at(first) & lowMask);
  for (let i = first + 1; i < last; i++) if (bits[i] !== 0) n += popcount(at(i));
  return n + popcount(at(last) & highMask);
}

/**
 * Calls `visit` with the positions in [from, to) set in `bits` and, when given, in `mask`,
 * ascending, until it returns false.
 */
function visitRange(bits: Uint32Array, mask: Uint32Array | undefined, from: number, to: number, visit: (p: number) => boolean): boolean {
  for (let i = from >>> 5; i <= (to - 1) >>> 5 && from < to; i++) {
    let w = mask ? bits[i]! & mask[i]! : bits[i]!;
    if (i === from >>> 5) w &= ~0 << (from & 31);
    if (i === (to - 1) >>> 5 && (to & 31) !== 0) w &= (1 << (to & 31)) - 1;
    while (w !== 0) {
      const low = w & -w;
      if (!visit((i << 5) + (31 - Math.clz32(low)))) return false;
      w ^= low;
    }
  }
  return true;
}

function allSet(n: number): Uint32Array {
  const bits = new Uint32Array((n + 31) >>> 5).fill(0xffffffff);
  if (n & 31) bits[bits.length - 1] = (1 << (n & 31)) - 1;
  return bits;
}

const NO_BASE: SearchBase = {
  positions: ListingPositions.build([], []),
  index: FrozenIndex.build([], []),
};

export class EmbeddedSearchIndex implements SearchIndex {
  readonly kind = 'embedded' as const;
  readonly target = `embedded:${randomUUID()}`;
  private readonly options: EmbeddedSearchOptions;
  private base: SearchBase = NO_BASE;
  /** Base positions still live (not removed or replaced since). */
  private alive = allSet(0);
  private aliveCount = 0;
  private overlay: IndexState;
  /** Writes seen while replaceAll builds, replayed on the new index before it goes live. */
  private journal: Write[] | undefined;

  constructor(options: EmbeddedSearchOptions = embeddedOptions(loadSearchSettings())) {
    this.options = options;
    this.overlay = new IndexState(options);
  }

  /** The fields searched (a base built elsewhere must index the same). */
  get searchableFields(): EmbeddedSearchOptions['searchableFields'] {
    return this.options.searchableFields;
  }

  /** Live documents. */
  get size(): number {
    return this.aliveCount + this.overlay.size;
  }

  /** Documents written since the base. */
  get changedSinceBase(): number {
    return this.overlay.size + (this.base.positions.count - this.aliveCount);
  }

  /** Builds a frozen base from documents in any order (the last of one id wins). */
  buildBase(docs: Iterable<SearchDocument>): SearchBase {
    const byId = new Map<string, SearchDocument>();
    for (const doc of docs) byId.set(doc.id, doc);
    const sorted = [...byId.values()].sort((a, b) =>
      compareListing(a.listed_at ?? Number.NEGATIVE_INFINITY, a.id, b.listed_at ?? Number.NEGATIVE_INFINITY, b.id),
    );
    return {
      positions: ListingPositions.build(
        sorted.map((d) => d.id),
        sorted.map((d) => d.listed_at ?? Number.NEGATIVE_INFINITY),
      ),
      index: FrozenIndex.build(sorted, this.options.searchableFields),
    };
  }

  /** Replaces the whole content with a frozen base (from a snapshot): no document written since. */
  useBase(base: SearchBase): void {
    if (this.journal) throw new Error('replaceAll is running on this index');
    this.install(base);
  }

  private install(base: SearchBase): void {
    this.base = base;
    this.alive = allSet(base.positions.count);
    this.aliveCount = base.positions.count;
    this.overlay = new IndexState(this.options);
  }

  async search(request: SearchRequest): Promise<SearchHits> {
    return this.searchNow(request);
  }

  searchNow(request: SearchRequest): SearchHits {
    const { positions, index } = this.base;
    // Base positions replaced or removed since the base are left out as the conditions are.
    const found = this.aliveCount === 0 ? 'none' : index.matches(request, this.options.typoSizes, this.aliveCount === positions.count ? undefined : this.alive);
    let matches: Uint32Array | 'none';
    let mask: Uint32Array | undefined;
    let baseTotal = 0;
    if (found === 'all') {
      matches = this.alive;
      baseTotal = this.aliveCount;
    } else if (found === 'none') matches = 'none';
    else {
      matches = found.bits;
      mask = found.mask;
      baseTotal = found.count;
    }
    const changed = this.overlay.size === 0 ? new Int32Array(0) : this.overlay.orderedMatches(request);
    const total = baseTotal + changed.length;
    const { offset } = request;
    const end = Math.min(offset + request.limit, total);
    const ids: string[] = [];
    if (offset >= end) return { ids, total };
    const bits = matches === 'none' ? undefined : matches;
    let k = 0;
    const take = (id: () => string): boolean => {
      if (k >= offset) ids.push(id());
      k++;
      return k < end;
    };
    /** Base matches in [from, to): skipped whole while before the page, else walked. */
    const baseRange = (from: number, to: number): boolean => {
      if (!bits || from >= to) return k < end;
      if (k < offset) {
        const c = countRange(bits, mask, from, to);
        if (k + c <= offset) {
          k += c;
          return true;
        }
      }
      return visitRange(bits, mask, from, to, (p) => take(() => positions.idAt(p)));
    };
    let cursor = 0;
    for (let j = 0; j < changed.length; j++) {
      const slot = changed[j]!;
      const id = this.overlay.idOf(slot);
      const at = positions.insertionPoint(this.overlay.listedAtOf(slot), id);
      if (!baseRange(cursor, at)) return { ids, total };
      cursor = at;
      if (!take(() => id)) return { ids, total };
    }
    baseRange(cursor, positions.count);
    return { ids, total };
  }

  private retireFromBase(id: string): void {
    const p = this.base.positions.positionOf(id);
    if (p < 0) return;
    const word = p >>> 5;
    const bit = 1 << (p & 31);
    if ((this.alive[word]! & bit) === 0) return;
    this.alive[word]! &= ~bit;
    this.aliveCount--;
    this.base.index.retired(p);
  }

  async upsert(docs: readonly SearchDocument[]): Promise<void> {
    for (const doc of docs) this.retireFromBase(doc.id);
    this.overlay.upsert(docs);
    this.journal?.push({ upsert: docs });
  }

  async remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.retireFromBase(id);
    this.overlay.remove(ids);
    this.journal?.push({ remove: ids });
  }

  async replaceAll(batches: AsyncIterable<readonly SearchDocument[]>): Promise<void> {
    if (this.journal) throw new Error('replaceAll is already running on this index');
    this.journal = [];
    try {
      const docs: SearchDocument[] = [];
      for await (const batch of batches) for (const doc of batch) docs.push(doc);
      const base = this.buildBase(docs);
      const journal = this.journal;
      this.install(base);
      for (const write of journal) {
        if ('upsert' in write) {
          for (const doc of write.upsert) this.retireFromBase(doc.id);
          this.overlay.upsert(write.upsert);
        } else {
          for (const id of write.remove) this.retireFromBase(id);
          this.overlay.remove(write.remove);
        }
      }
    } finally {
      this.journal = undefined;
    }
  }

  async close(): Promise<void> {
    this.install(NO_BASE);
  }
}
