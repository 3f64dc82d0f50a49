import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Queryable } from '../db/pool.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import type { Log } from '../util/log.ts';
import { withDeadline } from '../util/deadline.ts';
import { SERVICE_VERSION } from '../util/version.ts';

/**
 * Each `catalog serve`, `api` and `projector` process says who it is in `ops.processes` (migration
 * 014) every HEARTBEAT_MS, so that `catalog status` can list the API processes seen in the last
 * minute and the projectors standing by: nothing else records them (the leader's lock names a
 * session, not a process; the leader's row names that session). A timer of its own, one beat at
 * a time, never on a request's way; a beat that fails (the database away) is skipped, and the
 * next one writes again.
 */
export const HEARTBEAT_MS = 10_000;
/** Rows not written for this long belong to processes that died without stopping: pruned. */
const HEARTBEAT_PRUNE_MINUTES = 10;

/** How often the process's own state is looked at for a change of leadership. */
const LOOK_MS = 1_000;
/** A beat a frozen database leaves unanswered is given up after this; a stop waits at most STOP_DELETE_MS. */
const BEAT_DEADLINE_MS = 5_000;
const STOP_DELETE_MS = 2_000;

export type ProcessCommand = 'serve' | 'api' | 'projector';

/** What a process says of itself at each beat. */
export interface HeartbeatState {
  /** Whether its projector leads; undefined when it runs none. */
  leads?: boolean | undefined;
  /** While leading, the backend pid of the session holding the leader's lock. */
  leaderSessionPid?: number | undefined;
  /** The projection version its mirror serves, and when the mirror last found it current (ms). */
  projectionVersion?: number | undefined;
  mirrorCheckedAt?: number | undefined;
}

export interface Heartbeat {
  /** The row's id. */
  readonly id: string;
  /** Writes a beat now (resolves once written or skipped). */
  beat(): Promise<void>;
  /** Stops beating and deletes the row (best effort: a database away leaves it to be pruned). */
  stop(): Promise<void>;
}

export function startHeartbeat(opts: {
  db: Queryable;
  command: ProcessCommand;
  url?: string | undefined;
  state: () => HeartbeatState;
  log: Log;
  intervalMs?: number;
}): Heartbeat {
  const id = randomUUID();
  const startedAt = new Date();
  const host = os.hostname();
  let running: Promise<void> | undefined;
  let writing: Promise<unknown> | undefined;
  let stopped = false;
  let failing = false;

  /** The leadership last written, and when. */
  let written: { session: number | undefined; at: number } | undefined;

  async function write(): Promise<void> {
    const s = opts.state();
    written = { session: s.leaderSessionPid, at: Date.now() };
    await opts.db.query(
      `INSERT INTO ops.processes (id, command, host, pid, service_version, url, leads, leader_session_pid, projection_version, mirror_checked_at, started_at, seen_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, to_timestamp($10::float8 / 1000), $11, now())
       ON CONFLICT (id) DO UPDATE SET leads = EXCLUDED.leads, leader_session_pid = EXCLUDED.leader_session_pid, projection_version = EXCLUDED.projection_version,
         mirror_checked_at = EXCLUDED.mirror_checked_at, seen_at = now()`,
      [id, opts.command, host, process.pid, SERVICE_VERSION, opts.url ?? null, s.leads ?? null, s.leaderSessionPid ?? null, s.projectionVersion ?? null, s.mirrorCheckedAt ?? null, startedAt],
    );
    await opts.db.query(`DELETE FROM ops.processes WHERE seen_at < now() - make_interval(mins => $1)`, [HEARTBEAT_PRUNE_MINUTES]);
  }

  function beat(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (running) return running;
    // The write itself, which a deadline does not stop: the row's removal waits for it.
    const attempt = write();
    writing = attempt.catch(() => undefined);
    running = withDeadline(attempt, BEAT_DEADLINE_MS)
      .then(() => {
        if (failing) opts.log.info('the heartbeat is written again');
        failing = false;
      })
      .catch((err: unknown) => {
        // Said once per outage: the database away is said by everything else already.
        if (!failing && !isDatabaseUnavailable(err)) opts.log.warn({ err }, 'could not write this process\'s heartbeat (ops.processes); trying again');
        failing = true;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  // Looked at every second (in memory): a change of leadership is written at once, so that
  // `catalog status` names the new leader without waiting for the next beat.
  const interval = opts.intervalMs ?? HEARTBEAT_MS;
  const timer = setInterval(() => {
    if (!written || Date.now() - written.at >= interval || opts.state().leaderSessionPid !== written.session) void beat();
  }, Math.min(LOOK_MS, interval));
  timer.unref();
  void beat();

  return {
    id,
    beat,
    async stop() {
      clearInterval(timer);
      stopped = true;
      // A database that froze must not hold the stop up: the row is pruned later then.
      const remove = async () => {
        await writing;
        await opts.db.query('DELETE FROM ops.processes WHERE id = $1', [id]);
      };
      await withDeadline(remove(), STOP_DELETE_MS).catch(() => undefined);
    },
  };
}
