import { codePoints, ExpansionCache, HAS_SURROGATE } from './expansions.ts';
import { SortedWords } from './sorted-words.ts';
import { matchesWithin } from './typo-distance.ts';

/** Recently added words are checked one by one until this many wait; then they are merged in. */
const PENDING_LIMIT = 2048;
/** A search merges the pending words first when more than this many wait. */
const PENDING_SEARCH_LIMIT = 16;


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
  private sorted = SortedWords.EMPTY;
  private pending: number[] = [];
  private astral: number[] = [];
  /** Any new word (or a renumbering) clears it. */
  private readonly expansions = new ExpansionCache();

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
    this.sorted = SortedWords.EMPTY;
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
    this.expansions.clear();
  }

  private mergePending(): void {
    if (this.pending.length === 0) return;
    const added = this.pending.map((n) => this.words[n]!);
    const order = added.map((_, i) => i).sort((a, b) => (added[a]! < added[b]! ? -1 : 1));
    const old = this.sorted;
    const words: string[] = new Array(old.count + added.length);
    const numbers: number[] = new Array(old.count + added.length);
    let i = 0;
    let j = 0;
    let k = 0;
    let oldWord = old.count > 0 ? old.wordAt(0) : '';
    while (i < old.count || j < order.length) {
      if (j >= order.length || (i < old.count && oldWord < added[order[j]!]!)) {
        words[k] = oldWord;
        numbers[k++] = old.numbers[i++]!;
        if (i < old.count) oldWord = old.wordAt(i);
      } else {
        const a = order[j++]!;
        words[k] = added[a]!;
        numbers[k++] = this.pending[a]!;
      }
    }
    this.sorted = SortedWords.fromSorted(words, numbers);
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
    this.expansions.visit(query, allowed, prefix, (push) => this.expandUncached(query, allowed, prefix, push), visit);
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
    if (allowed === 0) this.sorted.visitBeginningWith(query, visit);
    else this.sorted.walk(query, allowed, prefix, visit);
    for (const n of this.pending) checkOneByOne(n);
    for (const n of this.astral) checkOneByOne(n);
  }
}
