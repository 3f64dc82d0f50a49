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

export function createKeyedLimiter(opts: { keyPrefix: string; points: number; durationSeconds: number; redis?: Redis | undefined }): KeyedLimiter {
  const memory = new RateLimiterMemory({ points: opts.points, duration: opts.durationSeconds, keyPrefix: opts.keyPrefix });
  const limiter: RateLimiterAbstract = opts.redis
    ? new RateLimiterRedis({ storeClient: opts.redis, points: opts.points, duration: opts.durationSeconds, keyPrefix: opts.keyPrefix, insuranceLimiter: memory })
    : memory;
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
