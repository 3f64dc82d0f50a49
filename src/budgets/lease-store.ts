import type { Redis } from 'ioredis';
import { RateLimiterMemory, type RateLimiterAbstract, type RateLimiterRes } from 'rate-limiter-flexible';
import { createKeyUsage, type KeyUsage } from './key-usage.ts';
import { createRedisLeases, type LeaseDecision } from './redis-leases.ts';
import { counted, type Bucket, type BudgetOwner, type Counted } from './verdict.ts';

/**
 * Where the budgets are counted: one one-minute window per bucket and per address (or owner).
 * Without REDIS_URL in this process's memory (rate-limiter-flexible's memory limiter, whose
 * store is filled synchronously). With REDIS_URL every API process shares one budget, spent
 * from leases of it (redis-leases.ts); if Redis goes away, requests keep being served and
 * limited in this process's memory until it comes back. A consumer key's requests are counted
 * in its usage as they are decided (key-usage.ts).
 */
export interface LeaseStore {
  /**
   * Spends one unit of the bucket's budget of `owner`, or of the address `ip` without one:
   * decided at once when this process holds the budget (in its memory, or its lease of a Redis
   * budget), else a promise of the verdict. A key's request decided from Redis resolves once
   * its usage count is written there.
   */
  spend(bucket: Bucket, ip: string, owner: BudgetOwner | undefined): Counted | Promise<Counted>;
  readonly windowSeconds: number;
  /** The address limits per bucket. */
  readonly limits: Readonly<Record<Bucket, number>>;
  /** Counts of refused calls since start, per bucket. */
  readonly rejections: Record<Bucket, number>;
  /** The Redis connection the budgets use (REDIS_URL), for other per-key limits of the process. */
  readonly redis: Redis | undefined;
  /** Consumer keys' requests counted, until the usage recorder has them in PostgreSQL. */
  readonly usage: KeyUsage;
  close(): Promise<void>;
}

export interface LeaseStoreOptions {
  searchPerMinute: number;
  otherPerMinute: number;
  /** The web pages' own budget (people browsing, makers, admins); default 300. */
  pagesPerMinute?: number;
  /** GET /api/v1/export; default 6. */
  exportPerMinute?: number;
  /** GET /api/v1/changes; default 120. */
  changesPerMinute?: number;
  /** The shared budgets' Redis connection (connectRedis); undefined counts in memory. */
  redis?: Redis | undefined;
  /** Key prefix in Redis, so several deployments may share a server. */
  keyPrefix?: string;
  /** Window length; the service always uses the spec's minute, tests may shorten it to see a reset. */
  windowSeconds?: number;
  /** The clock (UTC day of usage counts); tests move it. */
  now?: () => number;
  /** This catalog's name for its usage counts in a Redis other catalogs may share (usageSpace). */
  usageSpace?: string;
}

const WINDOW_SECONDS = 60;
/** Client addresses (and owners) whose limiter key a bucket keeps (all are let go when it holds this many). */
const KEPT_KEYS = 10_000;
const REDIS_RETRY_MAX_MS = 1000;
/**
 * After Redis failed to answer budgets' requests twice in a row (refused at once when
 * disconnected, or past commandTimeout when it froze), requests are decided in this process's
 * memory for this long before it is asked again: a frozen Redis costs one request a second its
 * timeout, not every one. Twice means at least REDIS_FAILURES_APART_MS and at most 5 s apart,
 * with no answer between: one stall of this process's event loop (a long garbage collection)
 * fails every command then waiting at once while Redis did answer, and the next request finds
 * it answering.
 */
const REDIS_AWAY_MS = 1000;
const REDIS_FAILURES_APART_MS = 100;
const DEFAULT_PAGES_PER_MINUTE = 300;
export const DEFAULT_EXPORT_PER_MINUTE = 6;
export const DEFAULT_CHANGES_PER_MINUTE = 120;

/**
 * A connection to REDIS_URL for the shared budgets. ioredis is loaded only here, so a process
 * without Redis never loads it.
 */
