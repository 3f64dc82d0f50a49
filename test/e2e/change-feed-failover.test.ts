import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importCatalog } from '../../src/catalog/import/import-catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { startService, type RunningService } from '../../src/service.ts';
import { CatalogCopy, changesAfter, logHead, positionOf } from '../helpers/change-feed.ts';
import { randomCatalogWrites } from '../helpers/catalog-writes.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertCategory } from '../helpers/write-model.ts';

/**
 * The feed across a change of projector and a rebuild: two `catalog projector` processes on one
 * database, the leader killed with SIGKILL while writes run, `catalog reindex` run meanwhile; a
 * consumer that exported before and follows the feed throughout sees every change once, in
 * order, with no gap, and ends equal to the live catalog.
 */
const SITE = 'https://directory.example';
const CATEGORIES = ['apps', 'games', 'tools'];
const MAKERS = ['one@makers.example', 'two@makers.example'];

let db: TestDatabase;
let api: RunningService;
const children: ChildProcess[] = [];

function startProjector(): { child: ChildProcess; leading: Promise<void> } {
  const child = spawn(process.execPath, ['bin/catalog.js', 'projector'], {
    env: { ...process.env, DATABASE_URL: db.url, SITE_URL: SITE, PROJECTOR_BATCH_SIZE: '5', PROJECTOR_POLL_MS: '100', LOG_LEVEL: 'info', LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const leading = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('"projector is leading"')) resolve();
    });
    child.once('exit', (code, signal) => reject(new Error(`projector exited (${code ?? signal}) before leading`)));
  });
  leading.catch(() => undefined);
  return { child, leading };
}

/** Every committed outbox row is behind the projection checkpoint. */
async function caughtUp(): Promise<boolean> {
  const { rows } = await db.pool.query<{ behind: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM catalog.outbox o, projection.checkpoints c
                     WHERE c.name = 'projection' AND (o.txid, o.seq) > (c.txid, c.seq)) AS behind`,
  );
  return !rows[0]!.behind;
}

beforeAll(async () => {
  db = await createTestDatabase();
  for (const slug of CATEGORIES) await insertCategory(db.pool, { slug });
  const lines = Array.from({ length: 150 }, (_, i) =>
    JSON.stringify({
      kind: 'listing',
      slug: `before-${i}`,
      name: `Before ${i}`,
      punchline: `Listed before the failover ${i}`,
      description: '<p>A listing.</p>',
      website: `https://before-${i}.example.com`,
      category: CATEGORIES[i % 3],
      status: i % 5 === 0 ? 'pending' : 'live',
      listed_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
      maker_email: MAKERS[i % 2],
    }),
  );
  expect((await importCatalog(db.pool, lines)).errors).toEqual([]);
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await api?.close();
  await db.drop();
});

describe('the change feed across projector failover and a rebuild', () => {
  it('stays gapless and in order, and the copy ends equal to the live catalog', async () => {
    const first = startProjector();
    await first.leading;
    const second = startProjector();
    await expect.poll(caughtUp, { timeout: 30_000, interval: 50 }).toBe(true);

    const config = loadConfig(
      {},
      {
        DATABASE_URL: db.url,
        HOST: '127.0.0.1',
        PORT: '0',
        SITE_URL: SITE,
        LOG_LEVEL: 'silent',
        PROJECTOR_POLL_MS: '100',
        RATE_LIMIT_CHANGES_PER_MIN: '1000000',
        RATE_LIMIT_EXPORT_PER_MIN: '1000',
        RATE_LIMIT_OTHER_PER_MIN: '1000000',
      },
    );
    api = await startService(config, { projector: false, demo: false, logger: pino({ level: 'silent' }) });
    const base = `${api.url}/api/v1`;
    const copy = new CatalogCopy(base);
    await copy.export();
    const exportedAt = positionOf(copy.cursor);

    let killAt!: () => void;
    const killTime = new Promise<void>((r) => (killAt = r));
    let rebuildAt!: () => void;
    const rebuildTime = new Promise<void>((r) => (rebuildAt = r));
    let writing = true;
    const writes = randomCatalogWrites({
      pool: db.pool,
      urls: api.maker.urls,
      mailer: api.accounts.mailer,
      writes: 600,
      concurrency: 4,
      seed: 1818,
      categories: CATEGORIES,
      makers: MAKERS,
      onWrite: (made) => {
        if (made === 150) killAt();
        if (made === 350) rebuildAt();
      },
    }).finally(() => (writing = false));

    const following = (async () => {
      while (writing) await copy.poll({ wait: 1, limit: 50 });
    })();

    // The leader dies mid-stream, without a chance to finish its batch or release its lock.
    await killTime;
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    await second.leading;

    // A rebuild of the whole projection while the new leader projects and the writes go on.
    await rebuildTime;
    const rebuilt = await promisify(execFile)(process.execPath, ['bin/catalog.js', 'reindex'], {
      env: { ...process.env, DATABASE_URL: db.url, SITE_URL: SITE, LOG_LEVEL: 'warn' },
    });
    expect(rebuilt.stdout).toMatch(/^reindexed: \d+ live products, .* \d+ changes? in the change feed; projection version \d+/);

    expect((await writes).made).toBe(600);
    await following;
    await expect.poll(caughtUp, { timeout: 60_000, interval: 50 }).toBe(true);
    await api.mirror.refresh();
    await copy.drain();

    // The log itself is gapless from its start, and the copy took every change after its export once, in order.
    const log = await changesAfter(db.pool, 0);
    expect(log.map((c) => c.position)).toEqual(log.map((_, i) => i + 1));
    expect(await logHead(db.pool)).toBe(log.length);
    expect(copy.applied.map(positionOf)).toEqual(log.filter((c) => c.position > exportedAt).map((c) => c.position));
    expect(positionOf(copy.cursor)).toBe(log.length);

    const { rows } = await db.pool.query<{ slug: string }>(`SELECT slug FROM catalog.listings WHERE status = 'live' ORDER BY slug`);
    expect([...copy.products.keys()].sort()).toEqual(rows.map((r) => r.slug));
    const projected = await db.pool.query<{ slug: string; doc: string }>('SELECT slug, doc FROM projection.products');
    expect(new Map(projected.rows.map((r) => [r.slug, r.doc]))).toEqual(copy.products);
    for (const slug of rows.slice(0, 50).map((r) => r.slug)) {
      expect(await (await fetch(`${base}/products/${slug}`)).text()).toBe(copy.products.get(slug));
    }

    second.child.kill('SIGTERM');
    await once(second.child, 'exit');
  }, 180_000);
});
