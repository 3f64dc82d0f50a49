import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pruneChanges } from '../../../projector/change-log.ts';
import { PROJECTION_WRITE_LOCK } from '../../../src/db/locks.ts';
import { createProjector, type Projector, type ProjectorOptions } from '../../../projector/projector.ts';
import { reindex } from '../../../projector/reindex.ts';
import { withTransaction } from '../../../src/db/pool.ts';
import { changesAfter, logHead, projectedCatalog, replayedLog } from '../../helpers/change-feed.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { deleteListing, insertCategory, insertListing, updateListing } from '../../helpers/write-model.ts';

/**
 * The change log the projector writes with the projection (projection.changes): exactly the
 * public differences, slug by slug, at gapless positions; a rebuild adds only what differs;
 * pruning forgets a prefix and records where it stopped.
 */
const SITE = 'https://directory.example';

let db: TestDatabase;
const running: Projector[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await insertCategory(db.pool, { slug: 'design' });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
  // Whatever a test did, the log's positions are gapless, and the whole log replayed (while
  // nothing of it is pruned) is the projection.
  const { rows } = await db.pool.query<{ pruned: number }>('SELECT changes_pruned_through AS pruned FROM projection.state');
  const pruned = rows[0]!.pruned;
  const changes = await changesAfter(db.pool);
  expect(changes.map((c) => c.position)).toEqual(changes.map((_, i) => pruned + i + 1));
  expect(await logHead(db.pool)).toBe(pruned + changes.length);
  if (pruned === 0) expect(await replayedLog(db.pool)).toEqual(await projectedCatalog(db.pool));
});
afterAll(async () => {
  await db.drop();
});

async function projector(opts: Partial<ProjectorOptions> = {}): Promise<Projector> {
  const p = createProjector({ connectionString: db.url, siteUrl: SITE, pollMs: 100, ...opts });
  running.push(p);
  await p.start();
  await p.catchUp();
  return p;
}

async function docOf(slug: string): Promise<string | undefined> {
  const { rows } = await db.pool.query<{ doc: string }>('SELECT doc FROM projection.products WHERE slug = $1', [slug]);
  return rows[0]?.doc;
}

/** The changes a write adds, once projected. */
async function changesOf(p: Projector, write: () => Promise<unknown>): Promise<Array<{ op: string; slug: string; doc: string | null }>> {
  const before = await logHead(db.pool);
  await write();
  await p.catchUp();
  return (await changesAfter(db.pool, before)).map(({ op, slug, doc }) => ({ op, slug, doc }));
}

