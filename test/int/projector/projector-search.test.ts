import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjector, type Projector } from '../../../projector/projector.ts';
import { reindex } from '../../../projector/reindex.ts';
import { markBulkTransaction } from '../../../src/catalog/import/bulk-transaction.ts';
import { EmbeddedSearchIndex } from '../../../src/search/embedded/embedded-search-index.ts';
import { MeilisearchSearchIndex } from '../../../src/search/meilisearch/meilisearch-search-index.ts';
import type { SearchIndex } from '../../../src/search/port.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { insertCategory, insertListing, updateListing } from '../../helpers/write-model.ts';

const SITE = 'https://directory.example';

/**
 * The projector feeding an external search index: checkpointed after the index confirmed,
 * replayed from its checkpoint, swapped whole by reindex. Runs against the embedded engine
 * (used here as the projector's external index: same port) and Meilisearch when MEILI_URL is set.
 */
const targets: [string, (() => SearchIndex) | undefined][] = [
  ['embedded engine', () => new EmbeddedSearchIndex()],
  [
    'meilisearch',
    process.env.MEILI_URL
      ? () => new MeilisearchSearchIndex({ url: process.env.MEILI_URL!, key: process.env.MEILI_KEY, index: `projector_${randomBytes(6).toString('hex')}` })
      : undefined,
  ],
];

for (const [name, makeIndex] of targets) {
  if (!makeIndex) {
    describe.skip(`projector feeding ${name} (set MEILI_URL to include it)`, () => {
      it('feeds the index', () => undefined);
    });
    continue;
  }

  describe(`projector feeding ${name}`, () => {
    let db: TestDatabase;
    const indexes: SearchIndex[] = [];
    const projectors: Projector[] = [];

    beforeAll(async () => {
      db = await createTestDatabase();
      await insertCategory(db.pool, { slug: 'apps' });
    });
    afterAll(async () => {
      await Promise.all(projectors.map((p) => p.stop()));
      await Promise.all(indexes.map((i) => i.close()));
      await db.drop();
    });

    function index(): SearchIndex {
      const i = makeIndex!();
      indexes.push(i);
      return i;
    }

    async function start(searchIndex: SearchIndex): Promise<Projector> {
      const p = createProjector({ connectionString: db.url, siteUrl: SITE, searchIndex, pollMs: 100, batchSize: 5 });
      projectors.push(p);
      await p.start();
      return p;
    }

    async function liveIdsInApps(): Promise<string[]> {
      const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM catalog.listings WHERE status = 'live' AND category = 'apps'`);
      return rows.map((r) => r.id).sort();
    }

    async function indexed(i: SearchIndex): Promise<string[]> {
      const hits = await i.search({ category: 'apps', offset: 0, limit: 1000 });
      expect(hits.total).toBe(hits.ids.length);
      return [...hits.ids].sort();
    }

    async function checkpoints(): Promise<Record<string, string>> {
      const { rows } = await db.pool.query<{ name: string; at: string }>(`SELECT name, txid::text || '/' || seq AS at FROM projection.checkpoints`);
      return Object.fromEntries(rows.map((r) => [r.name, r.at]));
    }

    it('upserts live products and removes the others, then moves the search checkpoint', async () => {
      const search = index();
      const projector = await start(search);
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push(await insertListing(db.pool, { category: 'apps', name: `Searchable ${i}` }));
      await updateListing(db.pool, ids[0]!, { status: 'hidden' });
      await updateListing(db.pool, ids[1]!, { category: null });
      await projector.catchUp();
      expect(await indexed(search)).toEqual(await liveIdsInApps());
      expect(await indexed(search)).not.toContain(ids[0]);
      const cp = await checkpoints();
      expect(cp.search).toBe(cp.projection);
      await projector.stop();
    });

    it('sends an edit committed while an import is open to the index before the import ends', async () => {
      const search = index();
      const projector = await start(search);
      const edited = await insertListing(db.pool, { category: 'apps', name: 'Before the import' });
      await projector.catchUp();
      const importer = new pg.Client({ connectionString: db.url });
      await importer.connect();
      try {
        await importer.query('BEGIN');
        await markBulkTransaction(importer);
        await insertListing(importer, { category: 'apps', name: 'Imported meanwhile' });
        const word = `w${randomBytes(4).toString('hex')}`;
        await updateListing(db.pool, edited, { name: `Edited ${word}` });
        let found: readonly string[] = [];
        for (let i = 0; i < 400 && found.length === 0; i++) {
          found = (await search.search({ q: word, offset: 0, limit: 10 })).ids;
          if (found.length === 0) await new Promise((r) => setTimeout(r, 25));
        }
        expect(found).toEqual([edited]);
        // The import's listing is not there while its transaction is open, and is after it.
        expect((await search.search({ q: 'meanwhile', offset: 0, limit: 10 })).total).toBe(0);
        await importer.query('COMMIT');
      } finally {
        await importer.end();
      }
      await projector.catchUp();
      expect(await indexed(search)).toEqual(await liveIdsInApps());
      await projector.stop();
    });

    it('replays from the search checkpoint into an index that missed changes', async () => {
      // A new, empty index and a search checkpoint at the start: as after an index was lost.
      await db.pool.query(`UPDATE projection.checkpoints SET txid = '0', seq = 0 WHERE name = 'search'`);
      const search = index();
      const projector = await start(search);
      await projector.catchUp();
      expect(await indexed(search)).toEqual(await liveIdsInApps());
      const cp = await checkpoints();
      expect(cp.search).toBe(cp.projection);
      await projector.stop();
    });

    it('reindex replaces the whole index content and sets its checkpoint', async () => {
      const search = index();
      await search.upsert([
        { id: '00000000-0000-4000-8000-000000000001', name: 'Stray', punchline: '', description_text: '', category: 'apps', labels: [], tags: [], listed_at: null },
      ]);
      const summary = await reindex({ pool: db.pool, siteUrl: SITE, searchIndex: search });
      expect(summary.searchDocuments).toBe(summary.products);
      expect(await indexed(search)).toEqual(await liveIdsInApps());
      const cp = await checkpoints();
      expect(cp.search).toBe(cp.projection);
    });
  });
}

describe('switching to an external search index', () => {
  it('fills an index the search checkpoint does not describe before following the outbox', async () => {
    const db = await createTestDatabase();
    try {
      await insertCategory(db.pool, { slug: 'design', name: 'Design', noun: 'tools' });
      await insertListing(db.pool, { slug: 'already-live', name: 'Already Live', category: 'design' });
      // first without an external index (embedded mode): the search checkpoint follows the projection
      const plain = createProjector({ connectionString: db.url, siteUrl: SITE, pollMs: 100 });
      await plain.start();
      await plain.catchUp();
      await plain.stop();

      const index = new EmbeddedSearchIndex();
      const external = createProjector({ connectionString: db.url, siteUrl: SITE, pollMs: 100, searchIndex: index });
      await external.start();
      await external.catchUp();
      expect((await index.search({ q: 'already', offset: 0, limit: 10 })).total).toBe(1);
      await external.stop();

      // the same index again: nothing to rebuild, and later changes still arrive
      await insertListing(db.pool, { slug: 'arrives-later', name: 'Arrives Later', category: 'design' });
      const again = createProjector({ connectionString: db.url, siteUrl: SITE, pollMs: 100, searchIndex: index });
      await again.start();
      await again.catchUp();
      expect((await index.search({ offset: 0, limit: 10 })).total).toBe(2);
      await again.stop();
    } finally {
      await db.drop();
    }
  });
});
