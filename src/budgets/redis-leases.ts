import type { Redis } from 'ioredis';

/**
 * Budgets shared through Redis without a round trip per request: each API process reserves
 * units of a budget from Redis (a lease) and spends them in its own memory, asking again when
 * its lease is spent. Redis keeps one counter per budget and window, counting every unit
 * granted to any process, so no two processes ever spend the same unit and a budget is never
 * exceeded, whatever the number of processes.
 *
 * How much is reserved follows how fast this process spends the budget: a first ask takes one
 * unit, and each next ask up to twice what the last lease was, aiming at what the process
 * spends in LEASE_TARGET_MS; never more than an eighth of what is left in the window, and single
 * units once LEASE_MIN_ROOM or fewer are left. So a budget of an address's size (and a key's
 * with modest limits) is decided by Redis request by request, exactly as before, with exact
 * counts across processes; one spent thousands of times a second asks Redis about ten times a
 * second, until the last thousand units of its window. Every request that must ask Redis in
 * one round of the event loop asks in one script call.
 *
 * A lease not used for LEASE_IDLE_MS goes back to Redis, and a process that finds a budget
 * spent asks once more after WAIT_BEFORE_REFUSAL_MS before it refuses: so the units another
 * process reserved and no longer needs are spent before anyone is refused, and a client
 * walking its budget through several processes meets the limit at its exact boundary. Once
 * refused, a budget is refused in this process's memory until its window ends (429 until the
 * minute ends), at no cost to Redis. A process that dies with a lease loses its units for the
 * rest of that window (at most a tenth of a second's worth of its requests).
 *
 * (Consumer keys' usage is counted in the same Redis, by key-usage.ts.)
 */
export interface LeaseDecision {
  readonly allowed: boolean;
  /** Units of the budget spent in this window, as far as this process knows (this request included). */
  readonly count: number;
  /** Milliseconds until the window ends. */
  readonly msLeft: number;
}

export interface RedisLeases {
  /** A decision from this process's lease, made at once, or undefined when Redis must be asked. */
  tryNow(key: string, limit: number): LeaseDecision | undefined;
  /** A decision, asking Redis for a lease when this process holds none (rejects when Redis is away). */
  decide(key: string, limit: number): Promise<LeaseDecision>;
  /** Gives every unused lease back (shutdown). */
  close(): Promise<void>;
}

/** A lease aims to last this long at the rate its budget is being spent. */
const LEASE_TARGET_MS = 100;
/** A lease unused this long goes back to Redis. */
const LEASE_IDLE_MS = 50;
const SWEEP_MS = 25;
/** A budget found spent is asked for once more after this, before a request is refused. */
const WAIT_BEFORE_REFUSAL_MS = LEASE_IDLE_MS + 2 * SWEEP_MS;
/** A lease is not trusted this close to its window's end (Redis's clock and ours). */
const EDGE_MS = 5;
const KEPT_LEASES = 20_000;
/** Budgets with this many units left or fewer are granted one unit at a time (exact counts). */
const LEASE_MIN_ROOM = 1000;

/**
 * Reserves units of each budget: the `need` of the requests waiting, and up to `want` (a lease)
 * while more than LEASE_MIN_ROOM units are left; returns per budget its count, time left, the
 * units granted, and whether any lease beyond a round's need was granted in this window (only
 * then may units still come back, and is a refusal worth asking again). A budget with
 * LEASE_MIN_ROOM units or fewer left grants only what is needed: its counts (and
 * X-RateLimit-Remaining) are then exact across processes, as a budget of an address's size
 * always is.
 */
const RESERVE_SCRIPT = `
local window = tonumber(ARGV[1])
local minRoom = tonumber(ARGV[2])
local out = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local leasedKey = key .. ':leased'
  local need = tonumber(ARGV[3 * i])
  local want = tonumber(ARGV[3 * i + 1])
  local limit = tonumber(ARGV[3 * i + 2])
  local c = tonumber(redis.call('GET', key) or '0')
  local ttl = redis.call('PTTL', key)
  local grant = 0
  if c < limit then
    local room = limit - c
    if room <= minRoom then
      grant = math.min(need, room)
    else
      grant = math.max(math.min(need, room), math.min(want, math.floor(room / 8)))
    end
    c = redis.call('INCRBY', key, grant)
  end
  if ttl < 0 then
    redis.call('PEXPIRE', key, window)
    ttl = window
  end
  if grant > need then
    redis.call('SET', leasedKey, '1', 'PX', ttl)
  end
  out[4 * i - 3] = c
  out[4 * i - 2] = ttl
  out[4 * i - 1] = grant
  out[4 * i] = redis.call('EXISTS', leasedKey)
end
return out
`;

