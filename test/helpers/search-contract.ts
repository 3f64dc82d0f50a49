import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchDocument, SearchIndex, SearchRequest } from '../../src/search/port.ts';
import { htmlToText } from '../../src/search/text.ts';

/**
 * The one contract every SearchIndex adapter honours. `open` gives a fresh, empty index (its
 * own Meilisearch index uid, or a new embedded engine); each group of tests opens its own.
 */
export function searchIndexContract(name: string, open: () => Promise<SearchIndex>): void {
  describe(name, () => {
    describe('reading a catalog', () => {
      let index: SearchIndex;
      beforeAll(async () => {
        index = await open();
        await index.replaceAll(batches(catalog(), 3));
      });
      afterAll(async () => {
        await index?.close();
      });

      const ids = async (request: Partial<SearchRequest>) => (await index.search({ offset: 0, limit: 50, ...request })).ids;
      const names = async (request: Partial<SearchRequest>) => (await ids(request)).map(nameOf);

      it('matches a word in the name, the punchline and the description text', async () => {
        expect(await names({ q: 'ledger' })).toEqual(['Ledger']);
        expect(await names({ q: 'bookkeeping' })).toEqual(['Ledger']);
        expect(await names({ q: 'receipts' })).toEqual(['Ledger']);
      });

      it('requires every query word to match', async () => {
        expect(await names({ q: 'ledger receipts' })).toEqual(['Ledger']);
        expect(await names({ q: 'ledger wireframes' })).toEqual([]);
      });

      it('matches the last word as a beginning, and only the last', async () => {
        expect(await names({ q: 'hero keyb' })).toEqual(['Keyboard Hero']);
        expect(await names({ q: 'keyb hero' })).toEqual([]);
        // A finished word (trailing space) is no longer a beginning.
        expect(await names({ q: 'keyb ' })).toEqual([]);
        expect(await names({ q: 'keyboard ' })).toEqual(['Keyboard Hero']);
      });

      it('tolerates no typo in words of 4 letters, one from 5', async () => {
        expect(await names({ q: 'tapo lessons' })).toEqual([]);
        expect(await names({ q: 'tape lessons' })).toEqual(['Keyboard Hero']);
        expect(await names({ q: 'pixle forge' })).toEqual(['Pixel Forge']); // transposition
        expect(await names({ q: 'pizel forge' })).toEqual(['Pixel Forge']); // substitution
        expect(await names({ q: 'pizle forge' })).toEqual([]); // two typos in 5 letters
      });

      it('tolerates one typo in words of 8 letters, two from 9', async () => {
        expect(await names({ q: 'keybaord hero' })).toEqual(['Keyboard Hero']);
        expect(await names({ q: 'keybaorf hero' })).toEqual([]);
        expect(await names({ q: 'shcedulez sync' })).toEqual(['Calendar Sync']);
        expect(await names({ q: 'shcedulzz sync' })).toEqual([]);
      });

      it('counts a typo on the first letter as two', async () => {
        expect(await names({ q: 'bixel forge' })).toEqual([]);
        expect(await names({ q: 'xchedules sync' })).toEqual(['Calendar Sync']);
        expect(await names({ q: 'xchedulez sync' })).toEqual([]);
      });

      it('tolerates typos in the beginning of the last word', async () => {
        expect(await names({ q: 'keybaord' })).toEqual(['Keyboard Hero']);
      });

      it('ignores case and diacritics', async () => {
        expect(await names({ q: 'CAFE creme' })).toEqual(['Café Crème']);
        expect(await names({ q: 'café CRÈME' })).toEqual(['Café Crème']);
      });

      it('reads only the first ten query words', async () => {
        expect(await names({ q: `${'ledger '.repeat(10)}zzzz` })).toEqual(['Ledger']);
        expect(await names({ q: `${'ledger '.repeat(9)}zzzz` })).toEqual([]);
      });

      it('treats a query without any word as no query', async () => {
        expect((await index.search({ q: '!!', offset: 0, limit: 50 })).total).toBe(CATALOG_SIZE);
      });

      it('never matches markup in a description', async () => {
        expect(await names({ q: 'highlight' })).toEqual([]);
        expect(await names({ q: 'class' })).toEqual([]);
        expect(await names({ q: 'strong' })).toEqual([]);
      });

      it('filters by category, label and tag, alone and combined, with or without q', async () => {
        expect(await names({ category: 'education' })).toEqual(['Keyboard Hero', 'Bookworm']);
        expect(await names({ label: 'featured' })).toEqual(['Ledger', 'Keyboard Hero', 'Café Crème']);
        expect(await names({ tag: 'typing' })).toEqual(['Keyboard Hero', 'Typist Pro']);
        expect(await names({ category: 'education', label: 'featured' })).toEqual(['Keyboard Hero']);
        expect(await names({ category: 'education', tag: 'reading' })).toEqual(['Bookworm']);
        expect(await names({ label: 'featured', tag: 'typing' })).toEqual(['Keyboard Hero']);
        expect(await names({ category: 'education', label: 'featured', tag: 'typing' })).toEqual(['Keyboard Hero']);
        expect(await names({ category: 'education', label: 'featured', tag: 'reading' })).toEqual([]);
        expect(await names({ q: 'typing', category: 'education' })).toEqual(['Keyboard Hero']);
        expect(await names({ q: 'typing', label: 'featured' })).toEqual(['Keyboard Hero']);
        expect(await names({ q: 'typing', tag: 'typing' })).toEqual(['Keyboard Hero', 'Typist Pro']);
        expect(await names({ q: 'typing', category: 'productivity', label: 'open-source', tag: 'typing' })).toEqual(['Typist Pro']);
        expect(await names({ category: 'nonexistent' })).toEqual([]);
      });

      it('matches filter values exactly, quotes included, with no way to inject a filter', async () => {
        expect(await names({ category: 'educatio' })).toEqual([]);
        expect(await names({ category: 'x" OR category = "finance' })).toEqual([]);
        expect(await names({ tag: 'a\\" OR tags = "typing' })).toEqual([]);
      });

      it('orders newest first, ties by id, never-listed last, whatever the relevance', async () => {
        expect(await ids({})).toEqual(expectedOrder(catalog()));
        expect(await names({ q: 'typing' })).toEqual(['Keyboard Hero', 'Typist Pro']);
      });

      it('counts every match and slices pages, up to the last partial page and beyond', async () => {
        const all = expectedOrder(catalog());
        expect(await index.search({ offset: 0, limit: 3 })).toEqual({ ids: all.slice(0, 3), total: CATALOG_SIZE });
        expect(await index.search({ offset: 3, limit: 3 })).toEqual({ ids: all.slice(3, 6), total: CATALOG_SIZE });
        const lastStart = Math.floor((CATALOG_SIZE - 1) / 3) * 3;
        expect(await index.search({ offset: lastStart, limit: 3 })).toEqual({ ids: all.slice(lastStart), total: CATALOG_SIZE });
        expect(await index.search({ offset: 24_950, limit: 50 })).toEqual({ ids: [], total: CATALOG_SIZE });
        expect(await index.search({ offset: 2, limit: 4 })).toEqual({ ids: all.slice(2, 6), total: CATALOG_SIZE });
        expect(await index.search({ q: 'typing', offset: 1, limit: 1 })).toEqual({ ids: [ID.typist], total: 2 });
        expect(await index.search({ q: 'typing', offset: 2, limit: 1 })).toEqual({ ids: [], total: 2 });
      });
    });

    describe('writing', () => {
      let index: SearchIndex;
      beforeAll(async () => {
        index = await open();
      });
      afterAll(async () => {
        await index?.close();
      });

      it('upserts: a new id is added, an existing id is replaced', async () => {
        await index.upsert(catalog());
        await index.upsert([doc(ID.ledger, { name: 'Tally', listed_at: T0 + 10 * DAY })]);
        expect((await index.search({ q: 'ledger', offset: 0, limit: 10 })).total).toBe(0);
        expect(await index.search({ q: 'tally', offset: 0, limit: 10 })).toEqual({ ids: [ID.ledger], total: 1 });
        const all = await index.search({ offset: 0, limit: 50 });
        expect(all.total).toBe(CATALOG_SIZE);
        expect(all.ids[0]).toBe(ID.ledger);
        // the replaced document's filter values are gone too
        expect((await index.search({ category: 'finance', offset: 0, limit: 10 })).total).toBe(0);
      });

      it('removes by id and ignores unknown ids', async () => {
        await index.remove([ID.pixel, '00000000-0000-4000-8000-0000000000ff']);
        const all = await index.search({ offset: 0, limit: 50 });
        expect(all.total).toBe(CATALOG_SIZE - 1);
        expect(all.ids).not.toContain(ID.pixel);
        expect((await index.search({ q: 'pixel', offset: 0, limit: 10 })).total).toBe(0);
      });

      it('replaces everything at once', async () => {
        const fresh = [doc(ID.fresh, { name: 'Fresh Start', category: 'design', tags: ['ui'], listed_at: T0 })];
        await index.replaceAll(batches(fresh, 1));
        expect(await index.search({ offset: 0, limit: 50 })).toEqual({ ids: [ID.fresh], total: 1 });
        expect((await index.search({ q: 'keyboard', offset: 0, limit: 10 })).total).toBe(0);
        expect(await index.search({ q: 'fresh', tag: 'ui', offset: 0, limit: 10 })).toEqual({ ids: [ID.fresh], total: 1 });
        await index.replaceAll(batches([], 1));
        expect(await index.search({ offset: 0, limit: 50 })).toEqual({ ids: [], total: 0 });
      });
    });
  });
}

