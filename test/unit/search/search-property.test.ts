import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EmbeddedSearchIndex } from '../../../src/search/embedded/embedded-search-index.ts';
import type { SearchDocument, SearchRequest } from '../../../src/search/port.ts';
import { referenceSearch, referenceWordMatches, osaDistance } from '../../helpers/search-reference.ts';
import { parseQuery } from '../../../src/search/words.ts';
import { SeededRandom } from '../../../src/demo/seeded-random.ts';

/**
 * The embedded engine against the brute-force reference: generated catalogs (small
 * vocabularies, so words collide and typos and beginnings happen), generated writes (upserts
 * that replace, removals, full replacements) and generated queries, filters and pages. Every
 * page and total must equal the reference's.
 */

// Words chosen around the typo boundaries: 4/5 and 8/9 letters, swaps, first-letter changes,
// diacritics, and beginnings of one another.
const SEED_WORDS = [
  'tape', 'tapes', 'taper', 'pixel', 'pixels', 'pixle', 'bixel', 'keyboard', 'keyboards', 'keybaord',
  'schedules', 'shcedules', 'xchedules', 'schedule', 'café', 'cafe', 'crème', 'book', 'books', 'bookworm',
  'wireframe', 'wireframes', 'a', 'ab', 'abc', 'abcd', 'abcde', 'abcdef', 'bacdef', 'abcdefghi', 'bacdefghi',
  'acbdefghij', 'ça', 'Œuvre', 'oeuvre', '𝒜lpha', 'alpha', 'naïve', 'naive', 'ﬁle', 'file',
];

const letters = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const randomWord = fc.array(letters, { minLength: 1, maxLength: 10 }).map((cs) => cs.join(''));
const word = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...SEED_WORDS) }, { weight: 2, arbitrary: randomWord });
const separator = fc.constantFrom(' ', ' ', ', ', '-', '. ', "'", ' & ', '/');

const text = fc
  .array(fc.tuple(word, separator), { maxLength: 6 })
  .map((parts) => parts.map(([w, s]) => w + s).join('').trim());

/** A query word: a word as is, cut short, or edited once or twice. */
const queryWord = fc.oneof(
  word,
  fc.tuple(word, fc.nat()).map(([w, n]) => [...w].slice(0, 1 + (n % [...w].length)).join('')),
  fc.tuple(word, fc.array(fc.tuple(fc.constantFrom('ins', 'del', 'sub', 'swap'), fc.nat(), letters), { minLength: 1, maxLength: 3 })).map(
    ([w, edits]) => {
      const cs = [...w];
      for (const [op, at, c] of edits) {
        const i = at % (cs.length + 1);
        if (op === 'ins') cs.splice(i, 0, c);
        else if (op === 'del' && cs.length > 1) cs.splice(i % cs.length, 1);
        else if (op === 'sub' && cs.length > 0) cs[i % cs.length] = c;
        else if (op === 'swap' && cs.length > 1) {
          const j = i % (cs.length - 1);
          [cs[j], cs[j + 1]] = [cs[j + 1]!, cs[j]!];
        }
      }
      return cs.join('');
    },
  ),
);

const query = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.array(queryWord, { minLength: 1, maxLength: 3 }), fc.constantFrom('', '', ' ', '!'))
      .map(([ws, end]) => ws.join(' ') + end),
  },
  { weight: 1, arbitrary: fc.array(fc.constantFrom('abc', 'a'), { minLength: 9, maxLength: 12 }).map((ws) => ws.join(' ')) },
);

const ids = Array.from({ length: 30 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);

const document: fc.Arbitrary<SearchDocument> = fc.record({
  id: fc.constantFrom(...ids),
  name: text,
  punchline: text,
  description_text: text,
  category: fc.constantFrom(null, 'tools', 'design'),
  labels: fc.subarray(['featured', 'open-source']),
  tags: fc.subarray(['ai', 'ui', 'cli']),
  listed_at: fc.constantFrom(null, 1_000, 2_000, 3_000, 4_000),
});

type Write = { upsert: SearchDocument[] } | { remove: string[] } | { replaceAll: SearchDocument[][] };

const write: fc.Arbitrary<Write> = fc.oneof(
  { weight: 6, arbitrary: fc.array(document, { minLength: 1, maxLength: 12 }).map((upsert) => ({ upsert })) },
  { weight: 2, arbitrary: fc.subarray(ids, { maxLength: 6 }).map((remove) => ({ remove })) },
  { weight: 1, arbitrary: fc.array(fc.array(document, { maxLength: 10 }), { maxLength: 3 }).map((replaceAll) => ({ replaceAll })) },
);

const request: fc.Arbitrary<SearchRequest> = fc
  .record({
    q: query,
    category: fc.constantFrom(undefined, undefined, 'tools', 'design', 'none'),
    label: fc.constantFrom(undefined, undefined, 'featured', 'open-source'),
    tag: fc.constantFrom(undefined, undefined, 'ai', 'ui', 'cli'),
    offset: fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constant(24_950)),
    limit: fc.integer({ min: 1, max: 8 }),
  })
  .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as unknown as SearchRequest);

