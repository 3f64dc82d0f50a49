/**
 * How text becomes searchable words, and how a query becomes query words: the one module the
 * embedded engine, the Meilisearch adapter (which sends Meilisearch the words parsed here) and
 * the brute-force reference in the tests all use. The matching rules themselves are documented
 * at the top of src/search/embedded/embedded-search-index.ts.
 *
 * Normalization follows Meilisearch's tokenizer (charabia) for Latin text: compatibility
 * decomposition (NFKD: ligatures and full-width letters become plain letters), lowercase, `æ`
 * → `ae` and `œ` → `oe`, combining marks removed (`é` → `e`). A word is a maximal run of
 * letters and digits; everything else separates words (`don't` → `don`, `t`; `e-mail` → `e`,
 * `mail`).
 */

/** Meilisearch reads at most this many words of a query; the rest is ignored. */
const MAX_QUERY_WORDS = 10;

/** Meilisearch neither indexes nor expands words longer than this many UTF-8 bytes. */
const MAX_WORD_BYTES = 250;

/** Query word lengths (in characters) from which one, then two typos are tolerated. */
export interface TypoSizes {
  oneTypo: number;
  twoTypos: number;
}

/** Meilisearch's default: one typo from 5 characters, two from 9. */
const DEFAULT_TYPO_SIZES: TypoSizes = Object.freeze({ oneTypo: 5, twoTypos: 9 });

const COMBINING_MARK = /\p{M}/gu;
const WORD = /[\p{L}\p{N}]+/gu;
const ENDS_IN_WORD = /[\p{L}\p{N}]$/u;

/** Lowercased, decomposed, marks removed: the form every word is compared in. */
function normalizeText(text: string): string {
  return text.normalize('NFKD').toLowerCase().replace(/æ/g, 'ae').replace(/œ/g, 'oe').replace(COMBINING_MARK, '');
}

function utf8Length(word: string): number {
  return Buffer.byteLength(word, 'utf8');
}

/** The indexable words of a text, in order, duplicates kept. */
export function textWords(text: string): string[] {
  const words = normalizeText(text).match(WORD) ?? [];
  // A UTF-16 unit takes at most 3 UTF-8 bytes: only long words need measuring.
  return words.filter((w) => w.length * 3 <= MAX_WORD_BYTES || utf8Length(w) <= MAX_WORD_BYTES);
}

/** The distinct indexable words of a document's searchable fields. */
export function documentWords(fields: readonly string[]): Set<string> {
  const set = new Set<string>();
  for (const field of fields) for (const w of textWords(field)) set.add(w);
  return set;
}

export interface QueryWord {
  word: string;
  /** Whether the word also matches as the beginning of a longer word. */
  prefix: boolean;
  /** 0, 1 or 2. */
  typos: number;
}

/**
 * The words of a query. Only the first ten count. The last word counted is also a prefix,
 * unless the query goes on after it (an eleventh word, or a trailing separator such as a
 * space: `web ` means the word is finished), as in Meilisearch. A query with no word at all
 * (`"!!"`) matches like no query.
 */
/** `sizes` null: typo tolerance disabled. */
export function parseQuery(q: string | undefined, sizes: TypoSizes | null = DEFAULT_TYPO_SIZES): QueryWord[] {
  if (q === undefined) return [];
  const normalized = normalizeText(q);
  const all = normalized.match(WORD) ?? [];
  const words = all.slice(0, MAX_QUERY_WORDS);
  const lastIsPrefix = all.length <= MAX_QUERY_WORDS && ENDS_IN_WORD.test(normalized);
  return words.map((word, i) => ({
    word,
    prefix: i === words.length - 1 && lastIsPrefix,
    typos: allowedTypos(word, sizes),
  }));
}

/** Typos a query word tolerates, by its length in characters (code points). */
export function allowedTypos(word: string, sizes: TypoSizes | null = DEFAULT_TYPO_SIZES): number {
  if (sizes === null || isOverlong(word)) return 0;
  const length = [...word].length;
  if (length >= sizes.twoTypos) return 2;
  if (length >= sizes.oneTypo) return 1;
  return 0;
}

/**
 * The query as Meilisearch should receive it: the parsed words joined by spaces, with a
 * trailing space when the last word is not a prefix. Sending our own words (never the raw
 * text) makes both adapters read a query the same way and keeps Meilisearch's phrase (`"…"`)
 * and negation (`-word`) operators out of reach.
 */
export function queryText(words: readonly QueryWord[]): string {
  if (words.length === 0) return '';
  const last = words[words.length - 1]!;
  return words.map((w) => w.word).join(' ') + (last.prefix ? '' : ' ');
}

/** Whether a query word is too long to be expanded at all (it then matches nothing). */
export function isOverlong(word: string): boolean {
  return utf8Length(word) > MAX_WORD_BYTES;
}
