import { BULK_WRITE_LOCK } from '../src/db/locks.ts';
import type { Queryable } from './listing-source.ts';

/** A position in the outbox: rows are read in (txid, seq) order. txid is an xid8, kept as text. */
export interface OutboxPosition {
  txid: string;
  seq: number;
}

export interface OutboxRow extends OutboxPosition {
  listing_id: string | null;
  category_slug: string | null;
  /** Written by a bulk transaction (an import): only the main lane projects it. */
  bulk: boolean;
  /** When the row was written (the clock at the insert, in its transaction). */
  created_at: Date;
}

/**
 * The smallest transaction id that may still add outbox rows, leaving out running transactions
 * for which `excluded` (a condition on the running transaction's id, the xid8 `x`) holds.
 */
function horizon(excluded: string): string {
  return `(SELECT COALESCE(
    (SELECT min(x) FROM pg_snapshot_xip(snap.s) AS x WHERE NOT (${excluded})),
    pg_snapshot_xmax(snap.s))
  FROM (SELECT pg_current_snapshot() AS s) snap)`;
}

/** Running transaction `x` is seen in another database, or in autovacuum: it cannot write this database's outbox. */
const ELSEWHERE = `EXISTS (SELECT 1 FROM pg_stat_activity a
                     WHERE a.backend_xid = xid(x)
                       AND (a.datname IS DISTINCT FROM current_database() OR a.backend_type = 'autovacuum worker'))`;