/** Applies the writes to the engine and to a plain map of the documents. */
async function apply(engine: EmbeddedSearchIndex, docs: Map<string, SearchDocument>, writes: Write[]): Promise<void> {
  for (const w of writes) {
    if ('upsert' in w) {
      await engine.upsert(w.upsert);
      for (const d of w.upsert) docs.set(d.id, d);
    } else if ('remove' in w) {
      await engine.remove(w.remove);
      for (const id of w.remove) docs.delete(id);
    } else {
      await engine.replaceAll(
        (async function* () {
          yield* w.replaceAll;
        })(),
      );
      docs.clear();
      for (const batch of w.replaceAll) for (const d of batch) docs.set(d.id, d);
    }
  }
}

describe('the reference itself', () => {
  it('measures distance with swaps counted once', () => {
    expect(osaDistance([...'keybaord'], [...'keyboard'])).toBe(1);
    expect(osaDistance([...'ca'], [...'abc'])).toBe(3);
    expect(osaDistance([...'pixel'], [...'pizle'])).toBe(2);
  });

  it('applies the length, first-letter and beginning rules', () => {
    const [pixle] = parseQuery('pixle');
    expect(referenceWordMatches(pixle!, 'pixel')).toBe(true);
    expect(referenceWordMatches(parseQuery('bixel')[0]!, 'pixel')).toBe(false);
    expect(referenceWordMatches(parseQuery('xchedules')[0]!, 'schedules')).toBe(true);
    expect(referenceWordMatches(parseQuery('xchedulez')[0]!, 'schedules')).toBe(false);
    expect(referenceWordMatches(parseQuery('tapo')[0]!, 'tape')).toBe(false);
    expect(referenceWordMatches(parseQuery('keyb')[0]!, 'keyboard')).toBe(true);
    expect(referenceWordMatches(parseQuery('keyb ')[0]!, 'keyboard')).toBe(false);
  });
});

describe('embedded engine against the brute-force reference', () => {
  it('returns the same page and total for generated catalogs, writes and requests', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 6 }), fc.array(request, { minLength: 1, maxLength: 12 }), async (writes, requests) => {
        const engine = new EmbeddedSearchIndex();
        const docs = new Map<string, SearchDocument>();
        await apply(engine, docs, writes);
        for (const r of requests) expect(await engine.search(r), JSON.stringify(r)).toEqual(referenceSearch(docs.values(), r));
      }),
      { numRuns: 300 },
    );
  });

  it('returns the same page and total when writes and searches take turns on a built base', async () => {
    // Searches between writes: what a search keeps (a condition's live count) must follow the
    // base positions later writes replace or remove.
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(document, { maxLength: 10 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.option(write, { nil: undefined }), request), { minLength: 1, maxLength: 16 }),
        async (base, steps) => {
          const engine = new EmbeddedSearchIndex();
          const docs = new Map<string, SearchDocument>();
          await apply(engine, docs, [{ replaceAll: base }]);
          for (const [w, r] of steps) {
            if (w) await apply(engine, docs, [w]);
            expect(await engine.search(r), JSON.stringify(r)).toEqual(referenceSearch(docs.values(), r));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('stays equal through many replacements (compaction) and a large vocabulary', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.array(request, { minLength: 20, maxLength: 20 }), async (seed, requests) => {
        const rng = mulberry32(seed);
        const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
        const wordOf = () => Array.from({ length: 1 + Math.floor(rng() * 9) }, () => pick(['a', 'b', 'c', 'd', 'e', 'f'])).join('');
        const textOf = () => Array.from({ length: 1 + Math.floor(rng() * 5) }, () => (rng() < 0.3 ? pick(SEED_WORDS) : wordOf())).join(' ');
        const engine = new EmbeddedSearchIndex();
        const docs = new Map<string, SearchDocument>();
        const pool = Array.from({ length: 600 }, (_, i) => `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`);
        for (let round = 0; round < 10; round++) {
          const batch: SearchDocument[] = Array.from({ length: 400 }, () => ({
            id: pick(pool),
            name: textOf(),
            punchline: textOf(),
            description_text: textOf(),
            category: pick([null, 'tools', 'design']),
            labels: rng() < 0.5 ? ['featured'] : [],
            tags: rng() < 0.5 ? ['ai'] : ['ui', 'cli'],
            listed_at: rng() < 0.1 ? null : Math.floor(rng() * 50) * 1000,
          }));
          const removed = Array.from({ length: 30 }, () => pick(pool));
          await apply(engine, docs, [{ upsert: batch }, { remove: removed }]);
        }
        for (const r of requests) expect(await engine.search(r), JSON.stringify(r)).toEqual(referenceSearch(docs.values(), r));
      }),
      { numRuns: 4 },
    );
  });
});

/** The demo catalog's seeded generator, as a function. */
function mulberry32(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}
