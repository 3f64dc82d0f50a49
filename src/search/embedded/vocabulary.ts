import { matchesWithin, typoBudget } from './typo-distance.ts';

/** Recently added words are checked one by one until this many wait; then they are merged in. */
const PENDING_LIMIT = 2048;
/** A search merges the pending words first when more than this many wait. */
const PENDING_SEARCH_LIMIT = 16;

const HAS_SURROGATE = /[\uD800-\uDFFF]/;
/** Bounds on remembered expansions: how many, and how many word numbers in all (4 bytes each). */
const MAX_CACHED_EXPANSIONS = 4096;
const MAX_CACHED_NUMBERS = 1 << 21;

function codePoints(word: string): number[] {
  return Array.from(word, (c) => c.codePointAt(0)!);
}

/**
 * Every indexed word, numbered, and the typo-tolerant expansion of a query word into the
 * numbers of the indexed words it matches.
 *
 * The words are kept sorted, which makes the sorted list a trie without nodes: walking it in
 * order, a word shares the distance rows of its common beginning with the previous word, and
 * when a beginning is already beyond the typo budget every word sharing it is skipped with one
 * binary search. New words wait in a small pending list (checked one by one) until enough of
 * them are merged in one pass. Words with characters outside the Basic Multilingual Plane are
 * rare and are always checked one by one, on code points.
 */
export class Vocabulary {
  private readonly numbers = new Map<string, number>();
  private readonly words: string[] = [];
  private sortedWords: string[] = [];
  private sortedNumbers: number[] = [];
  private pending: number[] = [];
  private astral: number[] = [];
  /**
   * Expansions already computed, by (typos, prefix, query word). Searches repeat their words
   * far more often than the vocabulary changes; any new word (or a renumbering) clears it.
   */
  private readonly expansions = new Map<string, Int32Array>();
  private cachedNumbers = 0;

  get size(): number {
    return this.numbers.size;
  }

  numberOf(word: string): number | undefined {
    return this.numbers.get(word);
  }

  /** The word's number, adding the word when new. */
  add(word: string): number {
    let n = this.numbers.get(word);
    if (n !== undefined) return n;
    n = this.words.length;
    this.words.push(word);
    this.numbers.set(word, n);
    this.forgetExpansions();
    if (HAS_SURROGATE.test(word)) this.astral.push(n);
    else {
      this.pending.push(n);
      if (this.pending.length >= PENDING_LIMIT) this.mergePending();
    }
    return n;
  }

  /**
   * Rebuilds the vocabulary with only the words `keep` accepts, renumbered densely. Returns
   * the old-to-new number map (-1 for a dropped word).
   */
  retain(keep: (n: number) => boolean): Int32Array {
    const remap = new Int32Array(this.words.length).fill(-1);
    const kept: string[] = [];
    for (let n = 0; n < this.words.length; n++) {
      if (keep(n)) {
        remap[n] = kept.length;
        kept.push(this.words[n]!);
      }
    }
    this.numbers.clear();
    this.forgetExpansions();
    this.words.length = 0;
    this.sortedWords = [];
    this.sortedNumbers = [];
    this.pending = [];
    this.astral = [];
    for (const w of kept) {
      const n = this.words.length;
      this.words.push(w);
      this.numbers.set(w, n);
      if (HAS_SURROGATE.test(w)) this.astral.push(n);
      else this.pending.push(n);
    }
    this.mergePending();
    return remap;
  }

  private forgetExpansions(): void {
    if (this.expansions.size === 0) return;
    this.expansions.clear();
    this.cachedNumbers = 0;
  }

  private mergePending(): void {
    if (this.pending.length === 0) return;
    const added = this.pending.map((n) => this.words[n]!);
    const order = added.map((_, i) => i).sort((a, b) => (added[a]! < added[b]! ? -1 : 1));
    const oldWords = this.sortedWords;
    const oldNumbers = this.sortedNumbers;
    const words: string[] = new Array(oldWords.length + added.length);
    const numbers: number[] = new Array(oldWords.length + added.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < oldWords.length || j < order.length) {
      if (j >= order.length || (i < oldWords.length && oldWords[i]! < added[order[j]!]!)) {
        words[k] = oldWords[i]!;
        numbers[k++] = oldNumbers[i++]!;
      } else {
        const a = order[j++]!;
        words[k] = added[a]!;
        numbers[k++] = this.pending[a]!;
      }
    }
    this.sortedWords = words;
    this.sortedNumbers = numbers;
    this.pending = [];
  }

