import { textWords } from '../src/search/words.ts';

/**
 * What the benchmark learns from the running service before loading it: real slugs, the
 * categories, frequent tags and words. Scenarios are built from these, so they fit whatever
 * catalog is loaded instead of assuming the demo generator's vocabulary.
 */
interface SampledProduct {
  slug: string;
  name: string;
  punchline: string;
  category: string | null;
  tags: string[];
}

export interface CatalogSample {
  products: SampledProduct[];
  categories: Array<{ slug: string; count: number }>;
  /** Words of names and punchlines by how many sampled products carry them, most first. */
  words: Array<{ word: string; products: number }>;
  /** Every word seen, to make sure a typo is not itself a word. */
  vocabulary: Set<string>;
  tags: Array<{ tag: string; products: number }>;
  /** A real 20-product search page, as served. */
  searchPage: string;
}

const PAGE_LIMIT = 50;
// Function words carry no meaning a shopper would search for.
const STOP_WORDS = new Set(['with', 'your', 'that', 'from', 'this', 'into', 'for', 'and', 'the', 'without', 'every', 'more', 'than', 'what', 'when', 'where', 'which', 'while', 'their', 'them', 'they', 'have', 'over', 'just']);

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

export function searchableWords(text: string): string[] {
  return textWords(text).filter((w) => w.length >= 4 && /^[a-z]+$/.test(w) && !STOP_WORDS.has(w));
}

function byCount(counts: Map<string, number>): Array<[string, number]> {
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

export async function sampleCatalog(baseUrl: string, maxProducts: number): Promise<CatalogSample> {
  const api = `${baseUrl}/api/v1`;
  const products: SampledProduct[] = [];
  const pages = Math.min(500, Math.ceil(maxProducts / PAGE_LIMIT));
  for (let page = 1; page <= pages; page++) {
    const body = await getJson<{ products: SampledProduct[] }>(`${api}/search?limit=${PAGE_LIMIT}&page=${page}`);
    products.push(...body.products.map((p) => ({ slug: p.slug, name: p.name, punchline: p.punchline, category: p.category, tags: p.tags })));
    if (body.products.length < PAGE_LIMIT) break;
  }
  if (products.length === 0) throw new Error('the service has no live listing to benchmark');

  const { categories } = await getJson<{ categories: Array<{ slug: string; count: number }> }>(`${api}/categories`);
  const wordCounts = new Map<string, number>();
  const tagCounts = new Map<string, number>();
  const vocabulary = new Set<string>();
  for (const p of products) {
    for (const w of textWords(`${p.name} ${p.punchline}`)) vocabulary.add(w);
    for (const w of new Set(searchableWords(`${p.name} ${p.punchline}`))) wordCounts.set(w, (wordCounts.get(w) ?? 0) + 1);
    for (const t of new Set(p.tags)) tagCounts.set(t, (tagCounts.get(t) ?? 0) + 1);
  }
  const searchPageRes = await fetch(`${api}/search`);
  const searchPage = await searchPageRes.text();
  return {
    products,
    categories: categories.map((c) => ({ slug: c.slug, count: c.count })),
    words: byCount(wordCounts).map(([word, n]) => ({ word, products: n })),
    vocabulary,
    tags: byCount(tagCounts).map(([tag, n]) => ({ tag, products: n })),
    searchPage,
  };
}