/** The advisory lock BULK_WRITE_LOCK in pg_locks `l`: a bigint key is classid = its high 32 bits, objid = its low 32 bits, objsubid = 1. */
function bulkLock(l: string): string {
  return `${l}.locktype = 'advisory' AND ${l}.granted AND ${l}.objsubid = 1
         AND ${l}.classid = ${Math.floor(BULK_WRITE_LOCK / 2 ** 32)} AND ${l}.objid = ${BULK_WRITE_LOCK % 2 ** 32}
         AND ${l}.database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
}

/**
 * Running transaction `x` is bulk: the transaction holding x's own transaction-id lock also holds
 * BULK_WRITE_LOCK (the same virtual transaction, which no later transaction reuses), both read
 * from the lock table as it is now. The list of bulk transactions is read once per query.
 */
const BULK = `xid(x) IN (SELECT t.transactionid FROM pg_locks t JOIN pg_locks b ON b.virtualtransaction = t.virtualtransaction
                          WHERE t.locktype = 'transactionid' AND t.granted AND ${bulkLock('b')})`;

/**
 * The outbox horizon: the smallest transaction id that may still add outbox rows to this
 * database. It is the snapshot's xmin (pg_snapshot_xmin(pg_current_snapshot())) except that
 * transactions positively seen running in another database of the server (transaction ids are
 * cluster-wide, but a session writes only its own database) or in autovacuum (which never
 * writes the outbox) do not count: a long report elsewhere on a shared server must not stall the
 * projection. An in-progress transaction we cannot place counts, so the bound errs on the side
 * of waiting. Every outbox row below it is committed (and visible) or rolled back.
 */
export const OUTBOX_HORIZON = horizon(ELSEWHERE);

/**
 * The horizon of the interactive lane: OUTBOX_HORIZON, also leaving out bulk transactions, those
 * holding BULK_WRITE_LOCK. What a bulk transaction writes is bulk, read by the main lane only,
 * so the interactive lane has nothing to wait for from it. A transaction that took the lock after
 * its first write is still counted until then: waiting errs safe.
 */
export const INTERACTIVE_HORIZON = horizon(`${ELSEWHERE} OR ${BULK}`);

/** Whether the backend of pg_stat_activity row `a` is in a bulk transaction (holds BULK_WRITE_LOCK). */
export function bulkTransaction(a: string): string {
  return `EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = ${a}.pid AND ${bulkLock('l')})`;
}

/**
 * A lateral subquery for `FROM projection.checkpoints c CROSS JOIN LATERAL (…)`: the first
 * outbox row after checkpoint `c` that also meets `condition`, if any. The outbox keeps a day of
 * rows (a million after a large import): compared with a joined checkpoint row by row, every
 * row is read; asked per checkpoint, in the index's order, only the rows after it are.
 */
export function firstOutboxRowAfterCheckpoint(condition = 'true'): string {
  return `SELECT 1 FROM catalog.outbox o WHERE (o.txid, o.seq) > (c.txid, c.seq) AND ${condition} ORDER BY o.txid, o.seq LIMIT 1`;
}

export type CheckpointName = 'projection' | 'search';

export async function readCheckpoint(db: Queryable, name: CheckpointName): Promise<OutboxPosition> {
  const { rows } = await db.query<OutboxPosition>('SELECT txid::text AS txid, seq FROM projection.checkpoints WHERE name = $1', [name]);
  return rows[0] ?? { txid: '0', seq: 0 };
}

export async function writeCheckpoint(db: Queryable, name: CheckpointName, to: OutboxPosition): Promise<void> {
  await db.query('UPDATE projection.checkpoints SET txid = $2::xid8, seq = $3, updated_at = now() WHERE name = $1', [name, to.txid, to.seq]);
}

/**
 * Committed outbox rows after `after`, in (txid, seq) order. Only transactions older than every
 * running one are read (txid below the horizon, in essence the snapshot's xmin): sequence values
 * commit out of order, and a transaction still open may yet add rows that sort before later
 * ones. Such a transaction holds the reader back until it ends; it is never skipped. The row
 * comparison and the horizon are both conditions on the (txid, seq) index. `upTo` bounds the
 * read (inclusive).
 */
export async function readCommittedOutbox(
  db: Queryable,
  after: OutboxPosition,
  limit: number,
  upTo?: OutboxPosition,
): Promise<OutboxRow[]> {
  const params: unknown[] = [after.txid, after.seq, limit];
  let bound = '';
  if (upTo) {
    params.push(upTo.txid, upTo.seq);
    bound = 'AND (o.txid, o.seq) <= ($4::xid8, $5::bigint)';
  }
  const { rows } = await db.query<OutboxRow>(
    `SELECT o.txid::text AS txid, o.seq, o.listing_id, o.category_slug, o.bulk, o.created_at
       FROM catalog.outbox o
      WHERE (o.txid, o.seq) > ($1::xid8, $2::bigint)
        AND o.txid < ${OUTBOX_HORIZON}
        ${bound}
      ORDER BY o.txid, o.seq
      LIMIT $3`,
    params,
  );
  return rows;
}

/**
 * The interactive lane's read: committed outbox rows after `after` that are not bulk, in
 * (txid, seq) order, below INTERACTIVE_HORIZON (so a running import holds none of them back).
 * Read through the partial index of rows that are not bulk: after an import of a million
 * listings, the few edits among them are found without reading the rest.
 */
export async function readInteractiveOutbox(db: Queryable, after: OutboxPosition, limit: number): Promise<OutboxRow[]> {
  const { rows } = await db.query<OutboxRow>(
    `SELECT o.txid::text AS txid, o.seq, o.listing_id, o.category_slug, o.bulk, o.created_at
       FROM catalog.outbox o
      WHERE NOT o.bulk
        AND (o.txid, o.seq) > ($1::xid8, $2::bigint)
        AND o.txid < ${INTERACTIVE_HORIZON}
      ORDER BY o.txid, o.seq
      LIMIT $3`,
    [after.txid, after.seq, limit],
  );
  return rows;
}

/**
 * The last committed outbox row every transaction before which is finished, or undefined when
 * there is none. A rebuild that reads the write model after this query reflects everything up
 * to it; rows after it (possibly reflected already) are projected again, which is harmless.
 */
export async function committedOutboxEnd(db: Queryable): Promise<OutboxPosition | undefined> {
  const { rows } = await db.query<OutboxPosition>(
    `SELECT o.txid::text AS txid, o.seq FROM catalog.outbox o
      WHERE o.txid < ${OUTBOX_HORIZON}
      ORDER BY o.txid DESC, o.seq DESC LIMIT 1`,
  );
  return rows[0];
}

export function comparePositions(a: OutboxPosition, b: OutboxPosition): number {
  const ta = BigInt(a.txid);
  const tb = BigInt(b.txid);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.seq === b.seq ? 0 : a.seq < b.seq ? -1 : 1;
}
