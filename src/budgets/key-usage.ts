import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { addUsage, USAGE_COLUMNS, type UsageColumn, type UsageCount } from '../auth/consumer-keys/consumer-keys.ts';
import type { Pool } from '../db/pool.ts';
import { createCoalescedRunner } from '../util/coalesced-runner.ts';

/**
 * Consumer keys' usage (docs/keys.md): every request of a key is counted, by family or as
 * refused, as its budget is decided (lease-store.ts), and the counts reach PostgreSQL (the
 * auth.consumer_key_usage table, written by src/auth's addUsage) within about a second.
 *
 * Where a request is counted follows where its budget was decided. In this process's memory
 * (no Redis, or Redis away): in a map handed out in batches. In Redis: every request of a key
 * answered (or refused) in one round of the event loop is added to one Redis hash in one write,
 * and the decisions of that round resolve only once the write is on its way: an answer is never
 * sent before its count, so an API process killed at any moment loses no count of an answer its
 * client saw. The hash is taken every second: renamed to a batch of its own in one atomic step
 * and listed in a set, so every count is in exactly one batch.
 *
 * The usage recorder moves the batches to PostgreSQL every second, and once more when the
 * process stops. A batch is let go only once PostgreSQL holds it, and PostgreSQL adds a batch
 * once whoever hands it over (addUsage), so a count is neither lost nor counted twice when a
 * process dies between the two. While the database is away the batches wait and are written
 * when it is back.
 */
export interface KeyUsage {
  /** Counts one request of a key in this process's memory (`column`: its family, or `refused`). */
  countHere(keyId: string, column: string): void;
  /**
   * Counts one in Redis, and resolves with `value` once the count is written there (kept in
   * this process's memory when the connection cannot take it).
   */
  countShared<T>(keyId: string, column: string, value: T): Promise<T>;
  /** Every batch not yet in PostgreSQL: those counted here and those waiting in Redis. */
  take(): Promise<UsageBatch[]>;
  close(): void;
}

/** Counts of consumer keys waiting to be written to PostgreSQL. */
interface UsageBatch {
  readonly id: string;
  /** `keyId|day|column` → requests. */
  readonly counts: ReadonlyMap<string, number>;
  /** Called once PostgreSQL holds the batch (or held it already): it is let go. */
  done(): Promise<void>;
}

export interface KeyUsageOptions {
  /** The clock (the UTC day of a count); tests move it. */
  now: () => number;
  /** The budgets' Redis connection; undefined counts in memory only. */
  redis: Redis | undefined;
  /** The budgets' key prefix in Redis. */
  prefix: string;
  /** This catalog's name for its counts in a Redis other catalogs may share (src/auth/consumer-keys: usageSpace). */
  usageSpace: string;
}

export function createKeyUsage(opts: KeyUsageOptions): KeyUsage {
  const memory = createMemoryUsage(opts.now);
  const shared = opts.redis ? createRedisUsage(opts.redis, `${opts.prefix}:usage:${opts.usageSpace}`, memory.countField) : undefined;
  return {
    countHere(keyId, column) {
      memory.countField(`${keyId}|${memory.day()}|${column}`);
    },
    countShared(keyId, column, value) {
      // Without Redis nothing asks (lease-store.ts counts here); kept here all the same.
      if (!shared) {
        memory.countField(`${keyId}|${memory.day()}|${column}`);
        return Promise.resolve(value);
      }
      return shared.count(`${keyId}|${memory.day()}|${column}`, value);
    },
    async take() {
      const batches = memory.take();
      if (shared) batches.push(...(await shared.take()));
      return batches;
    },
    close() {
      shared?.close();
    },
  };
}

