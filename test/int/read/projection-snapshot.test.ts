import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjector, type Projector } from '../../../projector/projector.ts';
import { etagOf } from '../../../src/read/etag.ts';
import { createProjectionMirror, type ProjectionMirror } from '../../../src/read/projection-mirror.ts';
import { createReadService } from '../../../src/read/read-service.ts';
import { prefetchSnapshot, type SnapshotPrefetch } from '../../../src/read/snapshot-file.ts';
import { buildCurrentSnapshot, readSnapshotBytes } from '../../../src/read/snapshot-store.ts';
import { writeSnapshot } from '../../../projector/snapshot-writer.ts';
import { createPool } from '../../../src/db/pool.ts';
import { EmbeddedSearchIndex } from '../../../src/search/embedded/embedded-search-index.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { insertCategory, insertListings, updateListing, type ListingInput } from '../../helpers/write-model.ts';

/**
 * Projection snapshots: the projector writes one, processes load it (from the database, or
 * their local copy) and answer exactly what a process that read every row answers, through
 * the changes that follow and a move to a newer snapshot.
 */

const SITE = 'https://directory.example';
const WORDS = ['ledger', 'pixel', 'keyboard', 'calendar', 'notes', 'typing', 'design', 'budget', 'canvas', 'rocket'];

let db: TestDatabase;
let projector: Projector;
let cacheDir: string;
const ids: string[] = [];
const opened: ProjectionMirror[] = [];

async function mirror(opts: { cache?: string; search?: boolean; prefetch?: Promise<SnapshotPrefetch | undefined> } = {}) {
  const index = opts.search === false ? undefined : new EmbeddedSearchIndex();
  const m = createProjectionMirror({
    pool: db.pool,
    connectionString: db.url,
    ...(index && { embeddedIndex: index, searchFields: index.searchableFields }),
    ...(opts.cache && { snapshotCacheDir: opts.cache }),
    ...(opts.prefetch && { snapshotPrefetch: opts.prefetch }),
    pollMs: 100,
  });
  await m.start();
  opened.push(m);
  return { mirror: m, read: createReadService({ mirror: m, index: index ?? new EmbeddedSearchIndex(), cacheMaxEntries: 0 }) };
}

async function projected(): Promise<{ slug: string; doc: string; website_followed: boolean }[]> {
  const { rows } = await db.pool.query<{ slug: string; doc: string; website_followed: boolean }>('SELECT slug, doc, website_followed FROM projection.products');
  return rows;
}

const QUERIES = [
  {},
  { q: 'ledger' },
  { q: 'keyboard pixel' },
  { q: 'calendr' },
  { q: 'desig' },
  { category: 'apps' },
  { tag: 'ai' },
  { q: 'notes', category: 'games', page: 2, limit: 5 },
  { page: 3, limit: 50 },
  { q: 'zzzz' },
];

/** Every answer of two read services, byte for byte with ETags, over the QUERIES and every slug. */
async function expectSameAnswers(a: Awaited<ReturnType<typeof mirror>>, b: Awaited<ReturnType<typeof mirror>>) {
  for (const q of QUERIES) {
    const query = { page: 1, limit: 20, ...q };
    const [x, y] = [await a.read.search(query), await b.read.search(query)];
    expect(x.body, JSON.stringify(q)).toBe(y.body);
    expect(x.etag).toBe(y.etag);
  }
  for (const row of await projected()) {
    expect(a.read.product(row.slug).body).toBe(b.read.product(row.slug).body);
    expect(a.read.product(row.slug).etag).toBe(b.read.product(row.slug).etag);
  }
  expect(a.read.categories().body).toBe(b.read.categories().body);
  expect(a.mirror.size).toBe(b.mirror.size);
}

