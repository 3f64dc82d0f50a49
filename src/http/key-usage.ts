import type { Logger } from 'pino';
import { addUsage, USAGE_COLUMNS, type UsageColumn, type UsageCount } from '../auth/consumer-keys/consumer-keys.ts';
import type { Pool } from '../db/pool.ts';
import { createCoalescedRunner } from '../util/coalesced-runner.ts';
import type { RateLimits } from './rate-limit.ts';

/**
 * Moves the consumer keys' usage counted by the budgets (rate-limit.ts: in Redis, or in this
 * process's memory) into PostgreSQL every second, and once more when the process stops. A batch
 * is let go only once PostgreSQL holds it, and PostgreSQL adds a batch once whoever hands it
 * over (auth/consumer-keys/consumer-keys.ts: addUsage), so a count is neither lost nor counted twice when a
 * process dies between the two. While the database is away the batches wait and are written
 * when it is back.
 */
export interface UsageRecorder {
  /** Writes what is waiting now. */
  flush(): Promise<void>;
  /** Stops the timer after a last flush. */
  stop(): Promise<void>;
}

const FLUSH_MS = 1000;

function countsOf(fields: ReadonlyMap<string, number>): UsageCount[] {
  const counts: UsageCount[] = [];
  for (const [field, count] of fields) {
    const [keyId, day, column] = field.split('|');
    if (!keyId || !day || !USAGE_COLUMNS.includes(column as UsageColumn) || !(count > 0)) continue;
    counts.push({ keyId, day, column: column as UsageColumn, count });
  }
  return counts;
}

export function startUsageRecorder(opts: { rateLimits: RateLimits; pool: Pool; log: Pick<Logger, 'warn' | 'info'>; intervalMs?: number }): UsageRecorder {
  let failing = false;
  const once = async () => {
    try {
      for (const batch of await opts.rateLimits.takeUsage()) {
        await addUsage(opts.pool, batch.id, countsOf(batch.counts));
        await batch.done();
      }
      if (failing) opts.log.info({}, 'consumer key usage is written again');
      failing = false;
    } catch (err) {
      if (!failing) opts.log.warn({ err }, 'could not write consumer key usage; it waits and is written once the database (or Redis) is back');
      failing = true;
    }
  };
  // A flush asked for while one runs is made after it (the running one took its counts before
  // this call, and what was counted since must be written too): one run at a time, coalesced.
  const runner = createCoalescedRunner(once);
  const flush = () => runner.run();
  const timer = setInterval(() => void flush(), opts.intervalMs ?? FLUSH_MS);
  timer.unref();
  return {
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
