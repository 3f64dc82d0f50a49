import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProjector, type Projector } from '../../../projector/projector.ts';
import { utcDate } from '../../../projector/product-document.ts';
import { markBulkTransaction } from '../../../src/catalog/import/bulk-transaction.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  expectedCategoryCounts,
  insertCategory,
  insertListing,
  insertListings,
  projectedCategoryCounts,
  projectedDocs,
  recomputedDocs,
  updateListing,
} from '../../helpers/write-model.ts';

/**
 * The projector's two lanes: a bulk transaction (an import) marks itself, and edits committed
 * while it runs, or while its backlog is projected, are projected without waiting for it. What
 * reads show stays exact: every document, every count, the change log a consumer follows.
 */
const SITE = 'https://directory.example';

let db: TestDatabase;
const running: Projector[] = [];
const clients: pg.Client[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await insertCategory(db.pool, { slug: 'design', name: 'Design', noun: 'design tools' });
  await insertCategory(db.pool, { slug: 'writing', name: 'Writing', noun: 'apps' });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
  await Promise.all(clients.splice(0).map((c) => c.end().catch(() => undefined)));
});
afterAll(async () => {
  await db.drop();
});

async function startProjector(): Promise<Projector> {
  // A small main-lane batch, so that a backlog of a few hundred rows takes many turns.
  const p = createProjector({ connectionString: db.url, siteUrl: SITE, pollMs: 200, batchSize: 50, bulkBatchSize: 50 });
  running.push(p);
  await p.start();
  return p;
}

async function openClient(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  clients.push(c);
  return c;
}

async function punchlineOf(id: string): Promise<string | undefined> {
  const { rows } = await db.pool.query<{ punchline: string }>('SELECT punchline FROM projection.products WHERE id = $1', [id]);
  return rows[0]?.punchline;
}

async function until(check: () => Promise<boolean>, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

/** The change log replayed from `after` onto `copy` (slug → document), as a feed consumer does. */
async function replayChanges(copy: Map<string, string>, after: number): Promise<void> {
  const { rows } = await db.pool.query<{ op: string; slug: string; doc: string | null }>(
    'SELECT op, slug, doc FROM projection.changes WHERE position > $1 ORDER BY position',
    [after],
  );
  for (const c of rows) {
    if (c.op === 'delete') copy.delete(c.slug);
    else copy.set(c.slug, c.doc!);
  }
}

async function publicCatalog(): Promise<Map<string, string>> {
  const { rows } = await db.pool.query<{ slug: string; doc: string }>('SELECT slug, doc FROM projection.products');
  return new Map(rows.map((r) => [r.slug, r.doc]));
}

describe('the projector’s lanes', () => {
  it('projects an edit committed while an import runs before the import ends, and the import after it, exactly', async () => {
    const edited = await insertListing(db.pool, { slug: 'lane-edited', punchline: 'Before', category: 'design' });
    const projector = await startProjector();
    await projector.catchUp();
    const copy = await publicCatalog();
    const { rows: head } = await db.pool.query<{ p: number }>('SELECT change_position::int AS p FROM projection.state');

    // An import: bulk, open, with 300 listings written and not committed.
    const importer = await openClient();
    await importer.query('BEGIN');
    await markBulkTransaction(importer);
    const imported = await insertListings(
      importer,
      Array.from({ length: 300 }, (_, i) => ({ slug: `lane-imported-${i}`, category: i % 2 ? 'design' : 'writing' })),
    );

    await updateListing(db.pool, edited, { punchline: 'Edited while an import runs' });
    expect(await until(async () => (await punchlineOf(edited)) === 'Edited while an import runs')).toBe(true);
    // The import is still open: nothing of it shows.
    const { rows: none } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM projection.products WHERE slug LIKE 'lane-imported-%'");
    expect(none[0]!.n).toBe(0);
    await importer.query('COMMIT');

    // Its rows were marked bulk, the edit's not.
    const { rows: marks } = await db.pool.query<{ listing_id: string; bulk: boolean }>(
      'SELECT listing_id::text, bulk FROM catalog.outbox WHERE listing_id = ANY($1::uuid[])',
      [[edited, ...imported]],
    );
    expect(marks.filter((m) => m.bulk).map((m) => m.listing_id).sort()).toEqual([...imported].sort());
    expect(marks.find((m) => m.listing_id === edited)?.bulk).toBe(false);

    // While the backlog is projected (six batches of 50), edits keep going first.
    await updateListing(db.pool, edited, { punchline: 'Edited during the backlog' });
    expect(await until(async () => (await punchlineOf(edited)) === 'Edited during the backlog')).toBe(true);
    await projector.catchUp();

    expect(await projectedDocs(db.pool)).toEqual(await recomputedDocs(db.pool, SITE, utcDate(new Date())));
    expect(await projectedCategoryCounts(db.pool)).toEqual(await expectedCategoryCounts(db.pool));
    // A consumer of the change feed that had the catalog before ends with it now.
    await replayChanges(copy, head[0]!.p);
    expect(copy).toEqual(await publicCatalog());
  });

  it('keeps category counts equal to the projection’s own products at every committed step', async () => {
    const projector = await startProjector();
    await projector.catchUp();
    const importer = await openClient();
    await importer.query('BEGIN');
    await markBulkTransaction(importer);
    await insertListings(
      importer,
      Array.from({ length: 400 }, (_, i) => ({ slug: `lane-counted-${i}`, category: i % 3 ? 'design' : 'writing' })),
    );
    await importer.query('COMMIT');
    const watcher = await openClient();
    let samples = 0;
    let behind = true;
    while (behind) {
      await watcher.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const { rows } = await watcher.query<{ slug: string; count: number; actual: number }>(
        `SELECT cc.slug, cc.count, (SELECT count(*)::int FROM projection.products p WHERE p.category = cc.slug) AS actual
           FROM projection.category_counts cc`,
      );
      const { rows: left } = await watcher.query<{ n: number }>("SELECT 400 - count(*)::int AS n FROM projection.products WHERE slug LIKE 'lane-counted-%'");
      await watcher.query('COMMIT');
      for (const r of rows) expect(r.count, `category ${r.slug}`).toBe(r.actual);
      samples++;
      behind = left[0]!.n > 0;
    }
    expect(samples).toBeGreaterThan(0);
    await projector.catchUp();
    expect(await projectedCategoryCounts(db.pool)).toEqual(await expectedCategoryCounts(db.pool));
  });

  it('still waits for an open transaction that is not bulk: an edit committed after it is not projected before it', async () => {
    const first = await insertListing(db.pool, { slug: 'lane-first', punchline: 'First before' });
    const later = await insertListing(db.pool, { slug: 'lane-later', punchline: 'Later before' });
    const projector = await startProjector();
    await projector.catchUp();

    const open = await openClient();
    await open.query('BEGIN');
    await updateListing(open, first, { punchline: 'First, committed last' });
    await updateListing(db.pool, later, { punchline: 'Later, committed first' });
    // Poll turns pass (the projector looks again at least every 200 ms): the later edit waits,
    // since the open transaction may still add rows that sort before it.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await punchlineOf(later)).toBe('Later before');
    await open.query('COMMIT');
    await projector.catchUp();
    expect(await punchlineOf(first)).toBe('First, committed last');
    expect(await punchlineOf(later)).toBe('Later, committed first');
  });
});
