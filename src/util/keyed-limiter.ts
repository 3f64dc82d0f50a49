import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

/**
 * A count of events per key over a fixed window (sign-in requests per address, registrations
 * per IP, …), shared by every process through Redis when there is one, and kept in this
 * process's memory otherwise or while Redis is unreachable.
 */
export interface KeyedLimiter {
  /** Counts one event for `key`; refused when the window's budget is spent. */
  consume(key: string): Promise<{ allowed: boolean; retryAfterSeconds: number }>;
}

export interface LimiterOptions {
  keyPrefix: string;
  points: number;
  durationSeconds: number;
  redis?: Redis | undefined;
}

/** The limiter behind every per-key budget: Redis when there is one, with memory as insurance. */
function buildLimiter(opts: LimiterOptions): RateLimiterAbstract {
  const memory = new RateLimiterMemory({ points: opts.points, duration: opts.durationSeconds, keyPrefix: opts.keyPrefix });
  if (!opts.redis) return memory;
  return new RateLimiterRedis({ storeClient: opts.redis, points: opts.points, duration: opts.durationSeconds, keyPrefix: opts.keyPrefix, insuranceLimiter: memory });
}

export function createKeyedLimiter(opts: LimiterOptions): KeyedLimiter {
  const limiter = buildLimiter(opts);
  return {
    async consume(key) {
      try {
        await limiter.consume(key, 1);
        return { allowed: true, retryAfterSeconds: 0 };
      } catch (err) {
        if (err instanceof RateLimiterRes) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) };
        throw err;
      }
    },
  };
}
