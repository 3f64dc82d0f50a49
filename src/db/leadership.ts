import pg from 'pg';
import type { Queryable } from './pool.ts';
import { PROJECTOR_LEADER_LOCK } from './locks.ts';
import type { Log } from '../util/log.ts';

export const LEADER_APPLICATION_NAME = 'catalog-projector-leader';

/**
 * Leadership of the projection: a session-level advisory lock on a connection of its own. The
 * lock lives exactly as long as that session, so when the leading process dies (or its session
 * is terminated) PostgreSQL releases it and a standby's next attempt takes over.
 *
 * Correctness does not rest on this lock (every batch runs under PROJECTION_WRITE_LOCK and reads
 * the checkpoint inside it); leadership only keeps a standby from doing the same work twice.
 */
export interface Leadership {
  readonly isLeader: boolean;
  /** The leading session's backend process id (as pg_locks names it) while leading. */
  readonly sessionPid: number | undefined;
  /** Tries once to become leader; true when this process leads (now or already). */
  tryAcquire(): Promise<boolean>;
  /**
   * Confirms the leading session is still there (a connection that died quietly releases the
   * lock on the server's side); on failure leadership is lost.
   */
  verify(): Promise<void>;
  /**
   * Whether this process's leading session still holds the lock, asked on another connection
   * (inside a write transaction, say); when it does not, leadership is lost at once. A process
   * whose session died without its noticing (a restarted or unreachable server) stops writing
   * before a new leader starts, rather than after.
   */
  stillHeld(db: Queryable): Promise<boolean>;
  /** Releases leadership and closes the session. */
  release(): Promise<void>;
}

export interface LeadershipOptions {
  log: Log;
  onLost: () => void;
  /** The session-level advisory lock to hold; default the projector's. */
  lock?: number;
  /** The leading session's application_name, and what log lines call the leader. */
  applicationName?: string;
  role?: string;
}

export function createLeadership(connectionString: string, opts: LeadershipOptions): Leadership {
  const lock = opts.lock ?? PROJECTOR_LEADER_LOCK;
  const role = opts.role ?? 'projector';
  let client: pg.Client | undefined;
  let leader = false;
  /** The backend process of the leading session, as pg_locks names it. */
  let backendPid: number | undefined;

  function lost(client_: pg.Client, reason: string, code?: string): void {
    if (client !== client_) return;
    client = undefined;
    if (leader) {
      leader = false;
      // 57P01: the server is shutting down or an operator ended the session (as at Ctrl-C in a
      // terminal, which reaches an embedded server too): expected, so not a warning.
      if (code === '57P01') opts.log.info({ reason }, `${role} session ended by the database server; standing by`);
      else opts.log.warn({ reason }, `${role} lost leadership (its session ended); standing by`);
      opts.onLost();
    }
  }

  return {
    get isLeader() {
      return leader;
    },
    get sessionPid() {
      return leader ? backendPid : undefined;
    },
    async tryAcquire() {
      if (leader) return true;
      if (!client) {
        const c = new pg.Client({ connectionString, application_name: opts.applicationName ?? LEADER_APPLICATION_NAME, keepAlive: true });
        c.on('error', (err) => lost(c, err.message, (err as Error & { code?: string }).code));
        c.on('end', () => lost(c, 'connection closed'));
        client = c;
        try {
          await c.connect();
        } catch (err) {
          client = undefined;
          await c.end().catch(() => undefined);
          throw err;
        }
      }
      const { rows } = await client.query<{ ok: boolean; pid: number }>('SELECT pg_try_advisory_lock($1) AS ok, pg_backend_pid() AS pid', [lock]);
      leader = rows[0]?.ok === true;
      backendPid = rows[0]?.pid;
      return leader;
    },
    async verify() {
      const c = client;
      if (!leader || !c) return;
      try {
        await c.query('SELECT 1');
      } catch (err) {
        lost(c, (err as Error).message);
        await c.end().catch(() => undefined);
      }
    },
    async stillHeld(db) {
      const c = client;
      if (!leader || !c) return false;
      // A session-level advisory lock on a bigint key: classid is its high half, objid its low
      // half, objsubid 1.
      const { rows } = await db.query<{ held: boolean }>(
        `SELECT EXISTS (
           SELECT 1 FROM pg_locks
            WHERE locktype = 'advisory' AND granted AND pid = $1 AND objsubid = 1
              AND classid = ($2::bigint >> 32)::oid AND objid = ($2::bigint & 4294967295)::oid
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
         ) AS held`,
        [backendPid, lock],
      );
      if (rows[0]?.held) return true;
      lost(c, 'its session no longer holds the lock');
      await c.end().catch(() => undefined);
      return false;
    },
    async release() {
      const c = client;
      client = undefined;
      leader = false;
      if (!c) return;
      // Closing the session releases the lock; unlocking first makes the hand-over immediate
      // even if closing is slow.
      await c.query('SELECT pg_advisory_unlock($1)', [lock]).catch(() => undefined);
      await c.end().catch(() => undefined);
    },
  };
}