/**
 * Usage counted in this process's memory (no Redis, or Redis away), handed out in batches; a
 * batch not yet written is handed out again, under the same id, until it is.
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

const TAKE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('RENAME', KEYS[1], KEYS[3])
  redis.call('SADD', KEYS[2], KEYS[3])
end
return redis.call('SMEMBERS', KEYS[2])
`;

type ScriptClient = Redis & {
  catalogTakeUsage(usage: string, batches: string, batch: string): Promise<string[]>;
};

/** Usage counted in the Redis hash `usageKey`, a round of the event loop in one write. */
function createRedisUsage(redis: Redis, usageKey: string, fallback: (field: string, n: number) => void) {
  const client = redis as ScriptClient;
  if (typeof client.catalogTakeUsage !== 'function') redis.defineCommand('catalogTakeUsage', { numberOfKeys: 3, lua: TAKE_SCRIPT });
  const batchesKey = `${usageKey}:batches`;
  // The counts of one round, written in one go before that round's answers; one promise a
  // round, which every count of the round waits for.
  const usageWriter = createUsageWriter(redis);
  let usageRound = new Map<string, number>();
  let roundWritten: Promise<void> | undefined;
  let settleRound: () => void = () => undefined;
  const writeUsage = () => {
    const round = usageRound;
    const settle = settleRound;
    usageRound = new Map();
    roundWritten = undefined;
    if (!usageWriter.write(usageKey, round)) for (const [field, n] of round) fallback(field, n);
    settle();
  };
  return {
    /** Counts one request under a field `keyId|day|column`; resolves with `value` once written. */
    count<T>(field: string, value: T): Promise<T> {
      if (roundWritten === undefined) {
        roundWritten = new Promise<void>((resolve) => (settleRound = resolve));
        setImmediate(writeUsage);
      }
      usageRound.set(field, (usageRound.get(field) ?? 0) + 1);
      return roundWritten.then(() => value);
    },
    /** Every batch waiting in Redis, the counts written since the last call among them. */
    async take(): Promise<UsageBatch[]> {
      const names = await client.catalogTakeUsage(usageKey, batchesKey, `${usageKey}:batch:${randomUUID()}`);
      const batches: UsageBatch[] = [];
      for (const name of names) {
        const fields = await redis.hgetall(name);
        const counts = new Map<string, number>();
        for (const field in fields) counts.set(field, Number(fields[field]));
        batches.push({
          id: name,
          counts,
          async done() {
            await redis.multi().del(name).srem(batchesKey, name).exec();
          },
        });
      }
      return batches;
    },
    close(): void {
      usageWriter.close();
    },
  };
}

/**
 * The usage counts' own connection to Redis, on which Redis is told never to reply (CLIENT
 * REPLY OFF): a round's counts are one HINCRBY each, written to the socket in one write, with
 * nothing to wait for and no reply to read. (ioredis, which opens, authenticates and reconnects
 * the connection, would make a command, a promise and a reply of each count: several times what
 * answering the request costs.) Counts written to the socket reach Redis even if this process
 * is killed right after: with no reply ever unread, closing the socket sends what it holds.
 */
interface UsageWriter {
  /** Writes the counts; false when the connection is not ready (the caller keeps them). */
  write(hash: string, counts: ReadonlyMap<string, number>): boolean;
  close(): void;
}

function bulk(text: string): string {
  return `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
}

const REPLY_OFF = `*3\r\n${bulk('CLIENT')}${bulk('REPLY')}${bulk('OFF')}`;

function createUsageWriter(redis: Redis): UsageWriter {
  // No offline queue: counts are never queued in this process. Nagle's algorithm on: the kernel
  // gathers the rounds' small writes while one is unacknowledged, so Redis wakes once for many
  // (what the kernel holds is sent even if this process dies).
  const connection = redis.duplicate({ enableOfflineQueue: false, lazyConnect: false, noDelay: false });
  connection.on('error', () => undefined);
  let replyOff = false;
  connection.on('ready', () => {
    connection.stream.write(REPLY_OFF);
    replyOff = true;
  });
  connection.on('close', () => {
    replyOff = false;
  });
  return {
    write(hash, counts) {
      if (!replyOff || connection.status !== 'ready' || !connection.stream.writable) return false;
      const key = bulk(hash);
      let text = '';
      for (const [field, n] of counts) text += `*4\r\n$7\r\nHINCRBY\r\n${key}${bulk(field)}${bulk(String(n))}`;
      connection.stream.write(text);
      return true;
    },
    close() {
      connection.disconnect();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The recorder: the counts into PostgreSQL

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

export function startUsageRecorder(opts: { usage: Pick<KeyUsage, 'take'>; pool: Pool; log: Pick<Logger, 'warn' | 'info'>; intervalMs?: number }): UsageRecorder {
  let failing = false;
  const once = async () => {
    try {
      for (const batch of await opts.usage.take()) {
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
