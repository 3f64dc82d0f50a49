import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { buildLimiter } from '../util/keyed-limiter.ts';

/**
 * Per-IP request budgets (spec section 8): searches and other calls are separate buckets of
 * a one-minute window. With REDIS_URL every API process shares one budget; if Redis goes away,
 * requests keep being served and limited in this process's memory until it comes back.
 * The bulk export and the change feed have budgets of their own: an export is the whole
 * catalog in one answer, and a consumer following the feed must not spend the budget it needs
 * for its other calls.
 */
export type Bucket = 'search' | 'other' | 'pages' | 'export' | 'changes';

export interface RateDecision {
  readonly allowed: boolean;
  readonly bucket: Bucket;
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the window ends (at least 1). */
  readonly resetSeconds: number;
  /** Length of the window in seconds. */
  readonly windowSeconds: number;
}

export interface RateLimits {
  consume(bucket: Bucket, ip: string): Promise<RateDecision>;
  /**
   * The same spending, decided at once, when this process keeps its budgets in memory (no
   * REDIS_URL); undefined, with nothing spent, when the budget lives in Redis and `consume`
   * must ask it.
   */
  consumeNow(bucket: Bucket, ip: string): RateDecision | undefined;
  readonly windowSeconds: number;
  /** Counts of refused calls since start, per bucket. */
  readonly rejections: Record<Bucket, number>;
  /** The Redis connection the budgets use (REDIS_URL), for other per-key limits of the process. */
  readonly redis: Redis | undefined;
  close(): Promise<void>;
}

export interface RateLimitOptions {
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
}

const WINDOW_SECONDS = 60;
/** Client addresses whose limiter key a bucket keeps (all are let go when it holds this many). */
const KEPT_KEYS = 10_000;
const REDIS_RETRY_MAX_MS = 1000;
export const DEFAULT_PAGES_PER_MINUTE = 300;
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

export function createRateLimits(opts: RateLimitOptions): RateLimits {
  const prefix = opts.keyPrefix ?? 'catalog:rl';
  const windowSeconds = opts.windowSeconds ?? WINDOW_SECONDS;
  const redis = opts.redis;
  const make = (bucket: Bucket, points: number): RateLimiterAbstract => buildLimiter({ keyPrefix: `${prefix}:${bucket}`, points, durationSeconds: windowSeconds, redis });

  const points: Record<Bucket, number> = {
    search: opts.searchPerMinute,
    other: opts.otherPerMinute,
    pages: opts.pagesPerMinute ?? DEFAULT_PAGES_PER_MINUTE,
    export: opts.exportPerMinute ?? DEFAULT_EXPORT_PER_MINUTE,
    changes: opts.changesPerMinute ?? DEFAULT_CHANGES_PER_MINUTE,
  };
  const limiters = Object.fromEntries(
    (Object.keys(points) as Bucket[]).map((bucket) => {
      const limiter = make(bucket, points[bucket]);
      return [bucket, { limiter, points: points[bucket], store: memoryStoreOf(limiter), keys: new Map<string, string>() }];
    }),
  ) as Record<Bucket, { limiter: RateLimiterAbstract; points: number; store: MemoryStore | undefined; keys: Map<string, string> }>;
  const rejections: Record<Bucket, number> = { search: 0, other: 0, pages: 0, export: 0, changes: 0 };
  const allowed = (bucket: Bucket, points: number, remaining: number, msBeforeNext: number): RateDecision => ({
    allowed: true,
    bucket,
    limit: points,
    remaining: Math.max(0, remaining),
    resetSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)),
    windowSeconds,
  });
  const refused = (bucket: Bucket, points: number, msBeforeNext: number): RateDecision => {
    rejections[bucket]++;
    return { allowed: false, bucket, limit: points, remaining: 0, resetSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)), windowSeconds };
  };

  return {
    windowSeconds,
    rejections,
    consume(bucket, ip) {
      const { limiter, points } = limiters[bucket];
      // A promise chain rather than an async function: this runs on every counted request.
      return limiter.consume(ip, 1).then(
        (res): RateDecision => allowed(bucket, points, res.remainingPoints, res.msBeforeNext),
        (err: unknown): RateDecision => {
          if (!(err instanceof RateLimiterRes)) throw err;
          return refused(bucket, points, err.msBeforeNext);
        },
      );
    },
    consumeNow(bucket, ip) {
      const { limiter, points, store, keys } = limiters[bucket];
      if (!store) return undefined;
      // What RateLimiterMemory.consume does (no block duration, not spread evenly), without
      // the promise around it. The limiter's key for an address is kept: made anew, it is a
      // new string whose hash the store's map computes again on every request.
      let key = keys.get(ip);
      if (key === undefined) {
        if (keys.size >= KEPT_KEYS) keys.clear();
        keys.set(ip, (key = limiter.getKey(ip)));
      }
      const res = store.incrby(key, 1, windowSeconds);
      return res.consumedPoints > points ? refused(bucket, points, res.msBeforeNext) : allowed(bucket, points, points - res.consumedPoints, res.msBeforeNext);
    },
    redis,
    async close() {
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

/** Headers describing a decision: legacy X-RateLimit-*, the IETF draft fields, Retry-After on refusal. */
export function rateLimitHeaders(d: RateDecision, nowMs = Date.now()): Record<string, string> {
  const pairs: string[] = [];
  pushRateLimitHeaders(pairs, d, nowMs);
  const headers: Record<string, string> = {};
  for (let i = 0; i < pairs.length; i += 2) headers[pairs[i]!] = pairs[i + 1]!;
  return headers;
}

/**
 * The same headers, in the same order, appended to a flat list of names and values (what
 * Node's writeHead takes): the direct read path writes them without building an object.
 */
export function pushRateLimitHeaders(into: string[], d: RateDecision, nowMs = Date.now()): void {
  const fixed = fixedTextsOf(d);
  into.push(
    'x-ratelimit-limit',
    fixed.limit,
    'x-ratelimit-remaining',
    String(d.remaining),
    // Unix time (seconds) at which the window ends.
    'x-ratelimit-reset',
    String(Math.ceil(nowMs / 1000) + d.resetSeconds),
    'ratelimit-policy',
    fixed.policy,
    'ratelimit',
    `"${d.bucket}";r=${d.remaining};t=${d.resetSeconds}`,
  );
  if (!d.allowed) into.push('retry-after', String(d.resetSeconds));
}

/** A bucket's header values that are the same in each of its decisions, written once. */
interface FixedTexts {
  readonly of: { readonly limit: number; readonly windowSeconds: number };
  readonly limit: string;
  readonly policy: string;
}

const fixedTexts = new Map<Bucket, FixedTexts>();

function fixedTextsOf(d: RateDecision): FixedTexts {
  let texts = fixedTexts.get(d.bucket);
  if (texts === undefined || texts.of.limit !== d.limit || texts.of.windowSeconds !== d.windowSeconds) {
    texts = { of: { limit: d.limit, windowSeconds: d.windowSeconds }, limit: String(d.limit), policy: `"${d.bucket}";q=${d.limit};w=${d.windowSeconds}` };
    fixedTexts.set(d.bucket, texts);
  }
  return texts;
}
