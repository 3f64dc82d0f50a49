import type { Logger } from 'pino';
import type { Pool } from '../db/pool.ts';
import { pruneOAuthRecords } from './oauth-store.ts';
import { pruneSessions } from './sessions.ts';

/**
 * Forgets what has expired: authorization server records, idle registered clients, refresh
 * answers kept for retries, web sessions and old sign-in links. Each process runs it hourly (the
 * deletes are idempotent, so processes need not agree on who does it) and once at start.
 */
export const UPKEEP_INTERVAL_MS = 60 * 60 * 1000;

export function startAccountUpkeep(opts: { pool: Pool; clientIdleSeconds: number; log: Logger }): { stop(): void } {
  const run = async () => {
    try {
      const removed = await pruneOAuthRecords(opts.pool, opts.clientIdleSeconds);
      await pruneSessions(opts.pool);
      if (removed > 0) opts.log.debug({ removed }, 'expired authorization records removed');
    } catch (err) {
      opts.log.warn({ err }, 'could not remove expired sessions and authorization records');
    }
  };
  void run();
  const timer = setInterval(() => void run(), UPKEEP_INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
