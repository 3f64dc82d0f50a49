import { typoBudget } from './typo-distance.ts';

/**
 * A sorted list of words (UTF-16 code unit order, as `<` compares strings) kept in typed
 * arrays: every word's code units one after another in `chars`, where word i starts at
 * `starts[i]` and ends at `starts[i + 1]`, and `numbers[i]` the word's number in its
 * vocabulary. Nothing of it is a JavaScript object per word, so a vocabulary of a million
 * words costs the garbage collector nothing and loads as three array views.
 *
 * The sorted list is a trie without nodes: walking it in order, a word shares the distance
 * rows of its common beginning with the previous word, and when a beginning is already beyond
 * the typo budget every word sharing it is skipped with one binary search. Words with
 * characters outside the Basic Multilingual Plane are kept out of it (the vocabulary checks
 * them one by one, on code points).
 */
export class SortedWords {
  constructor(
    readonly chars: Uint16Array,
    readonly starts: Uint32Array,
    readonly numbers: Int32Array,
  ) {}

  static readonly EMPTY = new SortedWords(new Uint16Array(0), new Uint32Array(1), new Int32Array(0));

  /** From words already sorted, with their numbers. */
  static fromSorted(words: readonly string[], numbers: ArrayLike<number>): SortedWords {
    let total = 0;
    for (const w of words) total += w.length;
    const chars = new Uint16Array(total);
    const starts = new Uint32Array(words.length + 1);
    let at = 0;
    for (let i = 0; i < words.length; i++) {
      const w = words[i]!;
      starts[i] = at;
      for (let d = 0; d < w.length; d++) chars[at + d] = w.charCodeAt(d);
      at += w.length;
    }
    starts[words.length] = at;
    return new SortedWords(chars, starts, Int32Array.from(numbers));
  }

  get count(): number {
    return this.numbers.length;
  }

  wordAt(i: number): string {
    const start = this.starts[i]!;
    const end = this.starts[i + 1]!;
    let s = '';
    for (let at = start; at < end; at += 4096) s += String.fromCharCode(...this.chars.subarray(at, Math.min(end, at + 4096)));
    return s;
  }

  /** Compares word i with `s` in code unit order: negative, 0 or positive. */
  private compareWith(i: number, s: string): number {
    const start = this.starts[i]!;
    const length = this.starts[i + 1]! - start;
    const n = Math.min(length, s.length);
    for (let d = 0; d < n; d++) {
      const diff = this.chars[start + d]! - s.charCodeAt(d);
      if (diff !== 0) return diff;
    }
    return length - s.length;
  }

  /** First index whose word is not below `s`. */
  lowerBound(s: string): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compareWith(mid, s) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The index of `s`, or -1. */
  indexOf(s: string): number {
    const i = this.lowerBound(s);
    return i < this.count && this.compareWith(i, s) === 0 ? i : -1;
  }

  /** Whether word i starts with the first `d` code units of word j. */
  private sharesBeginning(i: number, j: number, d: number): boolean {
    const si = this.starts[i]!;
    if (this.starts[i + 1]! - si < d) return false;
    const sj = this.starts[j]!;
    for (let k = 0; k < d; k++) if (this.chars[si + k] !== this.chars[sj + k]) return false;
    return true;
  }

  private startsWithString(i: number, beginning: string): boolean {
    const si = this.starts[i]!;
    if (this.starts[i + 1]! - si < beginning.length) return false;
    for (let k = 0; k < beginning.length; k++) if (this.chars[si + k] !== beginning.charCodeAt(k)) return false;
    return true;
  }

  /** First index at or after `from` whose word does not start with the first `d` units of word `of`. */
  private endOfBeginning(from: number, of: number, d: number): number {
    let lo = from;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sharesBeginning(mid, of, d)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Calls `visit` with the number of every word that starts with `beginning` (a prefix query word without typos). */
  visitBeginningWith(beginning: string, visit: (n: number) => void): void {
    let lo = this.lowerBound(beginning);
    let hi = this.count;
    const first = lo;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.startsWithString(mid, beginning)) lo = mid + 1;
      else hi = mid;
    }
    for (let t = first; t < lo; t++) visit(this.numbers[t]!);
  }

  /**
   * Calls `visit` with the number of every word within `allowed` typos of `query` (a word
   * without surrogates), as a whole word, or also as a beginning when `prefix` is set.
   */
  walk(query: string, allowed: number, prefix: boolean, visit: (n: number) => void): void {
    const { chars, starts, numbers } = this;
    const count = this.count;
    const m = query.length;
    const q = new Int32Array(m);
    for (let j = 0; j < m; j++) q[j] = query.charCodeAt(j);
    const rows: Int32Array[] = [new Int32Array(m + 1)];
    for (let j = 0; j <= m; j++) rows[0]![j] = j;
    let previous = -1;
    let computed = 0;
    let i = 0;
    walk: while (i < count) {
      const ws = starts[i]!;
      const wl = starts[i + 1]! - ws;
      const budget = typoBudget(allowed, chars[ws] === q[0]);
      if (budget < 0) {
        i = this.endOfBeginning(i + 1, i, 1);
        continue;
      }
      // Rows stay valid for the beginning this word shares with the previous one.
      let d = 0;
      if (previous >= 0) {
        const ps = starts[previous]!;
        const shared = Math.min(computed, wl, starts[previous + 1]! - ps);
        while (d < shared && chars[ws + d] === chars[ps + d]) d++;
      }
      previous = i;
      computed = d;
      while (d < wl) {
        d++;
        let row = rows[d];
        if (!row) rows[d] = row = new Int32Array(m + 1);
        const up = rows[d - 1]!;
        const upUp = d >= 2 ? rows[d - 2]! : undefined;
        const c = chars[ws + d - 1]!;
        const cBefore = d >= 2 ? chars[ws + d - 2]! : -1;
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
          const end = this.endOfBeginning(i + 1, i, d);
          for (let t = i; t < end; t++) visit(numbers[t]!);
          i = end;
          continue walk;
        }
        if (rowMin > budget) {
          i = this.endOfBeginning(i + 1, i, d);
          continue walk;
        }
      }
      if (!prefix && rows[wl]![m]! <= budget) visit(numbers[i]!);
      i++;
    }
  }
}