describe('the change log', () => {
  it('a new live listing is an upsert of its Product, as projected; a draft is nothing', async () => {
    const p = await projector();
    const added = await changesOf(p, () => insertListing(db.pool, { slug: 'fresh-one', category: 'design' }));
    expect(added).toEqual([{ op: 'upsert', slug: 'fresh-one', doc: await docOf('fresh-one') }]);
    expect(await changesOf(p, () => insertListing(db.pool, { slug: 'just-a-draft', status: 'draft' }))).toEqual([]);
  });

  it('an edit of what the Product shows is an upsert; a change it does not show is nothing', async () => {
    const p = await projector();
    const id = await insertListing(db.pool, { slug: 'edited-one' });
    await p.catchUp();
    const edited = await changesOf(p, () => updateListing(db.pool, id, { name: 'Edited One' }));
    expect(edited).toEqual([{ op: 'upsert', slug: 'edited-one', doc: await docOf('edited-one') }]);
    expect(JSON.parse(edited[0]!.doc!)).toMatchObject({ name: 'Edited One' });
    // Premium without a premium profile: the listing page follows the link, the Product is the same.
    const version = async () => (await db.pool.query<{ version: number }>('SELECT version FROM projection.state')).rows[0]!.version;
    const at = await version();
    expect(await changesOf(p, () => updateListing(db.pool, id, { plan: 'premium' }))).toEqual([]);
    expect(await version()).toBeGreaterThan(at);
  });

  it('a listing that leaves live is a delete, and an upsert when it comes back; a deleted one is a delete', async () => {
    const p = await projector();
    const id = await insertListing(db.pool, { slug: 'comes-and-goes' });
    await p.catchUp();
    for (const status of ['hidden', 'pending', 'rejected'] as const) {
      expect(await changesOf(p, () => updateListing(db.pool, id, { status }))).toEqual([{ op: 'delete', slug: 'comes-and-goes', doc: null }]);
      expect(await changesOf(p, () => updateListing(db.pool, id, { status: 'live' }))).toEqual([
        { op: 'upsert', slug: 'comes-and-goes', doc: await docOf('comes-and-goes') },
      ]);
    }
    expect(await changesOf(p, () => deleteListing(db.pool, id))).toEqual([{ op: 'delete', slug: 'comes-and-goes', doc: null }]);
    // Hidden and deleted without ever being projected live: nothing.
    expect(await changesOf(p, async () => deleteListing(db.pool, await insertListing(db.pool, { status: 'hidden' })))).toEqual([]);
  });

  it('a slug change is a delete of the old slug, then an upsert of the new one', async () => {
    const p = await projector();
    const id = await insertListing(db.pool, { slug: 'before-rename' });
    await p.catchUp();
    expect(await changesOf(p, () => updateListing(db.pool, id, { slug: 'after-rename' }))).toEqual([
      { op: 'delete', slug: 'before-rename', doc: null },
      { op: 'upsert', slug: 'after-rename', doc: await docOf('after-rename') },
    ]);
  });

  it('two listings swapping slugs in one transaction are two upserts', async () => {
    const p = await projector();
    const a = await insertListing(db.pool, { slug: 'swap-a' });
    const b = await insertListing(db.pool, { slug: 'swap-b' });
    await p.catchUp();
    const swapped = await changesOf(p, () =>
      withTransaction(db.pool, async (c) => {
        await updateListing(c, a, { slug: 'swap-tmp' });
        await updateListing(c, b, { slug: 'swap-a' });
        await updateListing(c, a, { slug: 'swap-b' });
      }),
    );
    expect(swapped).toEqual([
      { op: 'upsert', slug: 'swap-a', doc: await docOf('swap-a') },
      { op: 'upsert', slug: 'swap-b', doc: await docOf('swap-b') },
    ]);
    expect(JSON.parse(swapped[0]!.doc!)).toMatchObject({ id: b });
  });

  it('a promo that lapses is an upsert, without any write', async () => {
    let clock = new Date('2030-01-10T12:00:00Z');
    const p = await projector({ now: () => clock });
    const id = await insertListing(db.pool, { slug: 'promo-lapses', promo_code: 'LAST', promo_discount: '20% off', promo_expires_at: '2030-01-10' });
    await p.catchUp();
    const lapsed = await changesOf(p, async () => {
      clock = new Date('2030-01-11T00:00:01Z');
    });
    expect(lapsed).toEqual([{ op: 'upsert', slug: 'promo-lapses', doc: await docOf('promo-lapses') }]);
    expect(JSON.parse(lapsed[0]!.doc!)).toMatchObject({ promo: null });
    // The other tests compare with documents built today.
    await p.stop();
    running.length = 0;
    await deleteListing(db.pool, id);
    await projector();
  });

  it('a rebuild adds only the differences: none when nothing public changed', async () => {
    const p = await projector();
    for (let i = 0; i < 5; i++) await insertListing(db.pool, { slug: `rebuilt-${i}` });
    await p.catchUp();
    await p.stop();
    running.length = 0;
    const head = await logHead(db.pool);
    const same = await reindex({ pool: db.pool, siteUrl: SITE, batchSize: 2 });
    expect(same.changes).toBe(0);
    expect(await logHead(db.pool)).toBe(head);

    // The projection drifted from the write model (a row lost, a document stale, a stray row).
    await db.pool.query(`DELETE FROM projection.products WHERE slug = 'rebuilt-0'`);
    await db.pool.query(`UPDATE projection.products SET doc = replace(doc, 'Punchline', 'Stale') WHERE slug = 'rebuilt-1'`);
    await db.pool.query(`UPDATE projection.products SET slug = 'stray-slug' WHERE slug = 'rebuilt-2'`);
    // The feed follows what was public: the drift itself as the log would have said it.
    await db.pool.query(`WITH h AS (UPDATE projection.state SET change_position = change_position + 4 RETURNING change_position)
      INSERT INTO projection.changes (position, op, slug, doc)
      SELECT h.change_position - 4 + v.n, v.op, v.slug, (SELECT doc FROM projection.products p WHERE p.slug = v.slug)
        FROM h, (VALUES (1, 'delete', 'rebuilt-0'), (2, 'upsert', 'rebuilt-1'), (3, 'delete', 'rebuilt-2'), (4, 'upsert', 'stray-slug')) AS v(n, op, slug)`);
    const fixed = await reindex({ pool: db.pool, siteUrl: SITE, batchSize: 2 });
    const after = (await changesAfter(db.pool, head + 4)).map(({ op, slug }) => ({ op, slug }));
    expect(after).toEqual([
      { op: 'delete', slug: 'stray-slug' },
      { op: 'upsert', slug: 'rebuilt-0' },
      { op: 'upsert', slug: 'rebuilt-1' },
      { op: 'upsert', slug: 'rebuilt-2' },
    ]);
    expect(fixed.changes).toBe(4);
  });

  it('a new SITE_URL changes every Product: one upsert each', async () => {
    const live = (await projectedCatalog(db.pool)).size;
    const head = await logHead(db.pool);
    await projector({ siteUrl: 'https://moved.example' });
    const changes = await changesAfter(db.pool, head);
    expect(changes).toHaveLength(live);
    expect(changes.every((c) => c.op === 'upsert' && JSON.parse(c.doc!).url === `https://moved.example/products/${c.slug}`)).toBe(true);
    await Promise.all(running.splice(0).map((r) => r.stop()));
    await projector();
  });
});

