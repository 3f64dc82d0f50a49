import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjector, type Projector } from '../../../projector/projector.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  deleteCategory,
  deleteListing,
  expectedCategoryCounts,
  insertCategory,
  insertListing,
  projectedCategoryCounts,
  projectedDocs,
  recomputedDocs,
  updateListing,
} from '../../helpers/write-model.ts';

const SITE = 'https://directory.example';
const STATUSES = ['draft', 'pending', 'live', 'rejected', 'hidden'] as const;

let db: TestDatabase;
let projector: Projector;

beforeAll(async () => {
  db = await createTestDatabase();
  projector = createProjector({ connectionString: db.url, siteUrl: SITE, pollMs: 200, batchSize: 7 });
  await projector.start();
});
afterAll(async () => {
  await projector.stop();
  await db.drop();
});

async function expectProjectionEqualsWriteModel(): Promise<void> {
  await projector.catchUp();
  expect(await projectedCategoryCounts(db.pool)).toEqual(await expectedCategoryCounts(db.pool));
  expect(await projectedDocs(db.pool)).toEqual(await recomputedDocs(db.pool, SITE, new Date().toISOString().slice(0, 10)));
}

/** A small deterministic generator, so a failure replays identically. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('category counts', () => {
  it('lists every category with its live count: zero, new, deleted, renamed', async () => {
    await insertCategory(db.pool, { slug: 'empty', name: 'Empty' });
    await insertCategory(db.pool, { slug: 'tools', name: 'Tools' });
    const a = await insertListing(db.pool, { category: 'tools' });
    await insertListing(db.pool, { category: 'tools', status: 'pending' });
    await expectProjectionEqualsWriteModel();
    expect(await projectedCategoryCounts(db.pool)).toEqual({ empty: 0, tools: 1 });

    await insertCategory(db.pool, { slug: 'fresh', name: 'Fresh' });
    await updateListing(db.pool, a, { category: 'fresh' });
    await expectProjectionEqualsWriteModel();
    expect(await projectedCategoryCounts(db.pool)).toMatchObject({ empty: 0, tools: 0, fresh: 1 });

    // Renaming a category moves its listings (ON UPDATE CASCADE) and its count row.
    await db.pool.query(`UPDATE catalog.categories SET slug = 'renamed', name = 'Renamed' WHERE slug = 'fresh'`);
    await expectProjectionEqualsWriteModel();
    const { rows } = await db.pool.query<{ doc: string }>(`SELECT doc FROM projection.category_counts WHERE slug = 'renamed'`);
    expect(JSON.parse(rows[0]!.doc)).toEqual({ slug: 'renamed', name: 'Renamed', noun: 'tools', url: `${SITE}/categories/renamed`, count: 1 });

    // Deleting a category drops it; its listings stay live without a category.
    await deleteCategory(db.pool, 'renamed');
    await expectProjectionEqualsWriteModel();
    expect(await projectedCategoryCounts(db.pool)).not.toHaveProperty('renamed');
    const doc = await db.pool.query<{ doc: string }>('SELECT doc FROM projection.products WHERE id = $1', [a]);
    expect(JSON.parse(doc.rows[0]!.doc)).toMatchObject({ category: null });
  });

  it('stays equal to a GROUP BY over live listings through random moves between categories and states', async () => {
    const next = random(20240601);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const categories = ['alpha', 'beta', 'gamma'];
    for (const slug of categories) await insertCategory(db.pool, { slug });
    const listings: string[] = [];
    for (let i = 0; i < 30; i++) listings.push(await insertListing(db.pool, { category: pick([...categories, null]), status: pick(STATUSES) }));
    let created = 0;
    for (let step = 0; step < 150; step++) {
      const r = next();
      if (r < 0.45 && listings.length) {
        await updateListing(db.pool, pick(listings), { category: pick([...categories, null]) });
      } else if (r < 0.8 && listings.length) {
        await updateListing(db.pool, pick(listings), { status: pick(STATUSES) });
      } else if (r < 0.88) {
        listings.push(await insertListing(db.pool, { category: pick([...categories, null]), status: pick(STATUSES) }));
      } else if (r < 0.93 && listings.length) {
        const id = pick(listings);
        listings.splice(listings.indexOf(id), 1);
        await deleteListing(db.pool, id);
      } else if (r < 0.97) {
        const slug = `new-${++created}`;
        await insertCategory(db.pool, { slug });
        categories.push(slug);
      } else if (categories.length > 1) {
        const slug = pick(categories);
        categories.splice(categories.indexOf(slug), 1);
        await deleteCategory(db.pool, slug);
      }
      if (step % 10 === 9) await expectProjectionEqualsWriteModel();
    }
    await expectProjectionEqualsWriteModel();
  });
});
