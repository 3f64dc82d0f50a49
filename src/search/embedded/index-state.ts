import type { SearchDocument, SearchHits, SearchRequest } from '../port.ts';
import type { EmbeddedSearchOptions } from '../search-settings.ts';
import { documentWords, isOverlong, parseQuery, type TypoSizes } from '../words.ts';
import { andInto, countBits, emptyBits, forEachBit, hasBit } from './bitset.ts';
import { PostingLists } from './posting-lists.ts';
import { Vocabulary } from './vocabulary.ts';

/** Dead slots are squeezed out once they are this many and a quarter of the live ones. */
const COMPACT_MIN_DEAD = 1024;

/**
 * One complete embedded index: documents live in numbered slots; every word and every filter
 * value has a list of the slots holding it; `order` lists the live slots newest first (ties
 * by id), and `rank` gives each slot's place in it, so a page of matches in listing order is a
 * short scan of `order` (many matches) or a sort of the matches' ranks (few matches).
 *
 * An upsert never edits a slot: it retires the old slot and fills a new one. Retired slots are
 * skipped by every read and squeezed out by a compaction once they pile up.
 */
export class IndexState {
  private readonly fields: EmbeddedSearchOptions['searchableFields'];
  private readonly typoSizes: TypoSizes | null;

  private ids: string[] = [];
  private listedAt = new Float64Array(1024);
  private alive = new Uint8Array(1024);
  private readonly slotOf = new Map<string, number>();
  private liveCount = 0;
  private deadCount = 0;

  private readonly vocabulary = new Vocabulary();
  private readonly wordLists = new PostingLists();
  private filterListOf = new Map<string, number>();
  private readonly filterLists = new PostingLists();

  private order = new Int32Array(0);
  private rank = new Int32Array(1024);
  private unordered: number[] = [];

  constructor(options: EmbeddedSearchOptions) {
    this.fields = options.searchableFields;
    this.typoSizes = options.typoSizes;
  }

  get size(): number {
    return this.liveCount;
  }

  /** Adds or replaces documents. With `deferOrder`, call `finish()` before searching. */
  upsert(docs: readonly SearchDocument[], deferOrder = false): void {
    for (const doc of docs) this.put(doc);
    if (!deferOrder) this.finish();
  }

  remove(ids: readonly string[]): void {
    for (const id of ids) {
      const slot = this.slotOf.get(id);
      if (slot !== undefined) this.retire(slot);
    }
    this.finish();
  }

  /** After a bulk load: gives back the slack the growing lists left. */
  trim(): void {
    this.wordLists.trim();
    this.filterLists.trim();
  }

  /** Brings `order` up to date, and compacts when retired slots pile up. */
  finish(): void {
    if (this.deadCount >= COMPACT_MIN_DEAD && this.deadCount * 4 >= this.liveCount) this.compact();
    this.mergeUnordered();
  }

  private put(doc: SearchDocument): void {
    const old = this.slotOf.get(doc.id);
    if (old !== undefined) this.retire(old);
    const slot = this.ids.length;
    this.ensureSlotCapacity(slot + 1);
    this.ids.push(doc.id);
    this.listedAt[slot] = doc.listed_at ?? Number.NEGATIVE_INFINITY;
    this.alive[slot] = 1;
    this.slotOf.set(doc.id, slot);
    this.liveCount++;
    this.unordered.push(slot);

    for (const word of documentWords(this.fields.map((f) => doc[f]))) {
      let list = this.vocabulary.numberOf(word);
      if (list === undefined) {
        list = this.vocabulary.add(word);
        this.wordLists.create();
      }
      this.wordLists.push(list, slot);
    }
    const keys = new Set<string>();
    if (doc.category !== null) keys.add(`category:${doc.category}`);
    for (const l of doc.labels) keys.add(`label:${l}`);
    for (const t of doc.tags) keys.add(`tag:${t}`);
    for (const key of keys) {
      let list = this.filterListOf.get(key);
      if (list === undefined) {
        list = this.filterLists.create();
        this.filterListOf.set(key, list);
      }
      this.filterLists.push(list, slot);
    }
  }

  private retire(slot: number): void {
    this.alive[slot] = 0;
    this.slotOf.delete(this.ids[slot]!);
    this.liveCount--;
    this.deadCount++;
  }

  private ensureSlotCapacity(n: number): void {
    if (n <= this.alive.length) return;
    let capacity = this.alive.length * 2;
    while (capacity < n) capacity *= 2;
    const alive = new Uint8Array(capacity);
    alive.set(this.alive);
    this.alive = alive;
    const listedAt = new Float64Array(capacity);
    listedAt.set(this.listedAt);
    this.listedAt = listedAt;
    const rank = new Int32Array(capacity);
    rank.set(this.rank);
    this.rank = rank;
  }

  /** Newest first, never-listed last, ties by id ascending. */
  private readonly compare = (a: number, b: number): number => {
    const x = this.listedAt[a]!;
    const y = this.listedAt[b]!;
    if (x !== y) return x > y ? -1 : 1;
    const ia = this.ids[a]!;
    const ib = this.ids[b]!;
    return ia < ib ? -1 : ia > ib ? 1 : 0;
  };

