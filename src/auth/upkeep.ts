import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Pool } from '../db/pool.ts';
import { pruneKeyUsage } from './consumer-keys/consumer-keys.ts';
import { pruneOAuthRecords } from './oauth-store.ts';
import { pruneSessions } from './sessions.ts';

/**
 * Forgets what has expired: authorization server records, idle registered clients, refresh
 * answers kept for retries, web sessions, old sign-in links, and consumer keys' usage older
 * than 400 days. It runs once an hour per
 * cluster, not per process: every API process asks every few minutes (and right after it
 * starts) whether the hour has passed, and the one that claims the run in PostgreSQL does it
 * (auth.scheduled_runs), however many processes there are and however often they restart.
 */
const UPKEEP_INTERVAL_MS = 60 * 60 * 1000;
const UPKEEP_CHECK_MS = 5 * 60 * 1000;
const ACCOUNT_UPKEEP_JOB = 'account-upkeep';

/**
 * Claims the next run of `job` when the previous one started at least `intervalMs` ago (or
 * never ran). One statement: of several processes asking at once, exactly one gets true.
 */
export async function claimScheduledRun(pool: Pool, job: string, intervalMs: number, by: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `INSERT INTO auth.scheduled_runs AS r (job, started_at, started_by, runs) VALUES ($1, now(), $2, 1)
     ON CONFLICT (job) DO UPDATE SET started_at = now(), started_by = $2, runs = r.runs + 1
      WHERE r.started_at <= now() - make_interval(secs => $3::double precision / 1000)`,
    [job, by, intervalMs],
  );
  return rowCount === 1;
}

export function startAccountUpkeep(opts: { pool: Pool; clientIdleSeconds: number; log: Logger; applicationName: string }): { stop(): void } {
  const by = `${opts.applicationName} (pid ${process.pid} on ${hostname()})`;
  let stopped = false;
  const run = async () => {
    try {
      if (stopped || !(await claimScheduledRun(opts.pool, ACCOUNT_UPKEEP_JOB, UPKEEP_INTERVAL_MS, by))) return;
      const removed = await pruneOAuthRecords(opts.pool, opts.clientIdleSeconds);
      await pruneSessions(opts.pool);
      const keyUsageDays = await pruneKeyUsage(opts.pool);
      opts.log.info({ job: ACCOUNT_UPKEEP_JOB, authorizationRecords: removed, keyUsageDays }, 'account upkeep ran: expired sessions, sign-in links and authorization records removed');
    } catch (err) {
      opts.log.warn({ err }, 'could not remove expired sessions and authorization records; trying again in a few minutes');
    }
  };
  void run();
  const timer = setInterval(() => void run(), UPKEEP_CHECK_MS);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
