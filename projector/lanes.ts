import type { Pool, PoolClient } from '../src/db/pool.ts';
import type { SearchIndex } from '../src/search/port.ts';
import type { Log } from '../src/util/log.ts';
import { batchVersion, beginBatch, endBatch, type BatchTrace } from './batch-tracing.ts';
import {
  comparePositions,
  firstOutboxRowAfterCheckpoint,
  readCheckpoint,
  readCommittedOutbox,
  readInteractiveOutbox,
  writeCheckpoint,
  type OutboxPosition,
  type OutboxRow,
} from './outbox-reader.ts';
import { utcDate } from './product-document.ts';
import { projectListings } from './project-listings.ts';
import type { ProjectionWrite } from './projection-write.ts';
import { syncSearchListings } from './search-sync.ts';

/**
 * The projector's two lanes through the outbox (docs/freshness.md). The main lane reads every
 * row in (txid, seq) order below the outbox horizon and moves the checkpoint. The interactive
 * lane reads only rows that are not bulk, below a horizon that running bulk transactions (an
 * import) do not hold back, and moves only its own position, kept in the leader's memory.
 */

/**
 * Where the interactive lane reads from: after its own position, and never before the main
 * checkpoint (a new leader, which knows no position, starts there; so does a lane the main lane
 * has overtaken).
 */
export function interactiveLaneStart(position: OutboxPosition | undefined, main: OutboxPosition): OutboxPosition {
  return position && comparePositions(position, main) > 0 ? position : main;
}

/**
 * Which rows of a main-lane batch it projects: all of them, less those the interactive lane
 * already projected (not bulk, at or before its position). Each of those was projected after its
 * transaction committed, from the listing's state then, and any later change has a row of its own.
 */
export function rowsLeftForMainLane(rows: readonly OutboxRow[], interactive: OutboxPosition | undefined): readonly OutboxRow[] {
  return interactive ? rows.filter((r) => r.bulk || comparePositions(r, interactive) > 0) : rows;
}

export interface LaneOptions {
  pool: () => Pool;
  write: ProjectionWrite;
  /** The site url documents are built on, as the leader last checked it. */
  siteUrl: () => string;
  /** The clock (promo lapses in documents); tests move it. */
  now: () => Date;
  log: Log;
  /** Outbox rows per batch of the interactive lane. */
  batchSize: number;
  /** Outbox rows per batch of the main lane. */
  bulkBatchSize: number;
  /** The external search index, which the interactive lane feeds at once; undefined in embedded mode. */
  searchIndex: SearchIndex | undefined;
  /** Whether to go on: this process leads and is not stopping. */
  active: () => boolean;
}

/** What one turn of the lanes did. */
export interface LanesTurn {
  /** Outbox rows the main lane read (and moved its checkpoint over). */
  projected: number;
  /** Whether committed rows wait after the main checkpoint behind a transaction still open. */
  heldBack: boolean;
}

export class ProjectionLanes {
  /**
   * How far the interactive lane has projected: every outbox row that is not bulk, up to this
   * position, was projected after its transaction committed. A new leader starts from the main
   * checkpoint (re-projecting a listing is harmless).
   */
  private interactive: OutboxPosition | undefined;

  constructor(private readonly opts: LaneOptions) {}

  /** Forgets the interactive lane's position (leadership was lost: the next leader starts from the checkpoint). */
  forget(): void {
    this.interactive = undefined;
  }

  /**
   * One turn: the main lane first, as long as nothing holds it back. Between two batches of a
   * backlog (an import), whatever makers and reviewers committed meanwhile goes first; and when
   * rows wait behind an open transaction (an import still running), the interactive lane takes
   * those it may. Otherwise the main lane alone has projected everything. Resolves to undefined
   * when it stopped part way (no longer leading, or stopping).
   */
  async run(): Promise<LanesTurn | undefined> {
    let projected = 0;
    for (;;) {
      if (!this.opts.active()) return undefined;
      const n = await this.mainBatch();
      projected += n;
      if (n < this.opts.bulkBatchSize) break;
      await this.drainInteractive();
    }
    if (!this.opts.active()) return undefined;
    const heldBack = await this.rowsHeldBack();
    if (heldBack) await this.drainInteractive();
    if (!this.opts.active()) return undefined;
    return { projected, heldBack };
  }

