import pg from 'pg';

// int8 (bigint) columns come back as JS numbers: our counters stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** A pool or one of its clients (inside a transaction): what a query needs. */
export type Queryable = Pool | PoolClient;

/**
 * The deadlines of a pool that answers requests (docs/partitions.md). A database that freezes
 * (a stopped server, a stalled disk, a network partition) keeps open connections open and
 * answers nothing: without them a write waits for the operating system's TCP timeout, minutes.
 * With them every query, connection and transaction of the pool gives up within seconds, with
 * an error isDatabaseUnavailable recognises, and a write answers SERVICE_UNAVAILABLE.
 */
export interface PoolDeadlines {
  /**
   * Waiting for a connection: a new one to a server that does not answer, or a free one of a
   * pool whose every connection is taken (pg-pool's checkout wait).
   */
  connectMs: number;
  /** A query's answer (client side; the connection is then closed, never reused). */
  queryMs: number;
  /** A whole transaction of withTransaction, from asking for a connection to COMMIT. */
  transactionMs: number;
}

/**
 * The request pools' deadlines: a write on a frozen database is refused within about 3 s (4 s
 * at most, a transaction), while a query of a busy but answering server has 3 s.
 */
export const REQUEST_DEADLINES: PoolDeadlines = { connectMs: 3_000, queryMs: 3_000, transactionMs: 4_000 };

/** Waiting for a connection, in a pool without deadlines of its own. */
const CONNECT_TIMEOUT_MS = 3_000;

const deadlinesOf = new WeakMap<pg.Pool, PoolDeadlines>();

export function createPool(connectionString: string, opts: { max?: number; applicationName?: string; deadlines?: PoolDeadlines } = {}): pg.Pool {
  const deadlines = opts.deadlines;
  const pool = new pg.Pool({
    connectionString,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'catalog',
    idleTimeoutMillis: 30_000,
    // A server that does not answer must not hold a caller (or a shutdown) for ever: a write
    // met by an unreachable database answers SERVICE_UNAVAILABLE within seconds, never hangs.
    // It bounds the wait for a free connection of a full pool too.
    connectionTimeoutMillis: deadlines?.connectMs ?? CONNECT_TIMEOUT_MS,
    // A connection whose peer vanished without a word (a partition) is found out by the kernel.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...(deadlines && {
      // Client side: a query unanswered this long fails with "Query read timeout".
      query_timeout: deadlines.queryMs,
      // Server side: a statement nobody waits for any more is ended, and a transaction its
      // client gave up on (or lost, behind a partition) lets go of its locks.
      statement_timeout: deadlines.queryMs + 1_000,
      idle_in_transaction_session_timeout: Math.max(10_000, deadlines.transactionMs * 2),
    }),
  });
  if (deadlines) deadlinesOf.set(pool, deadlines);
  // A client losing its connection must not crash the process, idle in the pool (the pool's
  // 'error') or checked out between two queries (the client's own, which the pool leaves
  // unheard meanwhile): its next query fails, and the pool replaces it on release.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** The error a transaction past its deadline fails with (isDatabaseUnavailable: true). */
export class TransactionDeadlineError extends Error {
  readonly code = 'TRANSACTION_DEADLINE';
  constructor(ms: number) {
    super(`the database did not finish the transaction within ${ms / 1000} s`);
    this.name = 'TransactionDeadlineError';
  }
}

/** PostgreSQL's isolation levels (its read uncommitted is read committed). */
type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

/** How a transaction of withTransaction begins; each setting lasts until the transaction ends. */
interface TransactionSettings {
  /** The isolation level; the server's default (read committed) when unset. */
  isolation?: IsolationLevel;
  /**
   * READ ONLY: a write fails (25006). A transaction that writes nothing takes no transaction id,
   * so it never holds the projector's outbox horizon back.
   */
  readOnly?: boolean;
  /** statement_timeout for this transaction only: a statement running longer is cancelled (57014), and the transaction rolled back. */
  statementTimeoutMs?: number;
  /** lock_timeout for this transaction only: waiting longer for any lock (the advisory lock below too) fails (55P03). */
  lockTimeoutMs?: number;
}

/** A transaction that takes a transaction-level advisory lock first, waiting for it. */
export interface LockingTransaction extends TransactionSettings {
  /**
   * An advisory lock key of locks.ts, taken before fn runs (pg_advisory_xact_lock) and held until
   * the transaction ends: transactions taking the same key run one after another.
   */
  lock?: number;
  tryLock?: undefined;
}

/** A transaction that runs only if an advisory lock is free. */
export interface TryLockingTransaction extends TransactionSettings {
  /**
   * An advisory lock key of locks.ts, taken before fn runs if no other session holds it
   * (pg_try_advisory_xact_lock). When one does, the transaction ends at once, fn is not called,
   * and withTransaction resolves to undefined.
   */
  tryLock: number;
  lock?: undefined;
}

export type TransactionOptions = LockingTransaction | TryLockingTransaction;

/** What fn may ask of its transaction besides queries. */
interface Transaction {
  /** Ends the transaction with ROLLBACK instead of COMMIT once fn returns; fn's result is returned all the same. */
  rollbackOnReturn(): void;
}

/** A connection the caller holds: a pool's client it checked out, or a client of its own. */
export type TransactionClient = pg.ClientBase;
type ClientOf<D> = D extends pg.Pool ? pg.PoolClient : D;
export type TransactionBody<C, T> = (client: C, tx: Transaction) => Promise<T>;

