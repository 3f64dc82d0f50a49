import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjector } from '../../../projector/projector.ts';
import { reindex } from '../../../projector/reindex.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  expectedCategoryCounts,
  insertCategory,
  insertListings,
  projectedCategoryCounts,
  projectedDocs,
  recomputedDocs,
  type ListingInput,
} from '../../helpers/write-model.ts';

const SITE = 'https://directory.example';
const today = () => new Date().toISOString().slice(0, 10);

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  for (const slug of ['apps', 'games', 'empty']) await insertCategory(db.pool, { slug });
  const inputs: ListingInput[] = [];
  for (let i = 0; i < 1500; i++) {
    inputs.push({ slug: `known-${i}`, category: i % 3 === 0 ? 'apps' : i % 3 === 1 ? 'games' : null, status: i % 10 === 0 ? 'hidden' : 'live' });
  }
  await insertListings(db.pool, inputs);
});
afterAll(async () => {
  await db.drop();
});

describe('catalog reindex', () => {
  it('rebuilds the projection from the write model, whatever it held', async () => {
    // Drift the projection on purpose: a stray product, a stale one, a wrong count.
    await db.pool.query(`INSERT INTO projection.products (id, slug, doc, name, punchline, description_text, labels, tags, version)
      VALUES (gen_random_uuid(), 'stray', '{}', 'Stray', '', '', '{}', '{}', 0)`);
    await db.pool.query(`INSERT INTO projection.category_counts (slug, name, noun, count, doc, version) VALUES ('gone', 'Gone', 'x', 9, '{}', 0)`);
    const summary = await reindex({ pool: db.pool, siteUrl: SITE, batchSize: 200 });
    expect(summary).toMatchObject({ products: 1350, categories: 3, searchDocuments: undefined });
    expect(await projectedDocs(db.pool)).toEqual(await recomputedDocs(db.pool, SITE, today()));
    expect(await projectedCategoryCounts(db.pool)).toEqual(await expectedCategoryCounts(db.pool));
    const removed = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM projection.removed WHERE version = $1', [summary.version]);
    expect(removed.rows[0]!.n).toBe(1);
    // Everything in the outbox is reflected: a projector started now has nothing left to do.
    const lag = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.outbox o, projection.checkpoints c
      WHERE (o.txid, o.seq) > (c.txid, c.seq)`);
    expect(lag.rows[0]!.n).toBe(0);
    const state = await db.pool.query<{ version: number; site_url: string }>('SELECT version, site_url FROM projection.state');
    expect(state.rows[0]).toEqual({ version: summary.version, site_url: SITE });
  });

  it('never lets concurrent reads see a partial or empty catalog', async () => {
    const expected = (await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.listings WHERE status = 'live'`)).rows[0]!.n;
    // Make a projector live alongside, as in production.
    const projector = createProjector({ connectionString: db.url, siteUrl: SITE, pollMs: 100 });
    await projector.start();
    await projector.catchUp();
    let reading = true;
    const seen = new Set<number>();
    let slugMisses = 0;
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM projection.products');
        seen.add(rows[0]!.n);
        const bySlug = await db.pool.query(`SELECT doc FROM projection.products WHERE slug = 'known-1'`);
        if (bySlug.rowCount !== 1) slugMisses++;
        const counts = await db.pool.query<{ n: number }>('SELECT sum(count)::int AS n FROM projection.category_counts');
        seen.add(-counts.rows[0]!.n - 1);
        reads++;
      }
    })();
    try {
      for (let i = 0; i < 4; i++) await reindex({ pool: db.pool, siteUrl: i % 2 ? SITE : 'https://mirror.example', batchSize: 100 });
      await reindex({ pool: db.pool, siteUrl: SITE, batchSize: 100 });
    } finally {
      reading = false;
      await reader;
      await projector.stop();
    }
    const liveInCategories = Object.values(await expectedCategoryCounts(db.pool)).reduce((a, b) => a + b, 0);
    expect(reads).toBeGreaterThan(0);
    expect([...seen].sort()).toEqual([expected, -liveInCategories - 1].sort());
    expect(slugMisses).toBe(0);
    expect(await projectedDocs(db.pool)).toEqual(await recomputedDocs(db.pool, SITE, today()));
  });
});

describe('the site url of the documents', () => {
  async function urlOf(slug: string): Promise<string> {
    const { rows } = await db.pool.query<{ doc: string }>('SELECT doc FROM projection.products WHERE slug = $1', [slug]);
    return (JSON.parse(rows[0]!.doc) as { url: string }).url;
  }

  it('a reindex or projector told to keep the recorded one does not move urls to its own default', async () => {
    await reindex({ pool: db.pool, siteUrl: 'https://served.example' });
    expect(await urlOf('known-1')).toBe('https://served.example/products/known-1');

    await reindex({ pool: db.pool, siteUrl: 'http://127.0.0.1:3000', keepRecordedSiteUrl: true });
    expect(await urlOf('known-1')).toBe('https://served.example/products/known-1');

    const standalone = createProjector({ connectionString: db.url, siteUrl: 'http://127.0.0.1:3000', keepRecordedSiteUrl: true, pollMs: 100 });
    await standalone.start();
    await db.pool.query(`UPDATE catalog.listings SET name = 'Renamed' WHERE slug = 'known-1'`);
    await standalone.catchUp();
    await standalone.stop();
    expect(await urlOf('known-1')).toBe('https://served.example/products/known-1');

    // an explicit site url still wins
    await reindex({ pool: db.pool, siteUrl: 'https://new-site.example' });
    expect(await urlOf('known-1')).toBe('https://new-site.example/products/known-1');
  });
});