async function snapshots(): Promise<{ id: string; version: number; listings: number; complete: boolean }[]> {
  const { rows } = await db.pool.query('SELECT id, version, listings, complete FROM projection.snapshots ORDER BY version');
  return rows;
}

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  cacheDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-snapshot-test-'));
  for (const slug of ['apps', 'games']) await insertCategory(db.pool, { slug });
  const inputs: ListingInput[] = [];
  for (let i = 0; i < 1200; i++) {
    inputs.push({
      slug: `listing-${i}`,
      name: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} ${i}`,
      punchline: `The ${WORDS[(i * 3) % WORDS.length]} tool for ${WORDS[(i * 5) % WORDS.length]} teams`,
      description: `<p>Made for ${WORDS[(i * 11) % WORDS.length]}s, café owners and naïve users.</p>`,
      category: i % 3 === 0 ? 'apps' : i % 3 === 1 ? 'games' : null,
      tags: i % 4 === 0 ? ['ai'] : [],
      status: i % 10 === 0 ? 'hidden' : 'live',
      plan: i % 17 === 0 ? 'premium' : 'free',
      // Several listings share a listing time: ties are ordered by id.
      listed_at: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 3) * 3_600_000 + (i % 3) * 0.25),
    });
  }
  ids.push(...(await insertListings(db.pool, inputs)));
  // Project the catalog, then forget any snapshot written meanwhile: the first process below
  // finds none.
  const first = createProjector({ connectionString: db.url, siteUrl: SITE, pollMs: 100 });
  await first.start();
  await first.catchUp();
  await first.stop();
  await db.pool.query('DELETE FROM projection.snapshots');
}, 120_000);

afterAll(async () => {
  for (const m of opened) await m.stop();
  await projector?.stop();
  await db?.drop();
  await rm(cacheDir, { recursive: true, force: true });
});

describe('projection snapshots', () => {
  let fromRows: Awaited<ReturnType<typeof mirror>>;

  it('without a snapshot, a process builds its catalog from the rows', async () => {
    expect(await snapshots()).toEqual([]);
    fromRows = await mirror();
    projector = createProjector({ connectionString: db.url, siteUrl: SITE, pollMs: 100, snapshotCacheDir: cacheDir });
    await projector.start();
    expect(fromRows.mirror.loadedFrom).toMatch(/rows/);
    const rows = await projected();
    expect(fromRows.mirror.size).toBe(rows.length);
    for (const row of rows) {
      const p = fromRows.mirror.productBySlug(row.slug)!;
      expect(p.bytes.toString('utf8')).toBe(row.doc);
      expect(p.etag).toBe(etagOf(row.doc));
      expect(p.websiteFollowed).toBe(row.website_followed);
    }
  });

  it('the leading projector writes one; a process loads it from the database and answers exactly the same', async () => {
    await projector.ensureSnapshot();
    const written = await snapshots();
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({ complete: true, listings: fromRows.mirror.size });
    // The projector kept a local copy too (a mirror of this process may still be writing its own
    // copy of the same snapshot aside for a moment).
    await expect.poll(() => readdir(cacheDir), { timeout: 5000 }).toEqual([`${written[0]!.id}.snapshot`]);

    const fromDatabase = await mirror();
    expect(fromDatabase.mirror.loadedFrom).toMatch(new RegExp(`${written[0]!.id}.*database`));
    await expectSameAnswers(fromDatabase, fromRows);
  });

  it('a process with a local copy reads it instead of the database; an API process for Meilisearch needs none of the index', async () => {
    const ownCache = await mkdtemp(path.join(os.tmpdir(), 'catalog-snapshot-cache-'));
    try {
      const first = await mirror({ cache: ownCache });
      expect(first.mirror.loadedFrom).toMatch(/database/);
      await until('the local copy is written', async () => (await readdir(ownCache)).some((f) => f.endsWith('.snapshot')));
      const second = await mirror({ cache: ownCache });
      expect(second.mirror.loadedFrom).toMatch(/local copy/);
      await expectSameAnswers(second, fromRows);
    } finally {
      await rm(ownCache, { recursive: true, force: true });
    }
    // No snapshot without the search index was written: such a process builds from the rows.
    const catalogOnly = await mirror({ search: false });
    expect(catalogOnly.mirror.loadedFrom).toMatch(/rows/);
    expect(catalogOnly.mirror.productBySlug('listing-1')!.bytes.toString()).toBe(fromRows.mirror.productBySlug('listing-1')!.bytes.toString());
  });

  it('a read of the local copy begun at start is used when it is the snapshot to load, and a newer stray file is not', async () => {
    const ownCache = await mkdtemp(path.join(os.tmpdir(), 'catalog-snapshot-prefetch-'));
    try {
      await mirror({ cache: ownCache });
      await until('the local copy is written', async () => (await readdir(ownCache)).some((f) => f.endsWith('.snapshot')));
      const [copy] = (await readdir(ownCache)).filter((f) => f.endsWith('.snapshot'));

      // Read early, then the file goes: the process can only have had the bytes from that read.
      const early = prefetchSnapshot(ownCache);
      expect((await early)?.id).toBe(copy!.replace(/\.snapshot$/, ''));
      await (await early)!.done;
      const bytes = await readFile(path.join(ownCache, copy!));
      await rm(path.join(ownCache, copy!));
      const fromEarlyRead = await mirror({ cache: ownCache, prefetch: early });
      expect(fromEarlyRead.mirror.loadedFrom).toMatch(/local copy/);
      await expectSameAnswers(fromEarlyRead, fromRows);
      // The bytes were handed to the mirror once: whoever still holds the early read (the
      // process's start-up) holds none of them, so they go when the mirror moves past them.
      expect(await (await early)!.take()).toBeUndefined();

      // A newer file of a snapshot the database does not name is read early but not used.
      await writeFile(path.join(ownCache, copy!), bytes!);
      await new Promise((resolve) => setTimeout(resolve, 20)); // a later modification time
      await writeFile(path.join(ownCache, `${randomUUID()}.snapshot`), Buffer.alloc(4096, 7));
      const stray = prefetchSnapshot(ownCache);
      expect((await stray)?.id).not.toBe(copy!.replace(/\.snapshot$/, ''));
      const besideStray = await mirror({ cache: ownCache, prefetch: stray });
      expect(besideStray.mirror.loadedFrom).toMatch(/local copy/);
      await expectSameAnswers(besideStray, fromRows);
      // Bytes read early and not used are let go too.
      expect(await (await stray)!.take()).toBeUndefined();

      // An empty folder: nothing to read early.
      expect(await prefetchSnapshot(await mkdtemp(path.join(os.tmpdir(), 'catalog-snapshot-none-')))).toBeUndefined();
    } finally {
      await rm(ownCache, { recursive: true, force: true });
    }
  });

  it('changes after the snapshot show at once, and answers stay those of a process that read the rows', async () => {
    const loaded = await mirror();
    expect(loaded.mirror.loadedFrom).toMatch(/snapshot/);
    await updateListing(db.pool, ids[1]!, { punchline: 'A rocket for every canvas', tags: ['ai', 'fresh'] });
    await updateListing(db.pool, ids[2]!, { status: 'hidden' });
    await updateListing(db.pool, ids[10]!, { status: 'live', slug: 'listing-back', listed_at: new Date(Date.UTC(2027, 0, 1)) });
    await updateListing(db.pool, ids[4]!, { slug: 'listing-renamed' });
    await updateListing(db.pool, ids[5]!, { slug: 'listing-4' });
    await projector.catchUp();
    await loaded.mirror.refresh();
    await fromRows.mirror.refresh();
    expect(loaded.mirror.productBySlug('listing-2')).toBeUndefined();
    expect(loaded.mirror.productBySlug('listing-back')).toBeDefined();
    expect(loaded.mirror.productBySlug('listing-4')!.id).toBe(ids[5]);
    expect(JSON.parse((await loaded.read.search({ q: 'rocket canvas', tag: 'fresh', page: 1, limit: 20 })).body).products[0].slug).toBe('listing-1');
    expect(JSON.parse((await loaded.read.search({ page: 1, limit: 1 })).body).products[0].slug).toBe('listing-back');
    // A process started now (the snapshot and the changes since) and the one that read the
    // rows before them answer the same.
    await expectSameAnswers(loaded, await mirror());
    await expectSameAnswers(loaded, fromRows);
  });

  it('when changes pile up the projector writes a newer snapshot, and a running process moves to it', async () => {
    const running = await mirror();
    const before = (await snapshots())[0]!;
    // The build runs in a worker thread with a connection of its own: held at its first write
    // of a part by a lock taken here, it is seen waiting under that connection's name.
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE projection.snapshot_parts IN SHARE MODE');
      // More than a thousand changes (and a fiftieth of the catalog): a new snapshot is due.
      await db.pool.query(`UPDATE catalog.listings SET punchline = punchline || ' again' WHERE slug LIKE 'listing-%'`);
      await projector.catchUp();
      await until('the build waits to write its first part', async () => {
        const { rows } = await db.pool.query<{ application_name: string }>(
          `SELECT application_name FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO projection.snapshot_parts%'`,
        );
        return rows.length === 1 && rows[0]!.application_name === 'catalog-snapshot';
      });
      expect((await snapshots()).filter((s) => s.complete).map((s) => s.id)).toEqual([before.id]);
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    await until('a newer snapshot is written', async () => (await snapshots()).some((s) => s.version > before.version && s.complete));
    expect((await snapshots()).map((s) => s.id)).not.toContain(before.id);
    await until('the running process moves to it', async () => {
      await running.mirror.refresh();
      return !running.mirror.loadedFrom.includes(before.id);
    });
    await fromRows.mirror.refresh();
    await expectSameAnswers(running, fromRows);
  });

  it('a snapshot older than the removals still kept is not used', async () => {
    await updateListing(db.pool, ids[21]!, { status: 'hidden' });
    await projector.catchUp();
    // Removals up to now are forgotten: the changes since the latest snapshot cannot be known.
    await db.pool.query('UPDATE projection.state SET oldest_version = version');
    // A copy on this host read early, of that snapshot: not used, and let go.
    const early = prefetchSnapshot(cacheDir);
    expect(await early).toBeDefined();
    const m = await mirror({ cache: cacheDir, prefetch: early });
    expect(m.mirror.loadedFrom).toMatch(/rows/);
    expect(await (await early)!.take()).toBeUndefined();
    expect(m.mirror.productBySlug('listing-21')).toBeUndefined();
    await fromRows.mirror.refresh();
    await expectSameAnswers(m, fromRows);
  });

  it('a snapshot in many parts is read on several connections at once, all seeing the rows of the reading transaction', async () => {
    // Without the search index: it replaces no snapshot the tests above use.
    const built = await buildCurrentSnapshot(db.pool, undefined);
    const bytes = built.encode();
    const info = await writeSnapshot(db.pool, built, bytes, 4096);
    const { rows } = await db.pool.query<{ parts: number }>('SELECT count(*)::int AS parts FROM projection.snapshot_parts WHERE snapshot = $1', [info.id]);
    expect(rows[0]!.parts).toBeGreaterThan(8);
    // A pool of its own: the connections it opens are those of the read.
    const pool = createPool(db.url, { max: 10 });
    const client = await pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      await client.query('SELECT 1 FROM projection.snapshots');
      // Gone for every transaction that starts now (as when a newer snapshot replaces it): a
      // reader that did not share this transaction's view would find no parts.
      await db.pool.query('DELETE FROM projection.snapshots WHERE id = $1', [info.id]);
      const read = await readSnapshotBytes(client, info, pool);
      expect(read.equals(bytes)).toBe(true);
      expect(pool.totalCount).toBe(4);
      await client.query('COMMIT');
    } finally {
      client.release();
      await pool.end();
    }
    expect(await snapshots()).not.toContainEqual(expect.objectContaining({ id: info.id }));

    // A pool with no connection to spare: the reading connection reads every part, the helpers
    // waiting for one are not waited for.
    const again = await writeSnapshot(db.pool, built, bytes, 4096);
    const busy = createPool(db.url, { max: 1 });
    const only = await busy.connect();
    try {
      await only.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      expect((await readSnapshotBytes(only, again, busy)).equals(bytes)).toBe(true);
      await only.query('COMMIT');
    } finally {
      only.release();
      await busy.end();
      await db.pool.query('DELETE FROM projection.snapshots WHERE id = $1', [again.id]);
    }
  });
});