  /** Merges the newly filled slots into `order` (dropping retired ones) and renews `rank`. */
  private mergeUnordered(): void {
    const fresh = this.unordered.filter((s) => this.alive[s] === 1).sort(this.compare);
    this.unordered = [];
    const old = this.order;
    const merged = new Int32Array(this.liveCount);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < old.length || j < fresh.length) {
      if (i < old.length && this.alive[old[i]!] !== 1) {
        i++;
        continue;
      }
      if (j >= fresh.length || (i < old.length && this.compare(old[i]!, fresh[j]!) < 0)) merged[k++] = old[i++]!;
      else merged[k++] = fresh[j++]!;
    }
    this.order = merged;
    for (let p = 0; p < merged.length; p++) this.rank[merged[p]!] = p;
  }

  /** Renumbers the live slots densely and drops lists and words left empty. */
  private compact(): void {
    const slots = this.ids.length;
    const remap = new Int32Array(slots).fill(-1);
    const ids: string[] = [];
    const alive = new Uint8Array(Math.max(1024, this.alive.length));
    const listedAt = new Float64Array(alive.length);
    for (let s = 0; s < slots; s++) {
      if (this.alive[s] !== 1) continue;
      const n = ids.length;
      remap[s] = n;
      ids.push(this.ids[s]!);
      alive[n] = 1;
      listedAt[n] = this.listedAt[s]!;
      this.slotOf.set(this.ids[s]!, n);
    }
    const wordRemap = this.wordLists.compact(remap);
    this.vocabulary.retain((n) => wordRemap[n]! >= 0);
    const filterRemap = this.filterLists.compact(remap);
    const filterListOf = new Map<string, number>();
    for (const [key, list] of this.filterListOf) if (filterRemap[list]! >= 0) filterListOf.set(key, filterRemap[list]!);
    this.filterListOf = filterListOf;
    this.order = this.order.map((s) => remap[s]!).filter((s) => s >= 0);
    this.unordered = this.unordered.map((s) => remap[s]!).filter((s) => s >= 0);
    this.ids = ids;
    this.alive = alive;
    this.listedAt = listedAt;
    this.rank = new Int32Array(alive.length);
    this.deadCount = 0;
  }

  search(request: SearchRequest): SearchHits {
    const matches = this.matches(request);
    if (matches === 'none') return { ids: [], total: 0 };
    const { offset, limit } = request;
    if (matches === 'all') {
      return { ids: Array.from(this.order.subarray(offset, offset + limit), (s) => this.ids[s]!), total: this.liveCount };
    }
    const total = countBits(matches);
    const end = Math.min(offset + limit, total);
    if (offset >= end) return { ids: [], total };
    return { ids: this.page(matches, total, offset, end), total };
  }

  /** Every slot matching the request, in listing order. */
  orderedMatches(request: Omit<SearchRequest, 'offset' | 'limit'>): Int32Array {
    const matches = this.matches({ ...request, offset: 0, limit: 0 });
    if (matches === 'none') return new Int32Array(0);
    if (matches === 'all') return this.order.slice();
    const out = new Int32Array(countBits(matches));
    let k = 0;
    for (let p = 0; p < this.order.length && k < out.length; p++) {
      const s = this.order[p]!;
      if (hasBit(matches, s)) out[k++] = s;
    }
    return out;
  }

  idOf(slot: number): string {
    return this.ids[slot]!;
  }

  /** The slot's listing time (ms), -Infinity when never listed. */
  listedAtOf(slot: number): number {
    return this.listedAt[slot]!;
  }

  /** The slots matching every condition of the request, 'all' when it has none. */
  private matches(request: SearchRequest): Uint32Array | 'all' | 'none' {
    let bits: Uint32Array | undefined;
    const filters = [
      request.category === undefined ? undefined : `category:${request.category}`,
      request.label === undefined ? undefined : `label:${request.label}`,
      request.tag === undefined ? undefined : `tag:${request.tag}`,
    ];
    for (const key of filters) {
      if (key === undefined) continue;
      const list = this.filterListOf.get(key);
      if (list === undefined) return 'none';
      const b = emptyBits(this.ids.length);
      this.filterLists.orInto(list, b, this.alive);
      if (bits) andInto(bits, b);
      else bits = b;
    }
    for (const word of parseQuery(request.q, this.typoSizes)) {
      if (isOverlong(word.word)) return 'none';
      const b = emptyBits(this.ids.length);
      let expanded = false;
      this.vocabulary.expand(word.word, word.typos, word.prefix, (list) => {
        expanded = true;
        this.wordLists.orInto(list, b, this.alive);
      });
      if (!expanded) return 'none';
      if (bits) andInto(bits, b);
      else bits = b;
    }
    return bits ?? 'all';
  }

  /** Ids of the matches at places [offset, end) of the listing order. */
  private page(matches: Uint32Array, total: number, offset: number, end: number): string[] {
    const live = this.order.length;
    // Expected cost of walking `order` until `end` matches are met, against sorting all ranks.
    const scanCost = (end * live) / total;
    const sortCost = live / 32 + total * Math.log2(total + 1);
    const ids: string[] = [];
    if (scanCost <= sortCost) {
      let seen = 0;
      for (let p = 0; p < live && seen < end; p++) {
        const s = this.order[p]!;
        if (!hasBit(matches, s)) continue;
        if (seen >= offset) ids.push(this.ids[s]!);
        seen++;
      }
      return ids;
    }
    const ranks = new Int32Array(total);
    let k = 0;
    forEachBit(matches, (s) => {
      ranks[k++] = this.rank[s]!;
    });
    ranks.sort();
    for (let r = offset; r < end; r++) ids.push(this.ids[this.order[ranks[r]!]!]!);
    return ids;
  }
}