describe('pruning the change log', () => {
  const state = async () =>
    (await db.pool.query<{ change_position: number; changes_pruned_through: number }>('SELECT change_position, changes_pruned_through FROM projection.state')).rows[0]!;
  const prune = (hours: number, limit?: number) =>
    withTransaction(db.pool, async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1)', [PROJECTION_WRITE_LOCK]);
      return pruneChanges(c, hours, limit);
    });

  it('forgets the changes older than the retention, oldest first, and records where it stopped', async () => {
    const { change_position: head } = await state();
    expect(head).toBeGreaterThan(10);
    expect(await prune(7 * 24)).toBe(0);
    // The first ten changes are eight days old.
    await db.pool.query(`UPDATE projection.changes SET changed_at = now() - interval '8 days' WHERE position <= 10`);
    expect(await prune(7 * 24, 4)).toBe(4);
    expect((await state()).changes_pruned_through).toBe(4);
    expect(await prune(7 * 24)).toBe(6);
    expect(await state()).toEqual({ change_position: head, changes_pruned_through: 10 });
    const kept = await db.pool.query<{ min: number; n: number }>('SELECT min(position)::int AS min, count(*)::int AS n FROM projection.changes');
    expect(kept.rows[0]).toEqual({ min: 11, n: head - 10 });
    expect(await prune(7 * 24)).toBe(0);
    // Everything old: everything goes, and the mark reaches the head.
    await db.pool.query(`UPDATE projection.changes SET changed_at = now() - interval '8 days'`);
    expect(await prune(7 * 24)).toBe(head - 10);
    expect(await state()).toEqual({ change_position: head, changes_pruned_through: head });
    // The log goes on from there.
    const p = await projector();
    await insertListing(db.pool, { slug: 'after-pruning' });
    await p.catchUp();
    expect((await changesAfter(db.pool, 0)).map((c) => [c.position, c.slug])).toEqual([[head + 1, 'after-pruning']]);
  });
});
