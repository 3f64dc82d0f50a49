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
export const CONNECT_TIMEOUT_MS = 3_000;

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

/**
 * Runs fn in a transaction on one client; commits on success, rolls back on any error. On a pool
 * with deadlines the whole transaction has one: past it the connection is closed under whatever
 * query waits (the server rolls the transaction back when it sees the connection go), and the
 * caller gets an error isDatabaseUnavailable recognises. A client whose query failed for want of
 * an answer is closed, never returned to the pool, and not asked to ROLLBACK (it would wait too).
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const deadlines = deadlinesOf.get(pool);
  if (!deadlines) return runTransaction(await pool.connect(), fn);
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
    return await Promise.race([connected.then((c) => runTransaction(c, fn, () => expired)), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function runTransaction<T>(client: pg.PoolClient, fn: (client: pg.PoolClient) => Promise<T>, expired: () => boolean = () => false): Promise<T> {
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    if (expired() || unanswered(err)) broken = err as Error;
    else await client.query('ROLLBACK').catch((e: unknown) => (broken = e as Error));
    throw err;
  } finally {
    client.release(broken ?? expired());
  }
}

/** A query the client gave up on, or a connection that is gone: the client cannot be reused. */
function unanswered(err: unknown): boolean {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /^Query read timeout|^Connection terminated|is not queryable/.test(message);
}
