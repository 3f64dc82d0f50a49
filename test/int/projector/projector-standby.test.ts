import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEADER_APPLICATION_NAME, createLeadership } from '../../../src/db/leadership.ts';
import { silentLog } from '../../../src/util/log.ts';
import { PROJECTOR_LEADER_LOCK } from '../../../src/db/locks.ts';
import { createProjector, type Projector } from '../../../projector/projector.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { insertListing } from '../../helpers/write-model.ts';

const SITE = 'https://directory.example';

let db: TestDatabase;
const projectors: Projector[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await Promise.all(projectors.map((p) => p.stop()));
  await db.drop();
});

function projector(): Projector {
  const p = createProjector({ connectionString: db.url, siteUrl: SITE, pollMs: 100 });
  projectors.push(p);
  return p;
}

async function projected(id: string): Promise<boolean> {
  const { rowCount } = await db.pool.query('SELECT 1 FROM projection.products WHERE id = $1', [id]);
  return rowCount === 1;
}

/** Backend pids of the sessions holding projector leadership on this database. */
async function leaderSessions(): Promise<number[]> {
  const { rows } = await db.pool.query<{ pid: number }>(
    `SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objid = $1 AND a.datname = current_database()
        AND a.application_name = $2`,
    [PROJECTOR_LEADER_LOCK, LEADER_APPLICATION_NAME],
  );
  return rows.map((r) => r.pid);
}

describe('leadership', () => {
  it('a standby takes over when the leading projector process is killed', async () => {
    const child = spawn(process.execPath, ['bin/catalog.js', 'projector'], {
      env: { ...process.env, DATABASE_URL: db.url, SITE_URL: SITE, PROJECTOR_POLL_MS: '100', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    await expect.poll(leaderSessions, { timeout: 20_000 }).toHaveLength(1);
    const standby = projector();
    await standby.start();
    expect(standby.isLeader).toBe(false);

    const before = await insertListing(db.pool);
    await expect.poll(() => projected(before), { timeout: 10_000 }).toBe(true);

    child.kill('SIGKILL');
    await expect.poll(() => standby.isLeader, { timeout: 10_000 }).toBe(true);
    const after = await insertListing(db.pool);
    await expect.poll(() => projected(after), { timeout: 10_000 }).toBe(true);
    await standby.stop();
  });

  it('a projector whose leadership session ends stops leading, and one projector leads again', async () => {
    const first = projector();
    await first.start();
    const second = projector();
    await second.start();
    expect([first.isLeader, second.isLeader]).toEqual([true, false]);

    const [pid] = await leaderSessions();
    // Waits (up to 5 s) until that backend has ended and its locks are gone.
      await db.pool.query('SELECT pg_terminate_backend($1, 5000)', [pid]);
    // Either may win the lock again, never both.
    await expect.poll(async () => (await leaderSessions()).length, { timeout: 10_000 }).toBe(1);
    await expect.poll(() => Number(first.isLeader) + Number(second.isLeader), { timeout: 10_000 }).toBe(1);
    const after = await insertListing(db.pool);
    await expect.poll(() => projected(after), { timeout: 10_000 }).toBe(true);

    // Stopping the leader hands over to the other one.
    const [leader, other] = first.isLeader ? [first, second] : [second, first];
    await leader.stop();
    await expect.poll(() => other.isLeader, { timeout: 10_000 }).toBe(true);
    const last = await insertListing(db.pool);
    await expect.poll(() => projected(last), { timeout: 10_000 }).toBe(true);
  });
});

describe('fencing', () => {
  it('a leader asks PostgreSQL before each write whether its session still holds the lock, and stops leading when it does not', async () => {
    // A key of its own, above 2^32, so the test also covers both halves of a bigint key.
    const lock = 2 ** 40 + 7_430_011;
    const leadership = createLeadership(db.url, { log: silentLog, onLost: () => undefined, lock, applicationName: 'fencing-test' });
    const sessions = async () =>
      (await db.pool.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'fencing-test' AND datname = current_database()`)).rows.map((r) => r.pid);
    try {
      expect(await leadership.tryAcquire()).toBe(true);
      expect(await leadership.stillHeld(db.pool)).toBe(true);
      const [pid] = await sessions();
      // Waits (up to 5 s) until that backend has ended and its locks are gone.
      await db.pool.query('SELECT pg_terminate_backend($1, 5000)', [pid]);
      // Whether or not the process has heard of its session's end yet, the answer is no.
      expect(await leadership.stillHeld(db.pool)).toBe(false);
      expect(leadership.isLeader).toBe(false);
    } finally {
      await leadership.release();
    }
  });
});
