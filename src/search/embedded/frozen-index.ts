import type { SearchDocument } from '../port.ts';
import { documentWords, type TypoSizes, isOverlong, parseQuery } from '../words.ts';
import { countBits, intersectCount } from './bitset.ts';
import { PostingLists } from './posting-lists.ts';
import { PostingStore } from './posting-store.ts';
import { codePoints, ExpansionCache, HAS_SURROGATE } from './expansions.ts';
import { SortedWords } from './sorted-words.ts';
import { matchesWithin } from './typo-distance.ts';

/**
 * Condition bitsets a frozen index keeps for later searches (see condition()): room for
 * REMEMBERED_CONDITIONS of them whatever the catalog's size (a bitset holds a bit per document:
 * 106 KB at a million), and never less than REMEMBERED_MIN_BYTES.
 */
const REMEMBERED_CONDITIONS = 512;
const REMEMBERED_MIN_BYTES = 16 * 1024 * 1024;

/** The typed arrays of a frozen index, as stored in a snapshot (see src/read/snapshot.ts). */
export interface FrozenIndexArrays {
  positions: number;
  /** Words without surrogates, sorted; their numbers are 0..count-1 in that order. */
  wordChars: Uint16Array;
  wordStarts: Uint32Array;
  /** Words with surrogates, numbered after the sorted ones, checked one by one. */
  astralChars: Uint16Array;
  astralStarts: Uint32Array;
  wordPostStart: Uint32Array;
  wordPostings: Int32Array;
  wordDenseOf: Int32Array;
  wordBitsets: Uint32Array;
  /** Filter keys (`category:…`, `label:…`, `tag:…`), sorted, and their lists. */
  filterChars: Uint16Array;
  filterStarts: Uint32Array;
  filterPostStart: Uint32Array;
  filterPostings: Int32Array;
  filterDenseOf: Int32Array;
  filterBitsets: Uint32Array;
}

function iota(n: number, from = 0): Int32Array {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = from + i;
  return a;
}

/**
 * An embedded search index that never changes: documents are positions 0..n-1 in listing
 * order (newest first, never-listed last, ties by id), so the matches of a query, as a bitset
 * over positions, are already in the order a page lists them. Every structure is a typed
 * array: built once (by the projector for a snapshot, or by a process that found none) and
 * then loaded as views over the snapshot's bytes. Changes after it are kept beside it (see
 * embedded-search-index.ts).
 */
export class FrozenIndex {
  readonly positions: number;
  private readonly sorted: SortedWords;
  private readonly astral: SortedWords;
  private readonly words: PostingStore;
  private readonly filterKeys: SortedWords;
  private readonly filters: PostingStore;
  private readonly expansions = new ExpansionCache();

  constructor(readonly arrays: FrozenIndexArrays) {
    const a = arrays;
    this.positions = a.positions;
    const sortedCount = a.wordStarts.length - 1;
    this.sorted = new SortedWords(a.wordChars, a.wordStarts, iota(sortedCount));
    this.astral = new SortedWords(a.astralChars, a.astralStarts, iota(a.astralStarts.length - 1, sortedCount));
    this.words = new PostingStore(a.positions, a.wordPostStart, a.wordPostings, a.wordDenseOf, a.wordBitsets);
    this.filterKeys = new SortedWords(a.filterChars, a.filterStarts, iota(a.filterStarts.length - 1));
    this.filters = new PostingStore(a.positions, a.filterPostStart, a.filterPostings, a.filterDenseOf, a.filterBitsets);
  }

  /** Builds the index of documents given in listing order (document i at position i). */
  static build(docs: Iterable<SearchDocument>, fields: readonly (keyof SearchDocument)[]): FrozenIndex {
    const builder = new FrozenIndexBuilder(fields);
    for (const doc of docs) builder.add(doc);
    return builder.finish();
  }

  /** Number of distinct words. */
  get vocabularySize(): number {
    return this.words.count;
  }

  /** Sets the bits of the positions holding the filter key (`category:x`, …); false when no document has it. */
  orFilter(key: string, bits: Uint32Array): boolean {
    const k = this.filterKeys.indexOf(key);
    if (k < 0) return false;
    this.filters.orInto(k, bits);
    return true;
  }

  /** Sets the bits of the positions holding a word the query word matches; false when it matches no word. */
  orWord(word: string, typos: number, prefix: boolean, bits: Uint32Array): boolean {
    let any = false;
    this.expand(word, typos, prefix, (n) => {
      any = true;
      this.words.orInto(n, bits);
    });
    return any;
  }

  private wordOf(n: number): string {
    const sortedCount = this.sorted.count;
    return n < sortedCount ? this.sorted.wordAt(n) : this.astral.wordAt(n - sortedCount);
  }