/** Gives units back to budgets whose window is still the one they were granted in. */
const RETURN_SCRIPT = `
for i = 1, #KEYS do
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl > 0 and ttl <= tonumber(ARGV[2 * i]) then
    redis.call('DECRBY', KEYS[i], tonumber(ARGV[2 * i - 1]))
  end
end
return 0
`;

type ScriptClient = Redis & {
  catalogReserve(numKeys: number, ...args: Array<string | number>): Promise<number[]>;
  catalogReturn(numKeys: number, ...args: Array<string | number>): Promise<number>;
};

interface Waiter {
  resolve: (d: LeaseDecision) => void;
  reject: (err: unknown) => void;
  /** Asked once more already after a refusal. */
  waited: boolean;
}

/** One budget's window as this process sees it. */
interface Lease {
  readonly key: string;
  limit: number;
  /** When the window ends (this process's clock). */
  endsAt: number;
  /** Redis's count at the last answer: every unit granted to any process by then. */
  known: number;
  /** Units this process holds and has not spent. */
  unused: number;
  /** The size of the last lease, and when it was granted. */
  lastGrant: number;
  grantedAt: number;
  lastUse: number;
  /** Refused until the window ends. */
  refused: boolean;
  /** Requests waiting for Redis's answer. */
  waiting: Waiter[];
  /** Asked of Redis in the coming round (or the one under way). */
  asking: boolean;
}