  /**
   * Calls `visit` with the number of every word that `query` matches within `allowed` typos
   * (as a whole word, or also as a beginning when `prefix` is set).
   */
  expand(query: string, allowed: number, prefix: boolean, visit: (n: number) => void): void {
    if (query.length === 0) return;
    if (allowed === 0 && !prefix) {
      const n = this.numbers.get(query);
      if (n !== undefined) visit(n);
      return;
    }
    const key = `${allowed}${prefix ? 'p' : 'w'}${query}`;
    let found = this.expansions.get(key);
    if (!found) {
      const collected: number[] = [];
      this.expandUncached(query, allowed, prefix, (n) => collected.push(n));
      found = Int32Array.from(collected);
      if (this.expansions.size >= MAX_CACHED_EXPANSIONS || this.cachedNumbers + found.length > MAX_CACHED_NUMBERS) this.forgetExpansions();
      this.expansions.set(key, found);
      this.cachedNumbers += found.length;
    }
    for (let i = 0; i < found.length; i++) visit(found[i]!);
  }

  private expandUncached(query: string, allowed: number, prefix: boolean, visit: (n: number) => void): void {
    if (this.pending.length > PENDING_SEARCH_LIMIT) this.mergePending();
    const q = codePoints(query);
    const checkOneByOne = (n: number) => {
      if (matchesWithin(q, codePoints(this.words[n]!), prefix, allowed)) visit(n);
    };
    if (HAS_SURROGATE.test(query)) {
      // A query word outside the sorted walk's reach: check every word.
      for (let n = 0; n < this.words.length; n++) checkOneByOne(n);
      return;
    }
    if (allowed === 0) this.visitBeginningWith(query, visit);
    else this.walkSorted(query, allowed, prefix, visit);
    for (const n of this.pending) checkOneByOne(n);
    for (const n of this.astral) checkOneByOne(n);
  }

  /** Every sorted word that starts with `beginning` (a prefix query word without typos). */
  private visitBeginningWith(beginning: string, visit: (n: number) => void): void {
    const words = this.sortedWords;
    let lo = 0;
    let hi = words.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (words[mid]! < beginning) lo = mid + 1;
      else hi = mid;
    }
    const end = this.endOfBeginning(lo, beginning);
    for (let t = lo; t < end; t++) visit(this.sortedNumbers[t]!);
  }

  /** First index at or after `from` whose word does not start with `beginning`. */
  private endOfBeginning(from: number, beginning: string): number {
    const words = this.sortedWords;
    let lo = from;
    let hi = words.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (words[mid]!.startsWith(beginning)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private walkSorted(query: string, allowed: number, prefix: boolean, visit: (n: number) => void): void {
    const words = this.sortedWords;
    const numbers = this.sortedNumbers;
    const m = query.length;
    const q = new Int32Array(m);
    for (let j = 0; j < m; j++) q[j] = query.charCodeAt(j);
    const rows: Int32Array[] = [new Int32Array(m + 1)];
    for (let j = 0; j <= m; j++) rows[0]![j] = j;
    let current = '';
    let computed = 0;
    let i = 0;
    walk: while (i < words.length) {
      const w = words[i]!;
      const budget = typoBudget(allowed, w.charCodeAt(0) === q[0]);
      if (budget < 0) {
        i = this.endOfBeginning(i, w[0]!);
        continue;
      }
      // Rows stay valid for the beginning this word shares with the previous one.
      let d = 0;
      const shared = Math.min(computed, w.length, current.length);
      while (d < shared && w.charCodeAt(d) === current.charCodeAt(d)) d++;
      current = w;
      computed = d;
      while (d < w.length) {
        d++;
        let row = rows[d];
        if (!row) rows[d] = row = new Int32Array(m + 1);
        const up = rows[d - 1]!;
        const upUp = d >= 2 ? rows[d - 2]! : undefined;
        const c = w.charCodeAt(d - 1);
        const cBefore = d >= 2 ? w.charCodeAt(d - 2) : -1;
        row[0] = d;
        let rowMin = d;
        for (let j = 1; j <= m; j++) {
          let v = up[j]! + 1;
          const ins = row[j - 1]! + 1;
          if (ins < v) v = ins;
          const sub = up[j - 1]! + (c === q[j - 1] ? 0 : 1);
          if (sub < v) v = sub;
          if (upUp !== undefined && j > 1 && c === q[j - 2] && cBefore === q[j - 1]) {
            const tr = upUp[j - 2]! + 1;
            if (tr < v) v = tr;
          }
          row[j] = v;
          if (v < rowMin) rowMin = v;
        }
        computed = d;
        if (prefix && row[m]! <= budget) {
          // This beginning already matches: so does every word that starts with it.
          const end = this.endOfBeginning(i + 1, w.slice(0, d));
          for (let t = i; t < end; t++) visit(numbers[t]!);
          i = end;
          continue walk;
        }
        if (rowMin > budget) {
          i = this.endOfBeginning(i + 1, w.slice(0, d));
          continue walk;
        }
      }
      if (!prefix && rows[w.length]![m]! <= budget) visit(numbers[i]!);
      i++;
    }
  }
}