  private expand(query: string, allowed: number, prefix: boolean, visit: (n: number) => void): void {
    if (query.length === 0) return;
    if (allowed === 0 && !prefix) {
      const list = HAS_SURROGATE.test(query) ? this.astral : this.sorted;
      const i = list.indexOf(query);
      if (i >= 0) visit(list.numbers[i]!);
      return;
    }
    this.expansions.visit(
      query,
      allowed,
      prefix,
      (push) => {
        const q = codePoints(query);
        const checkOneByOne = (n: number) => {
          if (matchesWithin(q, codePoints(this.wordOf(n)), prefix, allowed)) push(n);
        };
        if (HAS_SURROGATE.test(query)) {
          // A query word outside the sorted walk's reach: check every word.
          for (let n = 0; n < this.words.count; n++) checkOneByOne(n);
          return;
        }
        if (allowed === 0) this.sorted.visitBeginningWith(query, push);
        else this.sorted.walk(query, allowed, prefix, push);
        for (let i = 0; i < this.astral.count; i++) checkOneByOne(this.astral.numbers[i]!);
      },
      visit,
    );
  }

  /** A bitset over every position, reused by every search (searches run one at a time). */
  private scratch: Uint32Array | undefined;

  /**
   * The positions matching the query and filters, and also in `within` when given (the base
   * positions still live, which lose bits only as `retired()` is told), with their number; or
   * 'all' when the request has no condition, 'none' when a condition matches nothing. The
   * positions are `bits` where `mask` (when given) is set too; both are read-only and valid until
   * the next call. A single condition comes back as it is kept, with `within` as its mask and its
   * count kept up to date by `retired()`: no pass over every position, as several conditions need.
   */
  matches(
    request: { q?: string; category?: string; label?: string; tag?: string },
    typoSizes: TypoSizes | null,
    within?: Uint32Array,
  ): { bits: Uint32Array; mask?: Uint32Array; count: number } | 'all' | 'none' {
    const conditions: Uint32Array[] = [];
    for (const key of filterKeysOf(request)) {
      const bits = this.condition(`f${key}`, (into) => this.orFilter(key, into));
      if (!bits) return 'none';
      conditions.push(bits);
    }
    for (const word of parseQuery(request.q, typoSizes)) {
      if (isOverlong(word.word)) return 'none';
      const bits = this.condition(`${word.typos}${word.prefix ? 'p' : 'w'}${word.word}`, (into) => this.orWord(word.word, word.typos, word.prefix, into));
      if (!bits) return 'none';
      conditions.push(bits);
    }
    if (conditions.length === 0) return 'all';
    this.scratch ??= new Uint32Array((this.positions + 31) >>> 5);
    if (conditions.length === 1) {
      const only = conditions[0]!;
      let count = this.liveCounts.get(only);
      if (count === undefined) {
        count = within ? intersectCount(this.scratch, [only, within]) : countBits(only);
        this.liveCounts.set(only, count);
      }
      return { bits: only, ...(within && { mask: within }), count };
    }
    if (within) conditions.push(within);
    // One pass over the words of every condition, counting as it goes.
    const count = intersectCount(this.scratch, conditions);
    return { bits: this.scratch, count };
  }

  /**
   * Base position `p` is no longer live (it was set in the `within` given so far, and is clear in
   * every later one): kept single-condition counts that hold it drop by one.
   */
  retired(p: number): void {
    const word = p >>> 5;
    const bit = 1 << (p & 31);
    for (const [bits, count] of this.liveCounts) if ((bits[word]! & bit) !== 0) this.liveCounts.set(bits, count - 1);
  }

  /** Live positions of each kept condition, for the conditions a search used alone. */
  private readonly liveCounts = new Map<Uint32Array, number>();

  /**
   * The positions of one condition (a filter value, or a query word with all its expansions),
   * kept for the next search that has it: a common word's expansion may OR dozens of lists.
   * At most `rememberedBudget` bytes of them, least recently used first out.
   */
  private readonly rememberedBits = new Map<string, Uint32Array | null>();
  private rememberedBytes = 0;
  private get rememberedBudget(): number {
    return Math.max(REMEMBERED_MIN_BYTES, REMEMBERED_CONDITIONS * ((this.positions + 31) >>> 5) * 4);
  }

  /** A condition's positions (never to be changed: they may be kept), or undefined when it matches nothing. */
  private condition(key: string, fill: (into: Uint32Array) => boolean): Uint32Array | undefined {
    const known = this.rememberedBits.get(key);
    if (known !== undefined) {
      this.rememberedBits.delete(key);
      this.rememberedBits.set(key, known);
      return known ?? undefined;
    }
    const bits = new Uint32Array((this.positions + 31) >>> 5);
    const found = fill(bits);
    // Always kept: the budget holds hundreds of bitsets, the oldest go to make room.
    const bytes = found ? bits.byteLength : 64;
    for (const [oldest, kept] of this.rememberedBits) {
      if (this.rememberedBytes + bytes <= this.rememberedBudget) break;
      this.rememberedBits.delete(oldest);
      this.rememberedBytes -= kept ? kept.byteLength : 64;
      if (kept) this.liveCounts.delete(kept);
    }
    this.rememberedBits.set(key, found ? bits : null);
    this.rememberedBytes += bytes;
    return found ? bits : undefined;
  }
}