export function createRedisLeases(redis: Redis, opts: { prefix: string; windowMs: number; now?: () => number }): RedisLeases {
  const client = redis as ScriptClient;
  if (typeof client.catalogReserve !== 'function') {
    redis.defineCommand('catalogReserve', { lua: RESERVE_SCRIPT });
    redis.defineCommand('catalogReturn', { lua: RETURN_SCRIPT });
  }
  const now = opts.now ?? Date.now;
  const leases = new Map<string, Lease>();
  /** Leases holding unused units, looked at by the sweep. */
  const holding = new Set<Lease>();
  let toAsk: Lease[] = [];

  const spendOne = (lease: Lease, t: number): LeaseDecision => {
    lease.unused--;
    lease.lastUse = t;
    if (lease.unused === 0) holding.delete(lease);
    return { allowed: true, count: Math.min(lease.limit, lease.known - lease.unused), msLeft: lease.endsAt - t };
  };
  const refusal = (lease: Lease, t: number): LeaseDecision => ({ allowed: false, count: lease.limit + 1, msLeft: Math.max(1, lease.endsAt - t) });

  const leaseOf = (key: string, limit: number, t: number): Lease => {
    let lease = leases.get(key);
    if (lease === undefined) {
      if (leases.size >= KEPT_LEASES) forgetIdleLeases(t);
      lease = { key, limit, endsAt: 0, known: 0, unused: 0, lastGrant: 0, grantedAt: 0, lastUse: 0, refused: false, waiting: [], asking: false };
      leases.set(key, lease);
    }
    if (t >= lease.endsAt - EDGE_MS && !lease.asking) {
      // A new window: whatever was held belonged to the last one.
      lease.refused = false;
      lease.unused = 0;
      lease.lastGrant = 0;
      holding.delete(lease);
    }
    // A limit changed (a key's budgets): a lease larger than the new limit allows is not kept.
    if (lease.limit !== limit) {
      lease.limit = limit;
      lease.refused = false;
      if (lease.known - lease.unused >= limit) lease.unused = 0;
    }
    return lease;
  };

  function forgetIdleLeases(t: number): void {
    for (const [key, lease] of leases) {
      if (lease.unused === 0 && lease.waiting.length === 0 && !lease.asking && (t >= lease.endsAt || !lease.refused)) leases.delete(key);
    }
    // Still full of leases in use: the oldest go (their units lapse with their window).
    if (leases.size >= KEPT_LEASES) {
      for (const [key, lease] of leases) {
        if (lease.waiting.length || lease.asking) continue;
        holding.delete(lease);
        leases.delete(key);
        if (leases.size < KEPT_LEASES / 2) break;
      }
    }
  }

  /** How many units to ask for: what this process spends in LEASE_TARGET_MS, growing at most twofold. */
  const wantOf = (lease: Lease, t: number): number => {
    const base = Math.max(1, lease.waiting.length);
    if (lease.lastGrant === 0) return base;
    const lasted = Math.max(1, t - lease.grantedAt);
    const atRate = Math.ceil((lease.lastGrant * LEASE_TARGET_MS) / lasted);
    return Math.max(base, Math.min(2 * lease.lastGrant, atRate));
  };

  const ask = (lease: Lease) => {
    if (lease.asking) return;
    lease.asking = true;
    // The first budget of a round schedules the call; it goes once the round's I/O is handled.
    if (toAsk.length === 0) setImmediate(sendAsks);
    toAsk.push(lease);
  };

  function sendAsks(): void {
    const batch = toAsk;
    toAsk = [];
    const t = now();
    const args: Array<string | number> = [];
    for (const lease of batch) args.push(lease.key);
    args.push(opts.windowMs, LEASE_MIN_ROOM);
    for (const lease of batch) args.push(Math.max(1, lease.waiting.length), wantOf(lease, t), lease.limit);
    client.catalogReserve(batch.length, ...args).then(
      (out) => {
        const at = now();
        for (let i = 0; i < batch.length; i++) settle(batch[i]!, out[4 * i]!, out[4 * i + 1]!, out[4 * i + 2]!, out[4 * i + 3] === 1, at);
      },
      (err: unknown) => {
        for (const lease of batch) {
          lease.asking = false;
          const waiting = lease.waiting;
          lease.waiting = [];
          for (const w of waiting) w.reject(err);
        }
      },
    );
  }

  function settle(lease: Lease, count: number, ttl: number, grant: number, leased: boolean, t: number): void {
    lease.asking = false;
    lease.known = count;
    lease.endsAt = t + ttl;
    if (grant > 0) {
      lease.unused += grant;
      lease.lastGrant = grant;
      lease.grantedAt = t;
      lease.lastUse = t;
      holding.add(lease);
    }
    const waiting = lease.waiting;
    lease.waiting = [];
    const again: Waiter[] = [];
    for (const w of waiting) {
      if (lease.unused > 0) w.resolve(spendOne(lease, t));
      else if (count < lease.limit) {
        // Room left, but not granted to this round (more asked at once than a lease gives): ask again.
        lease.waiting.push(w);
      } else if (leased && !w.waited) again.push(w);
      else {
        lease.refused = true;
        w.resolve(refusal(lease, t));
      }
    }
    if (lease.waiting.length > 0) ask(lease);
    if (again.length > 0) {
      // The budget is spent as far as Redis knows; other processes may still give units back.
      setTimeout(() => {
        for (const w of again) w.waited = true;
        lease.waiting.push(...again);
        ask(lease);
      }, WAIT_BEFORE_REFUSAL_MS).unref();
    }
  }

  /** Gives back the units of leases idle for LEASE_IDLE_MS (or all, on close). */
  const giveBack = (all: boolean): Promise<unknown> => {
    const t = now();
    const keys: string[] = [];
    const args: Array<string | number> = [];
    for (const lease of holding) {
      if (!all && t - lease.lastUse < LEASE_IDLE_MS) continue;
      holding.delete(lease);
      const left = lease.endsAt - t;
      if (left > EDGE_MS) {
        keys.push(lease.key);
        // Given back only within the window it was granted in (a TTL at most what is left of it).
        args.push(lease.unused, left + EDGE_MS);
      }
      lease.known -= lease.unused;
      lease.unused = 0;
      lease.lastGrant = 0;
    }
    if (keys.length === 0 || redis.status !== 'ready') return Promise.resolve();
    return client.catalogReturn(keys.length, ...keys, ...args).catch(() => undefined);
  };
  const sweep = setInterval(() => void giveBack(false), SWEEP_MS);
  sweep.unref();

  return {
    tryNow(key, limit) {
      const t = now();
      const lease = leaseOf(key, limit, t);
      if (lease.refused) return refusal(lease, t);
      if (lease.unused > 0 && lease.waiting.length === 0) return spendOne(lease, t);
      return undefined;
    },
    decide(key, limit) {
      const t = now();
      const lease = leaseOf(key, limit, t);
      if (lease.refused) return Promise.resolve(refusal(lease, t));
      if (lease.unused > 0 && lease.waiting.length === 0) return Promise.resolve(spendOne(lease, t));
      return new Promise<LeaseDecision>((resolve, reject) => {
        lease.waiting.push({ resolve, reject, waited: false });
        ask(lease);
      });
    },
    async close() {
      clearInterval(sweep);
      await giveBack(true);
    },
  };
}
