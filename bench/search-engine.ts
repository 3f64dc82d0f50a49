/**
 * The embedded search engine on synthetic catalogs of 10,000 and 100,000 listings: heap growth,
 * build time and query time (p50/p99) per kind of request, agreement with the brute-force
 * reference on a sample, and, for comparison, FlexSearch used as the word → listings store.
 * Not a test: it prints figures.
 *
 *   node --expose-gc bin/run-ts.js bench/search-engine.ts [sizes, default 10000,100000]
 */
import FlexSearch from 'flexsearch';
import { EmbeddedSearchIndex } from '../src/search/embedded/embedded-search-index.ts';
import type { SearchDocument, SearchRequest } from '../src/search/port.ts';
import { documentWords } from '../src/search/words.ts';
import { referenceSearch } from '../test/helpers/search-reference.ts';
import { SeededRandom } from '../src/demo/seeded-random.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error('run with node --expose-gc bin/run-ts.js bench/search-engine.ts');
  process.exit(2);
}

/** The demo catalog's seeded generator, as a function. */
function rng(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}

/** A Zipf-distributed vocabulary of pronounceable words: rank 1 is the most frequent. */
class Vocabulary {
  readonly words: string[] = [];
  private readonly cumulative: Float64Array;

  constructor(size: number, random: () => number) {
    const syllables = ['ka', 'lo', 'mi', 'ne', 'ra', 'to', 'su', 'vi', 'an', 'el', 'or', 'is', 'pro', 'dat', 'ser', 'ver', 'ment', 'tion', 'ing', 'ed', 'ly', 'sync', 'app', 'web', 'doc', 'flow', 'task', 'team', 'note', 'code'];
    const seen = new Set<string>();
    while (this.words.length < size) {
      const n = 1 + Math.floor(random() * 4);
      let w = '';
      for (let i = 0; i < n; i++) w += syllables[Math.floor(random() * syllables.length)];
      if (!seen.has(w)) {
        seen.add(w);
        this.words.push(w);
      }
    }
    this.cumulative = new Float64Array(size);
    let sum = 0;
    for (let r = 0; r < size; r++) this.cumulative[r] = sum += 1 / (r + 1);
    for (let r = 0; r < size; r++) this.cumulative[r]! /= sum;
  }

  sample(random: () => number): string {
    const x = random();
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo]!;
  }
}

const VOCABULARY = new Vocabulary(40_000, rng(7));
const CATEGORIES = Array.from({ length: 24 }, (_, i) => `category-${i}`);
const LABELS = ['featured', 'open-source', 'new', 'verified', 'staff-pick', 'trending'];
const TAGS = new Vocabulary(300, rng(11)).words;
const NOW = Date.UTC(2025, 6, 1);

function sentence(random: () => number, n: number): string {
  return Array.from({ length: n }, () => VOCABULARY.sample(random)).join(' ');
}

function listing(i: number): SearchDocument {
  const random = rng(1000 + i);
  const paragraphs = 2 + Math.floor(random() * 3);
  const description = Array.from({ length: paragraphs }, () => `${sentence(random, 40 + Math.floor(random() * 40))}.`).join(' ');
  return {
    id: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
    name: sentence(random, 2),
    punchline: sentence(random, 6 + Math.floor(random() * 6)),
    description_text: description,
    category: CATEGORIES[Math.min(CATEGORIES.length - 1, Math.floor(-Math.log(1 - random()) * 5))]!,
    labels: LABELS.filter(() => random() < 0.15),
    tags: [...new Set(Array.from({ length: 1 + Math.floor(random() * 4) }, () => TAGS[Math.min(TAGS.length - 1, Math.floor(random() ** 3 * TAGS.length))]!))],
    listed_at: random() < 0.02 ? null : NOW - Math.floor(random() * 3 * 365 * 86_400_000),
  };
}

async function* listings(count: number, batch = 1000): AsyncIterable<SearchDocument[]> {
  for (let i = 0; i < count; i += batch) yield Array.from({ length: Math.min(batch, count - i) }, (_, k) => listing(i + k));
}