export async function connectRedis(url: string, onError: (err: unknown) => void): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    // Fail fast while disconnected so the in-memory insurance limiter answers at once.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 500,
    // Reconnect at least every second however long it was away: shared budgets resume within
    // about a second of Redis coming back (a refused connection costs nothing to retry).
    retryStrategy: (times) => Math.min(times * 100, REDIS_RETRY_MAX_MS),
    lazyConnect: false,
  });
  redis.on('error', onError);
  return redis;
}

interface BucketState {
  readonly limiter: RateLimiterAbstract;
  readonly store: MemoryStore | undefined;
  /** Limiter keys by address or owner id, made once each. */
  readonly keys: Map<string, string>;
}

export function createLeaseStore(opts: LeaseStoreOptions): LeaseStore {
  const prefix = opts.keyPrefix ?? 'catalog:rl';
  const windowSeconds = opts.windowSeconds ?? WINDOW_SECONDS;
  const now = opts.now ?? Date.now;
  const redis = opts.redis;
  const shared = redis ? createRedisLeases(redis, { prefix, windowMs: windowSeconds * 1000, now }) : undefined;
  const usage = createKeyUsage({ now, redis, prefix, usageSpace: opts.usageSpace ?? 'default' });

  const limits: Record<Bucket, number> = {
    search: opts.searchPerMinute,
    other: opts.otherPerMinute,
    pages: opts.pagesPerMinute ?? DEFAULT_PAGES_PER_MINUTE,
    export: opts.exportPerMinute ?? DEFAULT_EXPORT_PER_MINUTE,
    changes: opts.changesPerMinute ?? DEFAULT_CHANGES_PER_MINUTE,
  };
  // The memory limiters count without a ceiling of their own: every decision compares the count
  // with the limit of whoever spends (an address, or an owner with budgets of its own).
  const bucketState = (bucket: Bucket): BucketState => {
    const limiter = new RateLimiterMemory({ points: Number.MAX_SAFE_INTEGER, duration: windowSeconds, keyPrefix: `${prefix}:${bucket}` });
    return { limiter, store: memoryStoreOf(limiter), keys: new Map<string, string>() };
  };
  const buckets: Record<Bucket, BucketState> = {
    search: bucketState('search'),
    other: bucketState('other'),
    pages: bucketState('pages'),
    export: bucketState('export'),
    changes: bucketState('changes'),
  };
  const rejections: Record<Bucket, number> = { search: 0, other: 0, pages: 0, export: 0, changes: 0 };
  /** Until when requests are decided in memory without asking Redis, after it failed to answer. */
  let redisAwayUntil = 0;
  /** When Redis last failed to answer, with no answer since (0: it answered last). */
  let redisFailedAt = 0;
  const redisFailed = () => {
    const now = Date.now();
    const since = now - redisFailedAt;
    if (redisFailedAt > 0 && since >= REDIS_FAILURES_APART_MS && since < 5_000) redisAwayUntil = now + REDIS_AWAY_MS;
    if (redisFailedAt === 0 || since >= REDIS_FAILURES_APART_MS) redisFailedAt = now;
  };

  const decide = (bucket: Bucket, owner: BudgetOwner | undefined, limit: number, count: number, msBeforeNext: number): Counted => {
    const verdict = counted(bucket, owner, limit, count, msBeforeNext, windowSeconds);
    if (!verdict.allowed) rejections[bucket]++;
    return verdict;
  };
  const limitOf = (bucket: Bucket, owner: BudgetOwner | undefined) => owner?.limits[bucket] ?? limits[bucket];
  /** The limiter's key for an address or an owner, kept: made anew, its hash is computed again. */
  const limiterKey = (state: BucketState, id: string) => {
    let key = state.keys.get(id);
    if (key === undefined) {
      if (state.keys.size >= KEPT_KEYS) state.keys.clear();
      state.keys.set(id, (key = state.limiter.getKey(id)));
    }
    return key;
  };
  const countHere = (bucket: Bucket, owner: BudgetOwner | undefined, verdict: Counted) => {
    if (owner?.key !== undefined) usage.countHere(owner.key.id, verdict.allowed ? bucket : 'refused');
    return verdict;
  };

  /**
   * Spends one unit in this process's memory, decided at once: what RateLimiterMemory.consume
   * does (no block duration, not spread evenly), without the promise around it. A refused
   * request spends nothing (its unit is given back), as in Redis: a budget raised after
   * refusals (a key's new limits) serves the next request.
   */
  const spendInMemory = (bucket: Bucket, store: MemoryStore, key: string, limit: number, owner: BudgetOwner | undefined): Counted => {
    const res = store.incrby(key, 1, windowSeconds);
    if (res.consumedPoints > limit) store.incrby(key, -1, windowSeconds);
    return countHere(bucket, owner, decide(bucket, owner, limit, res.consumedPoints, res.msBeforeNext));
  };

  /** A verdict of this process's memory: without Redis, and while Redis is away. */
  const inMemory = (bucket: Bucket, ip: string, owner: BudgetOwner | undefined): Counted | Promise<Counted> => {
    const state = buckets[bucket];
    const limit = limitOf(bucket, owner);
    if (state.store) return spendInMemory(bucket, state.store, limiterKey(state, owner?.id ?? ip), limit, owner);
    const id = owner?.id ?? ip;
    return state.limiter.consume(id, 1).then((res) => {
      if (res.consumedPoints > limit) void state.limiter.reward(id, 1).catch(() => undefined);
      return countHere(bucket, owner, decide(bucket, owner, limit, res.consumedPoints, res.msBeforeNext));
    });
  };

  /** A verdict from a lease's answer (redis-leases.ts). */
  const fromLease = (bucket: Bucket, owner: BudgetOwner | undefined, limit: number, d: LeaseDecision) => decide(bucket, owner, limit, d.allowed ? d.count : limit + 1, d.msLeft);
  /** Counts a key's request in Redis, then resolves with its verdict (key-usage.ts). */
  const countShared = (bucket: Bucket, key: NonNullable<BudgetOwner['key']>, verdict: Counted): Promise<Counted> =>
    usage.countShared(key.id, verdict.allowed ? bucket : 'refused', verdict);

  return {
    windowSeconds,
    limits,
    rejections,
    spend(bucket, ip, owner) {
      if (!shared) return inMemory(bucket, ip, owner);
      const limit = limitOf(bucket, owner);
      const key = limiterKey(buckets[bucket], owner?.id ?? ip);
      // Decided from this process's lease when it holds one: no promise but a key's usage count's.
      const leased = shared.tryNow(key, limit);
      if (leased !== undefined) {
        const verdict = fromLease(bucket, owner, limit, leased);
        return owner?.key === undefined ? verdict : countShared(bucket, owner.key, verdict);
      }
      // Redis just failed to answer (away, or frozen: every command waits for its timeout):
      // this process's own budget at once, without waiting for it again, for a little while.
      if (Date.now() < redisAwayUntil) return inMemory(bucket, ip, owner);
      // A promise chain rather than an async function: this runs on every counted request.
      const decided = shared.decide(key, limit).then(
        (d) => {
          redisFailedAt = 0;
          return fromLease(bucket, owner, limit, d);
        },
        // Redis away: this process's own budget, as insurance, until it is back.
        () => {
          redisFailed();
          return undefined;
        },
      );
      return decided.then((verdict) => {
        if (verdict === undefined) return inMemory(bucket, ip, owner);
        return owner?.key === undefined ? verdict : countShared(bucket, owner.key, verdict);
      });
    },
    redis,
    usage,
    async close() {
      await shared?.close().catch(() => undefined);
      usage.close();
      if (redis) {
        redis.disconnect();
      }
    },
  };
}

/** The counter store inside rate-limiter-flexible's memory limiter, which it fills synchronously. */
interface MemoryStore {
  incrby(key: string, points: number, durationSeconds: number): RateLimiterRes;
}

/**
 * The memory limiter's store, when the limiter is a plain RateLimiterMemory whose store has the
 * shape this code was written against (rate-limiter-flexible 11); otherwise undefined, and every
 * decision goes through the promise.
 */
function memoryStoreOf(limiter: RateLimiterAbstract): MemoryStore | undefined {
  if (!(limiter instanceof RateLimiterMemory) || limiter.blockDuration > 0 || limiter.execEvenly) return undefined;
  const store = (limiter as unknown as { _memoryStorage?: Partial<MemoryStore> })._memoryStorage;
  return typeof store?.incrby === 'function' ? (store as MemoryStore) : undefined;
}
