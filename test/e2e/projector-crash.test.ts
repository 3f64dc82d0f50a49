import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import {
  expectedCategoryCounts,
  insertCategory,
  insertListings,
  projectedCategoryCounts,
  projectedDocs,
  recomputedDocs,
  type ListingInput,
} from '../helpers/write-model.ts';

const SITE = 'https://directory.example';
const CATEGORIES = ['apps', 'games', 'tools', 'books', 'empty'];

let db: TestDatabase;
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await db.drop();
});

function startProjectorProcess(): ChildProcess {
  const child = spawn(process.execPath, ['bin/catalog.js', 'projector'], {
    env: { ...process.env, DATABASE_URL: db.url, SITE_URL: SITE, PROJECTOR_BATCH_SIZE: '50', PROJECTOR_POLL_MS: '100', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

interface Progress {
  done: number;
  behind: number;
}

/** Outbox rows at or before the projection checkpoint, and after it. */
async function progress(): Promise<Progress> {
  const { rows } = await db.pool.query<Progress>(
    `SELECT count(*) FILTER (WHERE (o.txid, o.seq) <= (c.txid, c.seq))::int AS done,
            count(*) FILTER (WHERE (o.txid, o.seq) > (c.txid, c.seq))::int AS behind
       FROM catalog.outbox o, projection.checkpoints c WHERE c.name = 'projection'`,
  );
  return rows[0]!;
}

describe('projector process', () => {
  it('recovers from SIGKILL in the middle of a backlog: nothing doubled, nothing lost', async () => {
    // A projection built for this site before the projector went down (a projection built for
    // no or another site is rebuilt at once, in one transaction, instead of batch by batch).
    await db.pool.query('UPDATE projection.state SET site_url = $1', [SITE]);
    for (const slug of CATEGORIES) await insertCategory(db.pool, { slug });
    // A backlog of about 5,000 listing changes: 2,000 new listings, then 3,000 updates that move
    // listings between categories and states, in transactions of various sizes.
    const inputs: ListingInput[] = [];
    for (let i = 0; i < 2000; i++) {
      inputs.push({ category: CATEGORIES[i % 4]!, status: i % 7 === 0 ? 'pending' : 'live', plan: i % 5 === 0 ? 'premium' : 'free', highlights: ['One'] });
    }
    for (let i = 0; i < 2000; i += 250) await insertListings(db.pool, inputs.slice(i, i + 250));
    await db.pool.query(`UPDATE catalog.listings SET category = 'books' WHERE id IN (SELECT id FROM catalog.listings ORDER BY id LIMIT 1000)`);
    await db.pool.query(`UPDATE catalog.listings SET status = CASE WHEN status = 'live' THEN 'hidden'::catalog.listing_status ELSE 'live' END
                          WHERE id IN (SELECT id FROM catalog.listings ORDER BY slug LIMIT 1000)`);
    for (let i = 0; i < 10; i++) {
      await db.pool.query(`UPDATE catalog.listings SET featured = NOT featured WHERE id IN (SELECT id FROM catalog.listings ORDER BY md5(id::text || $1) LIMIT 100)`, [String(i)]);
    }
    expect((await progress()).behind).toBeGreaterThan(4500);

    const first = startProjectorProcess();
    // Kill it once the checkpoint moved, before the end.
    await expect.poll(async () => (await progress()).done, { timeout: 20_000, interval: 10 }).toBeGreaterThan(0);
    first.kill('SIGKILL');
    await once(first, 'exit');
    const atKill = await progress();
    expect(atKill.done).toBeGreaterThan(0);
    expect(atKill.behind).toBeGreaterThan(0);

    const second = startProjectorProcess();
    await expect.poll(async () => (await progress()).behind, { timeout: 60_000, interval: 100 }).toBe(0);

    expect(await projectedDocs(db.pool)).toEqual(await recomputedDocs(db.pool, SITE, new Date().toISOString().slice(0, 10)));
    expect(await projectedCategoryCounts(db.pool)).toEqual(await expectedCategoryCounts(db.pool));
    const removed = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM projection.removed r JOIN projection.products p USING (id)',
    );
    expect(removed.rows[0]!.n).toBe(0);

    // SIGTERM: finish the batch, exit 0.
    second.kill('SIGTERM');
    const [code] = (await once(second, 'exit')) as [number | null];
    expect(code).toBe(0);
  }, 120_000);
});
