/**
 * The typo budget of one candidate word, and the plain (per word) distance check used for the
 * few words the sorted walk does not cover. The rules are described at the top of
 * embedded-search-index.ts.
 */

/**
 * How many typos a candidate may carry, given the query word's allowance and whether both
 * start with the same character: a different first character costs two typos, so it is
 * refused under a one-typo allowance and leaves one more typo under a two-typo allowance.
 * Returns -1 when the candidate cannot match.
 */
export function typoBudget(allowed: number, sameFirstCharacter: boolean): number {
  if (sameFirstCharacter) return allowed;
  return allowed === 2 ? 1 : -1;
}

/**
 * Whether `word` matches the query word `query` (both as code point arrays) within `allowed`
 * typos: the optimal string alignment distance (insertions, deletions, substitutions and
 * transpositions of adjacent characters each count one) between the query word and the whole
 * word, or, when `prefix` is set, the smallest distance to any beginning of the word.
 */
export function matchesWithin(query: readonly number[], word: readonly number[], prefix: boolean, allowed: number): boolean {
  const m = query.length;
  if (m === 0 || word.length === 0) return false;
  const budget = typoBudget(allowed, query[0] === word[0]);
  if (budget < 0) return false;
  let before = new Int32Array(m + 1);
  let previous = new Int32Array(m + 1);
  let current = new Int32Array(m + 1);
  for (let j = 0; j <= m; j++) previous[j] = j;
  let best = prefix ? previous[m]! : Infinity;
  for (let i = 1; i <= word.length; i++) {
    current[0] = i;
    let rowMin = i;
    const c = word[i - 1]!;
    for (let j = 1; j <= m; j++) {
      let v = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (c === query[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && c === query[j - 2] && word[i - 2] === query[j - 1]) v = Math.min(v, before[j - 2]! + 1);
      current[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (prefix && current[m]! < best) best = current[m]!;
    // Row minima never decrease, so nothing further down can come back within budget.
    if (rowMin > budget) return best <= budget;
    [before, previous, current] = [previous, current, before];
  }
  return (prefix ? best : previous[m]!) <= budget;
}