/** The filter keys a request names. */
function filterKeysOf(request: { category?: string; label?: string; tag?: string }): string[] {
  const keys: string[] = [];
  if (request.category !== undefined) keys.push(`category:${request.category}`);
  if (request.label !== undefined) keys.push(`label:${request.label}`);
  if (request.tag !== undefined) keys.push(`tag:${request.tag}`);
  return keys;
}

/** The filter keys of a document. */
function documentFilterKeys(doc: Pick<SearchDocument, 'category' | 'labels' | 'tags'>): Set<string> {
  const keys = new Set<string>();
  if (doc.category !== null) keys.add(`category:${doc.category}`);
  for (const l of doc.labels) keys.add(`label:${l}`);
  for (const t of doc.tags) keys.add(`tag:${t}`);
  return keys;
}

/** Sorts strings in code unit order and packs them; returns the packed list and each string's sorted place. */
function packSorted(strings: readonly string[]): { packed: SortedWords; placeOf: Int32Array } {
  const order = iota(strings.length);
  order.sort((a, b) => (strings[a]! < strings[b]! ? -1 : strings[a]! > strings[b]! ? 1 : 0));
  const placeOf = new Int32Array(strings.length);
  for (let i = 0; i < order.length; i++) placeOf[order[i]!] = i;
  const packed = SortedWords.fromSorted(
    Array.from(order, (k) => strings[k]!),
    iota(strings.length),
  );
  return { packed, placeOf };
}

/** Builds a FrozenIndex one document at a time, in listing order. */
export class FrozenIndexBuilder {
  private readonly wordNumbers = new Map<string, number>();
  private readonly wordList: string[] = [];
  private readonly wordLists = new PostingLists();
  private readonly filterNumbers = new Map<string, number>();
  private readonly filterList: string[] = [];
  private readonly filterLists = new PostingLists();
  private position = 0;

  constructor(private readonly fields: readonly (keyof SearchDocument)[]) {}

  add(doc: SearchDocument): void {
    const p = this.position++;
    for (const word of documentWords(this.fields.map((f) => doc[f] as string))) {
      let n = this.wordNumbers.get(word);
      if (n === undefined) {
        n = this.wordList.length;
        this.wordList.push(word);
        this.wordNumbers.set(word, n);
        this.wordLists.create();
      }
      this.wordLists.push(n, p);
    }
    for (const key of documentFilterKeys(doc)) {
      let n = this.filterNumbers.get(key);
      if (n === undefined) {
        n = this.filterList.length;
        this.filterList.push(key);
        this.filterNumbers.set(key, n);
        this.filterLists.create();
      }
      this.filterLists.push(n, p);
    }
  }

  finish(): FrozenIndex {
    const positions = this.position;
    const plain: number[] = [];
    const astral: number[] = [];
    for (let n = 0; n < this.wordList.length; n++) (HAS_SURROGATE.test(this.wordList[n]!) ? astral : plain).push(n);
    const plainWords = plain.map((n) => this.wordList[n]!);
    const { packed: sorted, placeOf } = packSorted(plainWords);
    const { packed: astralPacked, placeOf: astralPlace } = packSorted(astral.map((n) => this.wordList[n]!));
    // Final numbering: sorted plain words first, then the sorted astral ones.
    const order = new Int32Array(this.wordList.length);
    for (let i = 0; i < plain.length; i++) order[placeOf[i]!] = plain[i]!;
    for (let i = 0; i < astral.length; i++) order[plain.length + astralPlace[i]!] = astral[i]!;
    const words = PostingStore.freeze(this.wordLists, order, positions);

    const { packed: filterKeys, placeOf: filterPlace } = packSorted(this.filterList);
    const filterOrder = new Int32Array(this.filterList.length);
    for (let i = 0; i < this.filterList.length; i++) filterOrder[filterPlace[i]!] = i;
    const filters = PostingStore.freeze(this.filterLists, filterOrder, positions);

    return new FrozenIndex({
      positions,
      wordChars: sorted.chars,
      wordStarts: sorted.starts,
      astralChars: astralPacked.chars,
      astralStarts: astralPacked.starts,
      wordPostStart: words.postStart,
      wordPostings: words.postings,
      wordDenseOf: words.denseOf,
      wordBitsets: words.bitsets,
      filterChars: filterKeys.chars,
      filterStarts: filterKeys.starts,
      filterPostStart: filters.postStart,
      filterPostings: filters.postings,
      filterDenseOf: filters.denseOf,
      filterBitsets: filters.bitsets,
    });
  }
}