  /**
   * The main lane: one batch of the outbox in (txid, seq) order, projected and checkpointed in
   * one transaction, whatever the rows (bulk or not), less those the interactive lane already
   * projected. Returns rows read.
   */
  async mainBatch(): Promise<number> {
    // With traces on, the batch's span (batch-tracing.ts), ended once the transaction is over.
    let traced: { batch: BatchTrace | undefined; rows: readonly OutboxRow[] } | undefined;
    try {
      const n = await this.opts.write(async (client) => {
        const from = await readCheckpoint(client, 'projection');
        const rows = await readCommittedOutbox(client, from, this.opts.bulkBatchSize);
        if (rows.length === 0) return undefined;
        const pending = rowsLeftForMainLane(rows, this.interactive);
        if (pending.length > 0) {
          traced = { batch: beginBatch('main', pending), rows: pending };
          await this.projectRows(client, pending, traced.batch);
        }
        const last = rows[rows.length - 1]!;
        await writeCheckpoint(client, 'projection', last);
        // Without an external index, API processes feed their embedded engines from the projection.
        if (!this.opts.searchIndex) await writeCheckpoint(client, 'search', last);
        return rows.length;
      });
      if (traced) endBatch(traced.batch, traced.rows, n === undefined ? { committed: false } : { committed: true });
      return n ?? 0;
    } catch (error) {
      if (traced) endBatch(traced.batch, traced.rows, { committed: false, error });
      throw error;
    }
  }

  /**
   * The interactive lane: one batch of the outbox rows that are not bulk, from
   * interactiveLaneStart, below a horizon that a running import does not hold back; projected in
   * one transaction. Moves only the lane's own position: the main lane passes over these rows
   * later. With an external index, the listings are sent to it at once too. Returns rows read.
   */
  async interactiveBatch(): Promise<number> {
    let traced: { batch: BatchTrace | undefined; rows: readonly OutboxRow[] } | undefined;
    let result;
    try {
      result = await this.opts.write(async (client) => {
        const main = await readCheckpoint(client, 'projection');
        const rows = await readInteractiveOutbox(client, interactiveLaneStart(this.interactive, main), this.opts.batchSize);
        if (rows.length === 0) return undefined;
        traced = { batch: beginBatch('interactive', rows), rows };
        const ids = await this.projectRows(client, rows, traced.batch);
        return { rows: rows.length, last: rows[rows.length - 1]!, ids };
      });
    } catch (error) {
      if (traced) endBatch(traced.batch, traced.rows, { committed: false, error });
      throw error;
    }
    if (traced) endBatch(traced.batch, traced.rows, result ? { committed: true } : { committed: false });
    if (!result) return 0;
    this.interactive = result.last;
    const { searchIndex } = this.opts;
    if (searchIndex && result.ids.length > 0) await syncSearchListings(this.opts.pool(), searchIndex, result.ids);
    return result.rows;
  }

  /** Runs the interactive lane until it has nothing more. */
  async drainInteractive(): Promise<void> {
    while (this.opts.active() && (await this.interactiveBatch()) >= this.opts.batchSize);
  }

  /** Projects the listings and categories the rows name; returns the listings' ids. */
  private async projectRows(client: PoolClient, rows: readonly OutboxRow[], batch: BatchTrace | undefined): Promise<string[]> {
    const listingIds = [...new Set(rows.flatMap((r) => (r.listing_id ? [r.listing_id] : [])))];
    const categorySlugs = [...new Set(rows.flatMap((r) => (r.category_slug ? [r.category_slug] : [])))];
    const oldestChangeAt = rows.reduce((oldest, r) => (r.created_at < oldest ? r.created_at : oldest), rows[0]!.created_at);
    const { log, now } = this.opts;
    const { version } = await projectListings(client, {
      listingIds,
      categorySlugs,
      siteUrl: this.opts.siteUrl(),
      today: utcDate(now()),
      log,
      oldestChangeAt,
      traceparent: batch?.traceparent,
    });
    batchVersion(batch, version);
    return listingIds;
  }

  /** Whether committed outbox rows wait after the main checkpoint (an open transaction holds them back). */
  private async rowsHeldBack(): Promise<boolean> {
    const { rows } = await this.opts.pool().query<{ held: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM projection.checkpoints c CROSS JOIN LATERAL (${firstOutboxRowAfterCheckpoint()}) later
                       WHERE c.name = 'projection') AS held`,
    );
    return rows[0]?.held === true;
  }
}
