import type { SearchDocument, SearchHits, SearchRequest } from '../../src/search/port.ts';
import { documentWords, isOverlong, parseQuery, type QueryWord } from '../../src/search/words.ts';

/**
 * The search semantics written the slow, obvious way, to hold the engines to: every document,
 * every word, a full distance matrix per pair. Words and query words come from the shared
 * module (src/search/words.ts); everything after that is independent of the engines' code.
 */

const SEARCHABLE = ['name', 'punchline', 'description_text'] as const;

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
 * adjacent characters each count one (a swapped pair is not edited again).
 */
export function osaDistance(a: readonly string[], b: readonly string[]): number {
  const d: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    d.push([]);
    for (let j = 0; j <= b.length; j++) {
      if (i === 0 || j === 0) {
        d[i]![j] = i + j;
        continue;
      }
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** Whether one document word satisfies one query word (rules: embedded-search-index.ts). */
export function referenceWordMatches(query: QueryWord, word: string): boolean {
  if (isOverlong(query.word)) return false;
  const q = [...query.word];
  const w = [...word];
  // A different first character costs two typos.
  const budget = q[0] === w[0] ? query.typos : query.typos - 1;
  if (budget < 0) return false;
  if (!query.prefix) return osaDistance(q, w) <= budget;
  for (let end = 1; end <= w.length; end++) if (osaDistance(q, w.slice(0, end)) <= budget) return true;
  return false;
}

export function referenceSearch(docs: Iterable<SearchDocument>, request: SearchRequest): SearchHits {
  const query = parseQuery(request.q);
  const verdicts = query.map(() => new Map<string, boolean>());
  const matching: SearchDocument[] = [];
  for (const doc of docs) {
    if (request.category !== undefined && doc.category !== request.category) continue;
    if (request.label !== undefined && !doc.labels.includes(request.label)) continue;
    if (request.tag !== undefined && !doc.tags.includes(request.tag)) continue;
    const words = [...documentWords(SEARCHABLE.map((f) => doc[f]))];
    const every = query.every((qw, i) =>
      words.some((w) => {
        let v = verdicts[i]!.get(w);
        if (v === undefined) verdicts[i]!.set(w, (v = referenceWordMatches(qw, w)));
        return v;
      }),
    );
    if (every) matching.push(doc);
  }
  matching.sort((a, b) => {
    if (a.listed_at !== b.listed_at) {
      if (a.listed_at === null) return 1;
      if (b.listed_at === null) return -1;
      return b.listed_at - a.listed_at;
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
  return { ids: matching.slice(request.offset, request.offset + request.limit).map((d) => d.id), total: matching.length };
}
