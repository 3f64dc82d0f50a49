import { PROJECTION_WRITE_LOCK } from '../src/db/locks.ts';
import type { Leadership } from '../src/db/leadership.ts';
import { withTransaction, type Pool, type PoolClient } from '../src/db/pool.ts';

/**
 * Runs fn in a transaction that may write projection.*, and commits what it did when it returns
 * a value. Resolves to undefined, with nothing written, when fn returns undefined (it found
 * nothing to do) or when this process no longer leads.
 */
export type ProjectionWrite = <T>(fn: (client: PoolClient) => Promise<T | undefined>) => Promise<T | undefined>;

/**
 * The leading projector's write transactions: PROJECTION_WRITE_LOCK first, so that batches, promo
 * lapses, prunings and rebuilds apply one after another, each reading what the one before left;
 * then, holding it, whether this process's leading session still holds its lock, asked on the
 * transaction's own connection. A process that lost its session (however it went) learns it
 * there, before writing anything, and stands by.
 */
export function createProjectionWrite(pool: () => Pool, leadership: Pick<Leadership, 'stillHeld'>): ProjectionWrite {
  return (fn) =>
    withTransaction(pool(), { lock: PROJECTION_WRITE_LOCK }, async (client, tx) => {
      const result = (await leadership.stillHeld(client)) ? await fn(client) : undefined;
      if (result === undefined) tx.rollbackOnReturn();
      return result;
    });
}
