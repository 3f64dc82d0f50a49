import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, type RateLimiterAbstract, type RateLimiterRes } from 'rate-limiter-flexible';
import { createRedisBudgets, type LeaseDecision, type RedisBudgets, type UsageBatch } from './redis-budgets.ts';

export type { UsageBatch } from './redis-budgets.ts';

/**
 * Per-IP request budgets (spec section 8): searches and other calls are separate buckets of
 * a one-minute window. With REDIS_URL every API process shares one budget (spent in batches,
 * redis-budgets.ts); if Redis goes away, requests keep being served and limited in this
 * process's memory until it comes back. A consumer key or a maker's sign-in spends budgets of
 * its own instead (BudgetOwner), through the same code.
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

/**
 * Whose budget a request spends when it is not its address's: a consumer key (docs/keys.md) or
 * a maker's sign-in through a connected app (one grant). Budgets are counted per owner across
 * every API process, exactly as an address's are.
 */
export interface BudgetOwner {
  /** The budget's name in the limiter: `k:<key id>` or `g:<grant id>`, never an address. */
  readonly id: string;
  /** Its budgets a window; a bucket left out has the address's. */
  readonly limits: Partial<Record<Bucket, number>>;
  /** A consumer key's id: its requests are counted in the key's usage, answered or refused. */
  readonly usageKey?: string;
}

