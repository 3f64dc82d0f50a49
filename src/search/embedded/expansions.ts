/** What the vocabularies (vocabulary.ts, frozen-index.ts) share about expanding query words. */

/** A word with characters outside the Basic Multilingual Plane: checked one by one, on code points. */
export const HAS_SURROGATE = /[\uD800-\uDFFF]/;

/** Bounds on remembered expansions: how many, and how many word numbers in all (4 bytes each). */
const MAX_CACHED_EXPANSIONS = 4096;
const MAX_CACHED_NUMBERS = 1 << 21;

export function codePoints(word: string): number[] {
  return Array.from(word, (c) => c.codePointAt(0)!);
}

/**
 * Expansions already computed, by (typos, prefix, query word). Searches repeat their words far
 * more often than a vocabulary changes; the owner clears it whenever its words change.
 */
export class ExpansionCache {
  private readonly expansions = new Map<string, Int32Array>();
  private cachedNumbers = 0;

  /** Calls `visit` with every word number `query` expands to, computing them with `expand` once. */
  visit(query: string, allowed: number, prefix: boolean, expand: (push: (n: number) => void) => void, visit: (n: number) => void): void {
    const key = `${allowed}${prefix ? 'p' : 'w'}${query}`;
    let found = this.expansions.get(key);
    if (!found) {
      const collected: number[] = [];
      expand((n) => collected.push(n));
      found = Int32Array.from(collected);
      if (this.expansions.size >= MAX_CACHED_EXPANSIONS || this.cachedNumbers + found.length > MAX_CACHED_NUMBERS) this.clear();
      this.expansions.set(key, found);
      this.cachedNumbers += found.length;
    }
    for (let i = 0; i < found.length; i++) visit(found[i]!);
  }

  clear(): void {
    if (this.expansions.size === 0) return;
    this.expansions.clear();
    this.cachedNumbers = 0;
  }
}
