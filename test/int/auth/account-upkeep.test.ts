import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKey, keyUsage, pruneKeyUsage } from '../../../src/auth/consumer-keys/consumer-keys.ts';
import { pruneOAuthRecords } from '../../../src/auth/oauth-store.ts';
import { pruneSessions } from '../../../src/auth/sessions.ts';
import { claimScheduledRun } from '../../../src/auth/upkeep.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

it('forgets expired authorization records, idle clients, old refresh answers, expired sessions and old sign-in links, and keeps the rest', async () => {
  const { pool } = db;
  const maker = (await pool.query<{ id: string }>(`INSERT INTO catalog.makers (email) VALUES ('upkeep@example.com') RETURNING id`)).rows[0]!.id;
  await pool.query(`INSERT INTO auth.oauth_records (kind, id_key, payload, expires_at, last_used_at) VALUES
    ('AuthorizationCode', 'expired', '{}', now() - interval '2 hours', now()),
    ('AuthorizationCode', 'fresh', '{}', now() + interval '1 minute', now()),
    ('Client', 'idle', '{}', NULL, now() - interval '31 days'),
    ('Client', 'used', '{}', NULL, now() - interval '1 day')`);
  await pool.query(`INSERT INTO auth.refresh_replays (token_hash, sealed, expires_at) VALUES ('\\x01', '\\x00', now() - interval '1 second'), ('\\x02', '\\x00', now() + interval '5 seconds')`);
  await pool.query(`INSERT INTO catalog.sessions (token_hash, maker_id, expires_at) VALUES ('\\x01', $1, now() - interval '1 second'), ('\\x02', $1, now() + interval '1 day')`, [maker]);
  await pool.query(`INSERT INTO catalog.sign_in_links (token_hash, email, expires_at) VALUES ('\\x01', 'a@example.com', now() - interval '2 days'), ('\\x02', 'a@example.com', now() - interval '1 hour')`);

  await pruneOAuthRecords(pool, 30 * 86_400);
  await pruneSessions(pool);

  expect((await pool.query(`SELECT id_key FROM auth.oauth_records ORDER BY id_key`)).rows.map((r) => r.id_key)).toEqual(['fresh', 'used']);
  expect((await pool.query(`SELECT count(*)::int AS n FROM auth.refresh_replays`)).rows[0].n).toBe(1);
  expect((await pool.query(`SELECT count(*)::int AS n FROM catalog.sessions`)).rows[0].n).toBe(1);
  // A used or expired link stays a day, so opening it still says "expired" rather than "unknown".
  expect((await pool.query(`SELECT count(*)::int AS n FROM catalog.sign_in_links`)).rows[0].n).toBe(1);
});

it("keeps a consumer key's usage 400 days: the day 400 days back stays, the day before goes", async () => {
  const { pool } = db;
  await createKey(pool, { name: 'upkeep-usage' });
  const { rows } = await pool.query<{ id: string }>(`SELECT id FROM auth.consumer_keys WHERE name = 'upkeep-usage'`);
  const today = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()));
  const daysAgo = (n: number) => new Date(today.getTime() - n * 86_400_000).toISOString().slice(0, 10);
  for (const n of [0, 399, 400, 401]) {
    await pool.query(`INSERT INTO auth.consumer_key_usage (key_id, day, search, last_used_at) VALUES ($1, $2, $3, now())`, [rows[0]!.id, daysAgo(n), n + 1]);
  }
  await pruneKeyUsage(pool);
  const kept = await pool.query<{ day: string }>(`SELECT to_char(day, 'YYYY-MM-DD') AS day FROM auth.consumer_key_usage WHERE key_id = $1 ORDER BY day`, [rows[0]!.id]);
  expect(kept.rows.map((r) => r.day)).toEqual([daysAgo(400), daysAgo(399), daysAgo(0)]);
  // What is kept is still reported, the oldest kept day included.
  const usage = await keyUsage(pool, { name: 'upkeep-usage', days: 401 });
  expect(usage.keys[0]!.days[0]).toMatchObject({ date: daysAgo(400), search: 401 });
});

it('runs once per cluster: of processes asking at the same moment one claims the run, and the next only after the interval', async () => {
  const { pool } = db;
  const hour = 3_600_000;
  const asked = await Promise.all(Array.from({ length: 6 }, (_, i) => claimScheduledRun(pool, 'test-job', hour, `process ${i}`)));
  expect(asked.filter(Boolean)).toHaveLength(1);
  expect(await claimScheduledRun(pool, 'test-job', hour, 'late process')).toBe(false);
  await pool.query(`UPDATE auth.scheduled_runs SET started_at = now() - interval '61 minutes' WHERE job = 'test-job'`);
  const again = await Promise.all(Array.from({ length: 6 }, (_, i) => claimScheduledRun(pool, 'test-job', hour, `process ${i}`)));
  expect(again.filter(Boolean)).toHaveLength(1);
  const { rows } = await pool.query<{ runs: number; started_by: string }>(`SELECT runs::int AS runs, started_by FROM auth.scheduled_runs WHERE job = 'test-job'`);
  expect(rows[0]!.runs).toBe(2);
  expect(rows[0]!.started_by).toMatch(/^process \d$/);
});