export interface RateLimits {
  /** Spends one unit of the bucket's budget of `owner`, or of the address `ip` without one. */
  consume(bucket: Bucket, ip: string, owner?: BudgetOwner): Promise<RateDecision>;
  /**
   * The same spending, decided at once, when this process keeps its budgets in memory (no
   * REDIS_URL); undefined, with nothing spent, when the budget lives in Redis and `consume`
   * must ask it.
   */
  consumeNow(bucket: Bucket, ip: string, owner?: BudgetOwner): RateDecision | undefined;
  readonly windowSeconds: number;
  /** The address limits per bucket. */
  readonly limits: Readonly<Record<Bucket, number>>;
  /** Counts of refused calls since start, per bucket. */
  readonly rejections: Record<Bucket, number>;
  /** The Redis connection the budgets use (REDIS_URL), for other per-key limits of the process. */
  readonly redis: Redis | undefined;
  /**
   * Consumer keys' requests counted since the last call and not yet in PostgreSQL: those counted
   * in this process's memory (no Redis, or Redis away) and the batches waiting in Redis.
   */
  takeUsage(): Promise<UsageBatch[]>;
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

interface BucketState {
  readonly limiter: RateLimiterAbstract;
  readonly store: MemoryStore | undefined;
  /** Limiter keys by address or owner id, made once each. */
  readonly keys: Map<string, string>;
}

export function createRateLimits(opts: RateLimitOptions): RateLimits {
  const prefix = opts.keyPrefix ?? 'catalog:rl';
  const windowSeconds = opts.windowSeconds ?? WINDOW_SECONDS;
  const now = opts.now ?? Date.now;
  const redis = opts.redis;
  const shared = redis ? createRedisBudgets(redis, { prefix, windowMs: windowSeconds * 1000, now, usageSpace: opts.usageSpace ?? 'default' }) : undefined;

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
  const usage = createMemoryUsage(now);
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

  const decide = (bucket: Bucket, limit: number, count: number, msBeforeNext: number): RateDecision => {
    const resetSeconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
    if (count > limit) {
      rejections[bucket]++;
      return { allowed: false, bucket, limit, remaining: 0, resetSeconds, windowSeconds };
    }
    return { allowed: true, bucket, limit, remaining: limit - count, resetSeconds, windowSeconds };
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
  const countUsage = (bucket: Bucket, owner: BudgetOwner | undefined, decision: RateDecision) => {
    if (owner?.usageKey !== undefined) usage.count(owner.usageKey, decision.allowed ? bucket : 'refused');
    return decision;
  };

  /**
   * Spends one unit in this process's memory, decided at once. A refused request spends
   * nothing (its unit is given back), as in Redis: a budget raised after refusals (a key's new
   * limits) serves the next request.
   */
  const spendInMemory = (bucket: Bucket, store: MemoryStore, key: string, limit: number, owner: BudgetOwner | undefined): RateDecision => {
    const res = store.incrby(key, 1, windowSeconds);
    if (res.consumedPoints > limit) store.incrby(key, -1, windowSeconds);
    return countUsage(bucket, owner, decide(bucket, limit, res.consumedPoints, res.msBeforeNext));
  };

  /** A decision in this process's memory: without Redis, and while Redis is away. */
  const inMemory = (bucket: Bucket, ip: string, owner: BudgetOwner | undefined): Promise<RateDecision> => {
    const state = buckets[bucket];
    const limit = limitOf(bucket, owner);
    if (state.store) return Promise.resolve(spendInMemory(bucket, state.store, limiterKey(state, owner?.id ?? ip), limit, owner));
    const id = owner?.id ?? ip;
    return state.limiter.consume(id, 1).then((res) => {
      if (res.consumedPoints > limit) void state.limiter.reward(id, 1).catch(() => undefined);
      return countUsage(bucket, owner, decide(bucket, limit, res.consumedPoints, res.msBeforeNext));
    });
  };

  /** A decision from a lease's answer (redis-budgets.ts). */
  const fromLease = (bucket: Bucket, limit: number, d: LeaseDecision) => decide(bucket, limit, d.allowed ? d.count : limit + 1, d.msLeft);
  /** Counts a key's request in Redis, then resolves with its decision (redis-budgets.ts: countUsage). */
  const countShared = (shared: RedisBudgets, bucket: Bucket, owner: BudgetOwner, decision: RateDecision): Promise<RateDecision> =>
    shared.countUsage(`${owner.usageKey}|${usage.day()}|${decision.allowed ? bucket : 'refused'}`, usage.countField, decision);

  return {
    windowSeconds,
    limits,
    rejections,
    consume(bucket, ip, owner) {
      if (!shared) return inMemory(bucket, ip, owner);
      const limit = limitOf(bucket, owner);
      const key = limiterKey(buckets[bucket], owner?.id ?? ip);
      // Decided from this process's lease when it holds one: no promise but the usage count's.
      const now = shared.tryNow(key, limit);
      if (now !== undefined) {
        const decision = fromLease(bucket, limit, now);
        return owner?.usageKey === undefined ? Promise.resolve(decision) : countShared(shared, bucket, owner, decision);
      }
      // Redis just failed to answer (away, or frozen: every command waits for its timeout):
      // this process's own budget at once, without waiting for it again, for a little while.
      if (Date.now() < redisAwayUntil) return inMemory(bucket, ip, owner);
      // A promise chain rather than an async function: this runs on every counted request.
      const decided = shared.decide(key, limit).then(
        (d) => {
          redisFailedAt = 0;
          return fromLease(bucket, limit, d);
        },
        // Redis away: this process's own budget, as insurance, until it is back.
        () => {
          redisFailed();
          return undefined;
        },
      );
      return decided.then((decision) => {
        if (decision === undefined) return inMemory(bucket, ip, owner);
        return owner?.usageKey === undefined ? decision : countShared(shared, bucket, owner, decision);
      });
    },
    consumeNow(bucket, ip, owner) {
      const state = buckets[bucket];
      if (shared) {
        // A key's request waits for its count to be written (consume).
        if (owner?.usageKey !== undefined) return undefined;
        const limit = limitOf(bucket, owner);
        const d = shared.tryNow(limiterKey(state, owner?.id ?? ip), limit);
        return d === undefined ? undefined : fromLease(bucket, limit, d);
      }
      if (!state.store) return undefined;
      // What RateLimiterMemory.consume does (no block duration, not spread evenly), without
      // the promise around it.
      return spendInMemory(bucket, state.store, limiterKey(state, owner?.id ?? ip), limitOf(bucket, owner), owner);
    },
    redis,
    async takeUsage() {
      const batches = usage.take();
      if (shared) batches.push(...(await shared.takeUsage()));
      return batches;
    },
    async close() {
      await shared?.close().catch(() => undefined);
      if (redis) {
        redis.disconnect();
      }
    },
  };
}

/**
 * Consumer keys' usage counted in this process's memory (no Redis, or Redis away), handed out in
 * batches; a batch not yet written is handed out again, under the same id, until it is.
 */
function createMemoryUsage(now: () => number) {
  let counts = new Map<string, number>();
  const waiting = new Map<string, UsageBatch>();
  let dayText = '';
  let dayEnds = 0;
  return {
    /** Today's UTC day, as usage counts name it (worked out once a day). */
    day(): string {
      const t = now();
      if (t >= dayEnds || t < dayEnds - 86_400_000) {
        dayText = new Date(t).toISOString().slice(0, 10);
        dayEnds = Date.parse(`${dayText}T00:00:00Z`) + 86_400_000;
      }
      return dayText;
    },
    count(keyId: string, column: string): void {
      this.countField(`${keyId}|${this.day()}|${column}`);
    },
    /** Counts `n` requests under a field `keyId|day|column` (also for counts Redis could not take). */
    countField: (field: string, n = 1): void => {
      counts.set(field, (counts.get(field) ?? 0) + n);
    },
    take(): UsageBatch[] {
      if (counts.size > 0) {
        const batch: UsageBatch = {
          id: `memory:${randomUUID()}`,
          counts,
          done: async () => {
            waiting.delete(batch.id);
          },
        };
        waiting.set(batch.id, batch);
        counts = new Map();
      }
      return [...waiting.values()];
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

/** The header values of a bucket and limit that are the same in each of its decisions, written once. */
interface FixedTexts {
  readonly windowSeconds: number;
  readonly limit: string;
  readonly policy: string;
}

/** By bucket, then limit (an address's, or an owner's of its own). */
const fixedTexts = new Map<Bucket, Map<number, FixedTexts>>();
const MAX_FIXED_TEXTS = 1000;

function fixedTextsOf(d: RateDecision): FixedTexts {
  let byLimit = fixedTexts.get(d.bucket);
  if (byLimit === undefined) fixedTexts.set(d.bucket, (byLimit = new Map()));
  let texts = byLimit.get(d.limit);
  if (texts === undefined || texts.windowSeconds !== d.windowSeconds) {
    if (byLimit.size >= MAX_FIXED_TEXTS) byLimit.clear();
    texts = { windowSeconds: d.windowSeconds, limit: String(d.limit), policy: `"${d.bucket}";q=${d.limit};w=${d.windowSeconds}` };
    byLimit.set(d.limit, texts);
  }
  return texts;
}