/** JS heap plus typed-array backing stores (kept outside the heap proper). */
function heapMb(): number {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return (m.heapUsed + m.arrayBuffers) / 1e6;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

type Kind = 'no q' | 'one common word' | 'two words + category' | 'a typo' | 'tag filter' | 'rare prefix';

function requests(kind: Kind, n: number, random: () => number): SearchRequest[] {
  const w = (from: number, to: number) => VOCABULARY.words[from + Math.floor(random() * (to - from))]!;
  return Array.from({ length: n }, (): SearchRequest => {
    const page = { offset: Math.floor(random() * 5) * 20, limit: 20 };
    switch (kind) {
      case 'no q':
        return page;
      case 'one common word':
        return { q: w(0, 20), ...page };
      case 'two words + category':
        return { q: `${w(0, 200)} ${w(0, 2000)}`, category: CATEGORIES[Math.floor(random() * 5)]!, ...page };
      case 'a typo': {
        let word = w(50, 2000);
        while ([...word].length < 5) word = w(50, 2000);
        const at = 1 + Math.floor(random() * (word.length - 1));
        return { q: word.slice(0, at) + (word[at] === 'x' ? 'z' : 'x') + word.slice(at + 1), ...page };
      }
      case 'tag filter':
        return { tag: TAGS[Math.floor(random() ** 2 * 50)]!, ...page };
      case 'rare prefix':
        return { q: w(20_000, 40_000).slice(0, 5), ...page };
    }
  });
}

const KINDS: Kind[] = ['no q', 'one common word', 'two words + category', 'a typo', 'tag filter', 'rare prefix'];

async function measureEngine(count: number): Promise<void> {
  const before = heapMb();
  const rssBefore = process.memoryUsage().rss / 1e6;
  const engine = new EmbeddedSearchIndex();
  const t0 = performance.now();
  await engine.replaceAll(listings(count));
  const buildMs = performance.now() - t0;
  const after = heapMb();
  const rss = process.memoryUsage().rss / 1e6;
  console.log(`\n${count.toLocaleString('en')} listings: built in ${(buildMs / 1000).toFixed(1)} s, heap (incl. typed arrays) +${(after - before).toFixed(0)} MB, RSS ${rss.toFixed(0)} MB (+${(rss - rssBefore).toFixed(0)} MB)`);

  const random = rng(99);
  for (const kind of KINDS) {
    const reqs = requests(kind, 300, random);
    for (const r of reqs.slice(0, 20)) await engine.search(r);
    const times: number[] = [];
    let totalSum = 0;
    for (const r of reqs) {
      const t = performance.now();
      const hits = await engine.search(r);
      times.push(performance.now() - t);
      totalSum += hits.total;
    }
    times.sort((a, b) => a - b);
    console.log(
      `  ${kind.padEnd(22)} p50 ${percentile(times, 50).toFixed(2).padStart(6)} ms  p99 ${percentile(times, 99).toFixed(2).padStart(6)} ms  (mean total ${Math.round(totalSum / reqs.length).toLocaleString('en')})`,
    );
  }

  if (count <= 10_000) {
    const docs: SearchDocument[] = [];
    for await (const batch of listings(count)) docs.push(...batch);
    let agree = 0;
    let asked = 0;
    for (const kind of KINDS) {
      for (const r of requests(kind, 5, rng(5))) {
        asked++;
        if (JSON.stringify(await engine.search(r)) === JSON.stringify(referenceSearch(docs, r))) agree++;
      }
    }
    console.log(`  agreement with the brute-force reference: ${agree}/${asked} requests (page and total)`);
  }
  await engine.close();
}

/** FlexSearch as the word → listings store only, on the same words, for comparison. */
async function measureFlexSearch(count: number): Promise<void> {
  const before = heapMb();
  const index = new FlexSearch.Index({ tokenize: 'strict', encoder: FlexSearch.Charset.Exact, resolution: 1, fastupdate: true });
  let slot = 0;
  const t0 = performance.now();
  for await (const batch of listings(count)) {
    for (const doc of batch) index.add(slot++, [...documentWords([doc.name, doc.punchline, doc.description_text])].join(' '));
  }
  const buildMs = performance.now() - t0;
  const after = heapMb();
  const common = VOCABULARY.words.slice(0, 20);
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    index.search(common[i % common.length]!, { limit: count });
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(
    `\nFlexSearch 0.8 (strict, exact encoder) as the word store only, ${count.toLocaleString('en')} listings: built in ${(buildMs / 1000).toFixed(1)} s, heap (incl. typed arrays) +${(after - before).toFixed(0)} MB; fetching a common word's listings p50 ${percentile(times, 50).toFixed(2)} ms p99 ${percentile(times, 99).toFixed(2)} ms`,
  );
}

const sizes = (process.argv[2] ?? '10000,100000').split(',').map(Number);
console.log(`Embedded search engine, synthetic listings (Zipf vocabulary of ${VOCABULARY.words.length.toLocaleString('en')} words, ~1.3 KB of text each), node ${process.version}`);
for (const size of sizes) await measureEngine(size);
await measureFlexSearch(sizes[sizes.length - 1]!);