const DAY = 86_400_000;
const T0 = Date.UTC(2025, 0, 1);

const ID = {
  ledger: '00000000-0000-4000-8000-000000000001',
  pixel: '00000000-0000-4000-8000-000000000002',
  keyboard: '00000000-0000-4000-8000-000000000003',
  bookworm: '00000000-0000-4000-8000-000000000004',
  calendar: '00000000-0000-4000-8000-000000000005',
  cafe: '00000000-0000-4000-8000-000000000006',
  typist: '00000000-0000-4000-8000-000000000007',
  notes: '00000000-0000-4000-8000-000000000008',
  fresh: '00000000-0000-4000-8000-000000000009',
} as const;

function doc(id: string, fields: Partial<Omit<SearchDocument, 'id'>> & { description?: string }): SearchDocument {
  const { description, ...rest } = fields;
  return {
    id,
    name: '',
    punchline: '',
    description_text: htmlToText(description ?? ''),
    category: null,
    labels: [],
    tags: [],
    listed_at: null,
    ...rest,
  };
}

function catalog(): SearchDocument[] {
  return [
    doc(ID.ledger, {
      name: 'Ledger',
      punchline: 'Bookkeeping for freelancers',
      description: '<p class="highlight">Invoices and <strong>receipts</strong> in one place</p>',
      category: 'finance',
      labels: ['featured'],
      tags: ['accounting', 'invoices'],
      listed_at: T0 - DAY,
    }),
    doc(ID.pixel, {
      name: 'Pixel Forge',
      punchline: 'Design mockups quickly',
      description: '<p>Wireframes, prototypes and icons.</p>',
      category: 'design',
      tags: ['ui'],
      listed_at: T0 - 2 * DAY,
    }),
    doc(ID.keyboard, {
      name: 'Keyboard Hero',
      punchline: 'Typing lessons on tape',
      description: '<p>Learn touch typing with real keyboards.</p>',
      category: 'education',
      labels: ['featured'],
      tags: ['typing'],
      listed_at: T0 - 3 * DAY,
    }),
    doc(ID.bookworm, {
      name: 'Bookworm',
      punchline: 'Reading tracker',
      description: '<ul><li>Track books</li><li>Share shelves</li></ul>',
      category: 'education',
      tags: ['reading'],
      listed_at: null,
    }),
    doc(ID.calendar, {
      name: 'Calendar Sync',
      punchline: 'Meetings without friction',
      description: '<p>Shared schedules, synchronized.</p>',
      category: 'productivity',
      tags: ['calendar'],
      // the same time as Ledger: the smaller id comes first
      listed_at: T0 - DAY,
    }),
    doc(ID.cafe, {
      name: 'Café Crème',
      punchline: 'Order ahead',
      description: '<p>Coffee &amp; croissants</p>',
      category: 'food',
      labels: ['featured'],
      listed_at: T0 - 5 * DAY,
    }),
    doc(ID.typist, {
      name: 'Typist Pro',
      punchline: 'Measure your speed',
      description: '<p>Typing tests for teams</p>',
      category: 'productivity',
      labels: ['open-source'],
      tags: ['typing'],
      listed_at: T0 - 4 * DAY,
    }),
    doc(ID.notes, {
      name: 'Notes',
      punchline: 'Plain text notes',
      description: '',
      category: 'productivity',
      listed_at: null,
    }),
  ];
}

const CATALOG_SIZE = catalog().length;

function nameOf(id: string): string {
  return catalog().find((d) => d.id === id)?.name ?? id;
}

function expectedOrder(docs: SearchDocument[]): string[] {
  return [...docs]
    .sort((a, b) => {
      const x = a.listed_at ?? Number.NEGATIVE_INFINITY;
      const y = b.listed_at ?? Number.NEGATIVE_INFINITY;
      if (x !== y) return y - x;
      return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    })
    .map((d) => d.id);
}

async function* batches(docs: SearchDocument[], size: number): AsyncIterable<SearchDocument[]> {
  for (let i = 0; i < docs.length; i += size) yield docs.slice(i, i + size);
}
