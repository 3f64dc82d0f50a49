import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHeartbeat, type HeartbeatState } from '../../../src/ops/heartbeat.ts';
import { silentLog } from '../../../src/util/log.ts';
import { SERVICE_VERSION } from '../../../src/util/version.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

/**
 * A process's heartbeat in ops.processes: written at once and on each beat with what the process
 * says of itself, a change of leadership written without waiting for the next beat, rows of
 * processes gone for 10 minutes pruned, its own row deleted when it stops.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

interface Row {
  command: string;
  host: string;
  pid: number;
  service_version: string;
  url: string | null;
  leads: boolean | null;
  leader_session_pid: number | null;
  projection_version: number | null;
  mirror_checked_at: Date | null;
}

async function row(id: string): Promise<Row | undefined> {
  const { rows } = await db.pool.query<Row>('SELECT * FROM ops.processes WHERE id = $1', [id]);
  return rows[0];
}

async function until<T>(what: () => Promise<T>, holds: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await what();
    if (holds(value)) return value;
    if (Date.now() > deadline) throw new Error(`never held; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the heartbeat', () => {
  it('says who the process is, writes a change of leadership at once, and deletes its row when it stops', async () => {
    const checkedAt = Date.UTC(2026, 10, 27, 12, 0, 0);
    let state: HeartbeatState = { leads: false, projectionVersion: 41, mirrorCheckedAt: checkedAt };
    // A beat every hour: only the first write and a change of leadership can write within the test.
    const heartbeat = startHeartbeat({ db: db.pool, command: 'serve', url: 'http://127.0.0.1:3000', state: () => state, log: silentLog, intervalMs: 3_600_000 });
    try {
      const first = await until(() => row(heartbeat.id), (r) => r !== undefined);
      expect(first).toMatchObject({ command: 'serve', host: os.hostname(), pid: process.pid, service_version: SERVICE_VERSION, url: 'http://127.0.0.1:3000', leads: false, leader_session_pid: null, projection_version: 41 });
      expect(first!.mirror_checked_at!.getTime()).toBe(checkedAt);

      state = { leads: true, leaderSessionPid: 4242, projectionVersion: 42, mirrorCheckedAt: checkedAt };
      const leading = await until(() => row(heartbeat.id), (r) => r?.leads === true);
      expect(leading).toMatchObject({ leads: true, leader_session_pid: 4242, projection_version: 42 });
    } finally {
      await heartbeat.stop();
    }
    expect(await row(heartbeat.id)).toBeUndefined();
  });

  it('prunes the rows of processes not seen for 10 minutes, and keeps the others', async () => {
    await db.pool.query(
      `INSERT INTO ops.processes (id, command, host, pid, service_version, started_at, seen_at) VALUES
         ('00000000-0000-4000-8000-000000000001', 'api', 'gone', 1, '0.9.0', now() - interval '1 hour', now() - interval '11 minutes'),
         ('00000000-0000-4000-8000-000000000002', 'api', 'quiet', 2, '0.9.0', now() - interval '1 hour', now() - interval '9 minutes')`,
    );
    const heartbeat = startHeartbeat({ db: db.pool, command: 'projector', state: () => ({ leads: false }), log: silentLog, intervalMs: 3_600_000 });
    try {
      await heartbeat.beat();
      const { rows } = await db.pool.query<{ host: string }>('SELECT host FROM ops.processes ORDER BY host');
      expect(rows.map((r) => r.host).sort()).toEqual([os.hostname(), 'quiet'].sort());
    } finally {
      await heartbeat.stop();
    }
  });
});
