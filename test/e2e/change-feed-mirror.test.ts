import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importCatalog } from '../../src/catalog/import/import-catalog.ts';
import { CatalogCopy, newestFirst, positionOf } from '../helpers/change-feed.ts';
import { randomCatalogWrites } from '../helpers/catalog-writes.ts';
import { FIXTURE_CATEGORIES } from '../helpers/fixtures.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/**
 * The promise of the export and the change feed, kept under load: a consumer exports while
 * 1,000 random writes run (new listings, makers' edits, admins' decisions, hides and restores,
 * slug changes, deletions), tails the feed the whole time, and once the writes stop and the feed
 * is drained its copy is the live catalog exactly: the same slugs, each Product byte for byte
 * what GET /products/{slug} answers.
 */
let stack: TestStack;
const MAKERS = ['ada@makers.example', 'bo@makers.example', 'cy@makers.example', 'di@makers.example'];

beforeAll(async () => {
  stack = await startTestStack({
    env: { RATE_LIMIT_CHANGES_PER_MIN: '1000000', RATE_LIMIT_EXPORT_PER_MIN: '1000', RATE_LIMIT_OTHER_PER_MIN: '1000000' },
  });
  // Listings of makers in every state, on top of the fixture catalog.
  const statuses = ['live', 'live', 'live', 'pending', 'hidden', 'rejected'];
  const lines = Array.from({ length: 240 }, (_, i) =>
    JSON.stringify({
      kind: 'listing',
      slug: `seeded-${i}`,
      name: `Seeded ${i}`,
      punchline: `Seeded listing ${i}`,
      description: `<p>Seeded listing ${i} for the feed's proof.</p>`,
      website: `https://seeded-${i}.example.com`,
      category: FIXTURE_CATEGORIES[i % FIXTURE_CATEGORIES.length]!.slug,
      status: statuses[i % statuses.length],
      listed_at: new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString(),
      maker_email: MAKERS[i % MAKERS.length],
    }),
  );
  const imported = await importCatalog(stack.db.pool, lines);
  expect(imported.errors).toEqual([]);
  await stack.settle();
});
afterAll(async () => {
  await stack?.stop();
});

describe('export, then the feed, while 1,000 writes run', () => {
  it('leaves a copy equal to the live catalog, byte for byte, with no change skipped or reordered', async () => {
    const api = `${stack.baseUrl}/api/v1`;
    const copy = new CatalogCopy(api);
    const startHead = positionOf((await (await fetch(`${api}/changes`)).json() as { cursor: string }).cursor);

    let hundred!: () => void;
    const hundredMade = new Promise<void>((r) => (hundred = r));
    let writing = true;
    const writes = randomCatalogWrites({
      pool: stack.db.pool,
      urls: stack.service.maker.urls,
      mailer: stack.service.accounts.mailer,
      writes: 1000,
      concurrency: 4,
      seed: 18,
      categories: FIXTURE_CATEGORIES.map((c) => c.slug),
      makers: MAKERS,
      onWrite: (made) => made === 100 && hundred(),
    }).finally(() => (writing = false));

    // The export is taken while the writes run; the feed is followed from its cursor until they stop.
    await hundredMade;
    await copy.export();
    const exportedAt = positionOf(copy.cursor);
    const firstExport = new Map(copy.products);
    const firstOrder = copy.order;
    let polls = 0;
    while (writing) {
      await copy.poll({ wait: 2, limit: 200 });
      polls++;
    }
    const summary = await writes;
    expect(summary.made).toBe(1000);
    for (const kind of ['new', 'edit', 'approve', 'reject', 'request_changes', 'hide', 'restore', 'feature', 'unfeature', 'slug', 'delete']) {
      expect(summary.byKind[kind] ?? 0, kind).toBeGreaterThan(0);
    }

    // Drained: everything committed is projected and this process's mirror shows it.
    await stack.settle();
    await copy.drain();

    expect(exportedAt).toBeGreaterThan(startHead);
    expect(positionOf(copy.cursor)).toBeGreaterThan(exportedAt);
    expect(polls).toBeGreaterThan(1);
    // Every change after the export's cursor, once each, in order.
    expect(copy.applied.map(positionOf)).toEqual(copy.applied.map((_, i) => exportedAt + i + 1));

    const { rows } = await stack.db.pool.query<{ slug: string }>(`SELECT slug FROM catalog.listings WHERE status = 'live' ORDER BY slug`);
    expect([...copy.products.keys()].sort()).toEqual(rows.map((r) => r.slug));
    for (const [slug, product] of copy.products) {
      const res = await fetch(`${api}/products/${slug}`);
      expect(res.status, slug).toBe(200);
      expect(await res.text(), slug).toBe(product);
    }
    // A fresh export says the same, at the cursor the copy reached.
    const fresh = new CatalogCopy(api);
    await fresh.export();
    expect(fresh.cursor).toBe(copy.cursor);
    expect(fresh.products).toEqual(copy.products);
    // In the search order, kept up through every change since the first export ordered it.
    expect(fresh.order).toEqual(newestFirst(fresh.products.values()));
    expect(firstOrder).toEqual(newestFirst(firstExport.values()));
  }, 180_000);
});