/**
 * Runs fn in a transaction on one connection: commits when it returns (or rolls back, when it
 * asked to), rolls back on any error, which is thrown again. `db` is a pool, which lends a
 * connection for the transaction, or a connection the caller holds across several steps, which
 * stays the caller's (not released, and on it no deadline: it has no pool's).
 *
 * Options say how the transaction begins: its isolation level, read only, statement and lock
 * timeouts (sent with BEGIN, one round trip), then an advisory lock taken before fn runs
 * (`lock`) or the transaction skipped unless it is free (`tryLock`).
 *
 * On a pool with deadlines the whole transaction has one: past it the connection is closed under
 * whatever query waits (the server rolls the transaction back when it sees the connection go),
 * and the caller gets an error isDatabaseUnavailable recognises. A client whose query failed for
 * want of an answer is closed, never returned to the pool, and not asked to ROLLBACK (it would
 * wait too).
 */
export function withTransaction<D extends pg.Pool | TransactionClient, T>(db: D, fn: TransactionBody<ClientOf<D>, T>): Promise<T>;
export function withTransaction<D extends pg.Pool | TransactionClient, T>(db: D, options: TryLockingTransaction, fn: TransactionBody<ClientOf<D>, T>): Promise<T | undefined>;
export function withTransaction<D extends pg.Pool | TransactionClient, T>(db: D, options: LockingTransaction, fn: TransactionBody<ClientOf<D>, T>): Promise<T>;
export async function withTransaction<T>(
  db: pg.Pool | TransactionClient,
  optionsOrFn: TransactionOptions | TransactionBody<TransactionClient, T>,
  maybeFn?: TransactionBody<TransactionClient, T>,
): Promise<T | undefined> {
  const [options, fn] = typeof optionsOrFn === 'function' ? [{}, optionsOrFn] : [optionsOrFn, maybeFn!];
  const prelude = beginStatements(options);
  if (!(db instanceof pg.Pool)) return runTransaction(db, prelude, options, fn, false);
  const pool = db;
  const deadlines = deadlinesOf.get(pool);
  if (!deadlines) return runTransaction(await pool.connect(), prelude, options, fn, true);
  const ms = deadlines.transactionMs;
  let timer: NodeJS.Timeout | undefined;
  let client: pg.PoolClient | undefined;
  let expired = false;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      expired = true;
      // Closing the socket fails the query under way at once ("Connection terminated").
      (client as (pg.PoolClient & { connection?: { stream?: { destroy(): void } } }) | undefined)?.connection?.stream?.destroy();
      reject(new TransactionDeadlineError(ms));
    }, ms);
  });
  late.catch(() => undefined);
  try {
    const connected = pool.connect().then((c) => {
      if (expired) {
        c.release(true);
        throw new TransactionDeadlineError(ms);
      }
      return (client = c);
    });
    connected.catch(() => undefined);
    return await Promise.race([connected.then((c) => runTransaction(c, prelude, options, fn, true, () => expired)), late]);
  } finally {
    clearTimeout(timer);
  }
}

const ISOLATION: Record<IsolationLevel, string> = {
  'read committed': 'READ COMMITTED',
  'repeatable read': 'REPEATABLE READ',
  serializable: 'SERIALIZABLE',
};

/** Milliseconds for a setting: a whole number from 0 (0 turns the timeout off). */
function milliseconds(name: string, ms: number): number {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`${name} must be a whole number of milliseconds, not ${ms}`);
  return ms;
}

/**
 * BEGIN and the settings that follow it, as one string of statements (one round trip): BEGIN
 * with the isolation level and access mode, then the transaction's own timeouts (SET LOCAL ends
 * with it). Nothing here comes from outside: levels are from a fixed list, numbers are checked.
 */
function beginStatements(options: TransactionSettings): string {
  let begin = 'BEGIN';
  if (options.isolation !== undefined) {
    const level = ISOLATION[options.isolation];
    if (!level) throw new RangeError(`unknown isolation level ${String(options.isolation)}`);
    begin += ` ISOLATION LEVEL ${level}`;
  }
  if (options.readOnly) begin += ' READ ONLY';
  const statements = [begin];
  if (options.statementTimeoutMs !== undefined) statements.push(`SET LOCAL statement_timeout = ${milliseconds('statementTimeoutMs', options.statementTimeoutMs)}`);
  if (options.lockTimeoutMs !== undefined) statements.push(`SET LOCAL lock_timeout = ${milliseconds('lockTimeoutMs', options.lockTimeoutMs)}`);
  return statements.join('; ');
}

async function runTransaction<T>(
  client: TransactionClient,
  prelude: string,
  options: TransactionOptions,
  fn: TransactionBody<TransactionClient, T>,
  pooled: boolean,
  expired: () => boolean = () => false,
): Promise<T | undefined> {
  let broken: Error | undefined;
  try {
    await client.query(prelude);
    // The lock comes after the settings, so that lock_timeout bounds the wait for it.
    if (options.lock !== undefined) await client.query('SELECT pg_advisory_xact_lock($1)', [options.lock]);
    if (options.tryLock !== undefined) {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [options.tryLock]);
      if (rows[0]?.locked !== true) {
        await client.query('ROLLBACK');
        return undefined;
      }
    }
    let rollback = false;
    const result = await fn(client, {
      rollbackOnReturn() {
        rollback = true;
      },
    });
    await client.query(rollback ? 'ROLLBACK' : 'COMMIT');
    return result;
  } catch (err) {
    if (expired() || unanswered(err)) broken = err as Error;
    else await client.query('ROLLBACK').catch((e: unknown) => (broken = e as Error));
    throw err;
  } finally {
    if (pooled) (client as pg.PoolClient).release(broken ?? expired());
  }
}

/** A query the client gave up on, or a connection that is gone: the client cannot be reused. */
function unanswered(err: unknown): boolean {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /^Query read timeout|^Connection terminated|is not queryable/.test(message);
}
