import { createPool, withTransaction, type Pool, type PoolClient } from '../src/db/pool.ts';
import { createCoalescedRunner } from '../src/util/coalesced-runner.ts';
import type { SearchIndex } from '../src/search/port.ts';
import { pruneChanges } from './change-log.ts';
import { blockingTransaction } from './lag.ts';
import { batchVersion, beginBatch, endBatch, type BatchTrace } from './batch-tracing.ts';
import { createLeadership } from '../src/db/leadership.ts';
import { createOutboxListener } from './listener.ts';
import { PROJECTION_WRITE_LOCK } from '../src/db/locks.ts';
import { silentLog, type ProjectorLog } from '../src/util/log.ts';
import { comparePositions, firstOutboxRowAfterCheckpoint, OUTBOX_HORIZON, readCheckpoint, readCommittedOutbox, readInteractiveOutbox, writeCheckpoint, type OutboxPosition, type OutboxRow } from './outbox-reader.ts';
import { utcDate } from './product-document.ts';
import { projectListings } from './project-listings.ts';
import { lapsedPromoIds, msUntilNextUtcMidnight } from './promo-lapse.ts';
import { pruneOutbox, pruneRemoved } from './prune.ts';
import { rebuildProjection, rebuildSearchIndex } from './reindex.ts';
import { syncSearchBatch, syncSearchListings } from './search-sync.ts';
import { createSnapshotWriter } from './snapshots.ts';

export interface ProjectorOptions {
  connectionString: string;
  /** The directory site's origin; product and category urls are built on it. */
  siteUrl: string;
  /**
   * Keep the site url the projection was built with, when there is one, instead of siteUrl: for
   * processes that serve no pages themselves (`catalog projector`) and were given no SITE_URL or
   * PUBLIC_URL, whose derived default would name an address nothing listens on.
   */
  keepRecordedSiteUrl?: boolean;
  /** The external search index (Meilisearch); undefined in embedded mode. */
  searchIndex?: SearchIndex;
  /** Outbox rows per batch of the interactive lane, promo lapses and the external index's feed. */
  batchSize?: number;
  /** Outbox rows per batch of the main lane, which carries bulk imports (default 1,000). */
  bulkBatchSize?: number;
  pollMs?: number;
  log?: ProjectorLog;
  /** The clock (promo lapses); tests move it. */
  now?: () => Date;
  /** Removals are kept this long for readers following versions. */
  removedRetentionHours?: number;
  /** Folder for this host's copy of the snapshots it writes (see src/read/snapshot-store.ts). */
  snapshotCacheDir?: string | undefined;
  /** The change feed keeps changes this long (at least 7 days: see CHANGES_RETENTION_DAYS). */
  changesRetentionHours?: number;
}

export interface Projector {
  /** Resolves once running, as leader or as standby. */
  start(): Promise<void>;
  /** Finishes the current batch, releases leadership, closes connections. */
  stop(): Promise<void>;
  /**
   * Resolves when everything committed before the call (and readable: see the outbox reader)
   * is projected, and fed to the external index when there is one. On a standby, waits for the
   * leader to get there.
   */
  catchUp(): Promise<void>;
  readonly isLeader: boolean;
  /** While leading, the backend process id of the session holding the leader's lock (`catalog status` matches it in pg_locks). */
  readonly leaderSessionPid: number | undefined;
  /**
   * When leading: resolves once the database holds a usable projection snapshot, writing one
   * if there is none (the first start after an upgrade, a fresh catalog).
   */
  ensureSnapshot(): Promise<void>;
}

/** How long an open transaction may hold the projector back before a warning names it. */
const BLOCKED_WARN_SECONDS = 5;
/** The longest wait before looking again at committed rows an open transaction holds back. */
const HELD_BACK_MAX_MS = 100;
const BLOCKED_CHECK_MS = 5_000;
const PRUNE_EVERY_MS = 10 * 60_000;
const VERIFY_LEADERSHIP_MS = 10_000;
export const DEFAULT_CHANGES_RETENTION_HOURS = 7 * 24;
/** Batches of the change log pruned in one housekeeping round, each its own short transaction. */
const CHANGE_PRUNE_BATCHES = 20;

export function createProjector(opts: ProjectorOptions): Projector {
  const log = opts.log ?? silentLog;
  const batchSize = opts.batchSize ?? 500;
  const bulkBatchSize = opts.bulkBatchSize ?? Math.max(batchSize, 1000);
  const pollMs = opts.pollMs ?? 1000;
  const now = opts.now ?? (() => new Date());
  const searchIndex = opts.searchIndex;
  let siteUrl = opts.siteUrl;
  const retentionHours = opts.removedRetentionHours ?? 24;
  const changesRetentionHours = opts.changesRetentionHours ?? DEFAULT_CHANGES_RETENTION_HOURS;

  let pool: Pool | undefined;
  let stopping = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let midnightTimer: NodeJS.Timeout | undefined;
  let siteChecked = false;
  let lastPrune = 0;
  let lastBlockedCheck = 0;
  let acquiring = false;
  let heldBackTimer: NodeJS.Timeout | undefined;
  let heldBackDelay = 0;
  let catchingUp = false;
  /**
   * How far the interactive lane has projected: every outbox row that is not bulk, up to this
   * position, was projected after its transaction committed. Held in memory by the leader; a new
   * leader starts from the main checkpoint (re-projecting a listing is harmless).
   */
  let interactive: OutboxPosition | undefined;

  const leadership = createLeadership(opts.connectionString, {
    log,
    onLost: () => {
      siteChecked = false;
      interactive = undefined;
    },
  });
  const listener = createOutboxListener(opts.connectionString, { onWake: () => wake(), log });
  const snapshots = createSnapshotWriter({ pool: () => db(), connectionString: opts.connectionString, search: !searchIndex, cacheDir: opts.snapshotCacheDir, log });

  function db(): Pool {
    if (!pool) throw new Error('projector is not started');
    return pool;
  }

  async function inWriteTransaction<T>(fn: (client: PoolClient) => Promise<T | undefined>): Promise<T | undefined> {
    return withTransaction(db(), { lock: PROJECTION_WRITE_LOCK }, async (client, tx) => {
      // Only the leader writes: a process that lost its leading session (however it went)
      // learns it here, before writing anything, and stands by.
      const result = (await leadership.stillHeld(client)) ? await fn(client) : undefined;
      if (result === undefined) tx.rollbackOnReturn();
      return result;
    });
  }

  /**
   * The main lane: one batch of the outbox in (txid, seq) order, projected and checkpointed in
   * one transaction, whatever the rows (bulk or not). Rows of the interactive lane already
   * projected (not bulk, at or before its position) are passed over: each was projected after
   * its commit, from the listing's state then, and any later change has a row of its own.
   * Returns rows read.
   */
  async function projectOutboxBatch(): Promise<number> {
    // With traces on, the batch's span (batch-tracing.ts), ended once the transaction is over.
    let traced: { batch: BatchTrace | undefined; rows: readonly OutboxRow[] } | undefined;
    try {
      const n = await inWriteTransaction(async (client) => {
        const from = await readCheckpoint(client, 'projection');
        const rows = await readCommittedOutbox(client, from, bulkBatchSize);
        if (rows.length === 0) return undefined;
        const done = interactive;
        const pending = done ? rows.filter((r) => r.bulk || comparePositions(r, done) > 0) : rows;
        if (pending.length > 0) {
          traced = { batch: beginBatch('main', pending), rows: pending };
          await projectRows(client, pending, traced.batch);
        }
        const last = rows[rows.length - 1]!;
        await writeCheckpoint(client, 'projection', last);
        // Without an external index, API processes feed their embedded engines from the projection.
        if (!searchIndex) await writeCheckpoint(client, 'search', last);
        return rows.length;
      });
      if (traced) endBatch(traced.batch, traced.rows, n === undefined ? { committed: false } : { committed: true });
      return n ?? 0;
    } catch (error) {
      if (traced) endBatch(traced.batch, traced.rows, { committed: false, error });
      throw error;
    }
  }

  async function projectRows(client: PoolClient, rows: readonly OutboxRow[], batch: BatchTrace | undefined): Promise<string[]> {
    const listingIds = [...new Set(rows.flatMap((r) => (r.listing_id ? [r.listing_id] : [])))];
    const categorySlugs = [...new Set(rows.flatMap((r) => (r.category_slug ? [r.category_slug] : [])))];
    const oldestChangeAt = rows.reduce((oldest, r) => (r.created_at < oldest ? r.created_at : oldest), rows[0]!.created_at);
    const { version } = await projectListings(client, { listingIds, categorySlugs, siteUrl, today: utcDate(now()), log, oldestChangeAt, traceparent: batch?.traceparent });
    batchVersion(batch, version);
    return listingIds;
  }

  /**
   * The interactive lane: one batch of the outbox rows that are not bulk, after its position
   * (and the main checkpoint), below a horizon that a running import does not hold back;
   * projected in one transaction. Moves only the lane's own position: the main lane passes over
   * these rows later. With an external index, the listings are sent to it at once too.
   * Returns rows read.
   */
  async function projectInteractiveBatch(): Promise<number> {
    let traced: { batch: BatchTrace | undefined; rows: readonly OutboxRow[] } | undefined;
    let result;
    try {
      result = await inWriteTransaction(async (client) => {
        const main = await readCheckpoint(client, 'projection');
        const from = interactive && comparePositions(interactive, main) > 0 ? interactive : main;
        const rows = await readInteractiveOutbox(client, from, batchSize);
        if (rows.length === 0) return undefined;
        traced = { batch: beginBatch('interactive', rows), rows };
        const ids = await projectRows(client, rows, traced.batch);
        return { rows: rows.length, last: rows[rows.length - 1]!, ids };
      });
    } catch (error) {
      if (traced) endBatch(traced.batch, traced.rows, { committed: false, error });
      throw error;
    }
    if (traced) endBatch(traced.batch, traced.rows, result ? { committed: true } : { committed: false });
    if (!result) return 0;
    interactive = result.last;
    if (searchIndex && result.ids.length > 0) await syncSearchListings(db(), searchIndex, result.ids);
    return result.rows;
  }

  /** Runs the interactive lane until it has nothing more. */
  async function drainInteractive(): Promise<void> {
    while (!stopping && leadership.isLeader && (await projectInteractiveBatch()) >= batchSize);
  }

  /** Re-projects products whose shown promo lapsed. Returns how many. */
  async function lapsePromos(): Promise<number> {
    const today = utcDate(now());
    const n = await inWriteTransaction(async (client) => {
      const ids = await lapsedPromoIds(client, today, batchSize);
      if (ids.length === 0) return undefined;
      await projectListings(client, { listingIds: ids, categorySlugs: [], siteUrl, today, log });
      return ids.length;
    });
    if (n) log.info({ listings: n, today }, 'projected again the listings whose promo lapsed');
    return n ?? 0;
  }

  /** The documents carry urls built on SITE_URL: when it changed, rebuild them all. */
  async function checkSiteUrl(): Promise<void> {
    const { rows } = await db().query<{ site_url: string | null }>('SELECT site_url FROM projection.state');
    const recorded = rows[0]?.site_url ?? null;
    if (opts.keepRecordedSiteUrl && recorded !== null) siteUrl = recorded;
    if (recorded !== siteUrl) {
      log.info({ from: recorded, to: siteUrl }, 'site url differs from the one the projection was built with; rebuilding the projection');
      const summary = await rebuildProjection({ pool: db(), siteUrl, externalSearch: searchIndex !== undefined, batchSize, now, log });
      log.info(summary, 'projection rebuilt');
    }
    await checkSearchTarget();
    siteChecked = true;
  }

  /**
   * The search checkpoint only means something for the index it was recorded with: an external
   * index it does not describe (first switch to Meilisearch, another index or server) is filled
   * from the projection first. Without an external index the record is cleared.
   */
  async function checkSearchTarget(): Promise<void> {
    const { rows } = await db().query<{ target: string | null }>(`SELECT target FROM projection.checkpoints WHERE name = 'search'`);
    const recorded = rows[0]?.target ?? null;
    if (!searchIndex) {
      if (recorded !== null) await db().query(`UPDATE projection.checkpoints SET target = NULL WHERE name = 'search'`);
      return;
    }
    if (recorded === searchIndex.target) return;
    log.info({ from: recorded, to: searchIndex.target }, 'the search index is not the one the search checkpoint describes; filling it from the projection');
    const documents = await rebuildSearchIndex(db(), searchIndex, { batchSize });
    log.info({ documents }, 'search index filled');
  }

  /**
   * Committed rows that sort after a transaction still running (a writer, or a server task such
   * as autovacuum's ANALYZE, or any transaction that writes no listing, neither of which sends a
   * NOTIFY) wait for it to end. Look again shortly, backing off to every 100 ms at most, rather
   * than leave them for the next poll: under a steady stream of writes some transaction is nearly
   * always open, and a wait of up to a second showed as the slowest changes in `npm run chaos`.
   */
  function retrySoonIfHeldBack(held: boolean): void {
    if (!held) {
      heldBackDelay = 0;
      return;
    }
    heldBackDelay = Math.min(pollMs, HELD_BACK_MAX_MS, heldBackDelay ? heldBackDelay * 2 : 10);
    if (heldBackTimer || stopping) return;
    heldBackTimer = setTimeout(() => {
      heldBackTimer = undefined;
      wake();
    }, heldBackDelay);
  }

  /** Whether committed outbox rows wait after the main checkpoint (an open transaction holds them back). */
  async function rowsHeldBack(): Promise<boolean> {
    const { rows } = await db().query<{ held: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM projection.checkpoints c CROSS JOIN LATERAL (${firstOutboxRowAfterCheckpoint()}) later
                       WHERE c.name = 'projection') AS held`,
    );
    return rows[0]?.held === true;
  }

  async function housekeeping(): Promise<void> {
    const t = Date.now();
    // Pruning waits for the first poll after catching up: a process starting waits for nothing
    // it does not need.
    if (!catchingUp && t - lastPrune >= PRUNE_EVERY_MS) {
      lastPrune = t;
      const pruned = await inWriteTransaction(async (client) => {
        const n = await pruneRemoved(client, retentionHours);
        return n > 0 ? n : undefined;
      });
      if (pruned) log.info({ pruned }, 'pruned old removals from projection.removed');
      const outbox = await pruneOutbox(db(), retentionHours);
      if (outbox) log.info({ pruned: outbox }, 'pruned projected outbox rows');
      let changes = 0;
      for (let i = 0; i < CHANGE_PRUNE_BATCHES && !stopping && leadership.isLeader; i++) {
        const n = await inWriteTransaction(async (client) => {
          const pruned = await pruneChanges(client, changesRetentionHours);
          return pruned > 0 ? pruned : undefined;
        });
        if (!n) break;
        changes += n;
      }
      if (changes) log.info({ pruned: changes }, 'pruned changes older than the retention from the change feed');
    }
    if (t - lastBlockedCheck >= BLOCKED_CHECK_MS) {
      lastBlockedCheck = t;
      const blocker = await blockingTransaction(db(), BLOCKED_WARN_SECONDS);
      if (blocker) {
        log.warn(
          { pid: blocker.pid, ageSeconds: Math.round(blocker.ageSeconds), state: blocker.state, applicationName: blocker.applicationName, database: blocker.database },
          `an open transaction (pid ${blocker.pid}, ${Math.round(blocker.ageSeconds)} s old) holds the projector back: changes committed after it started are not projected until it ends`,
        );
      }
    }
  }

  async function pumpOnce(): Promise<void> {
    if (!siteChecked) await checkSiteUrl();
    let projected = 0;
    // The main lane first, as long as nothing holds it back. Between two batches of a backlog
    // (an import), whatever makers and reviewers committed meanwhile goes first; and when rows
    // wait behind an open transaction (an import still running), the interactive lane takes
    // those it may. Otherwise the main lane alone has projected everything.
    for (;;) {
      if (stopping || !leadership.isLeader) return;
      const n = await projectOutboxBatch();
      projected += n;
      if (n < bulkBatchSize) break;
      await drainInteractive();
    }
    if (stopping || !leadership.isLeader) return;
    const held = await rowsHeldBack();
    if (held) await drainInteractive();
    if (stopping || !leadership.isLeader) return;
    retrySoonIfHeldBack(held);
    while (!stopping && leadership.isLeader && (await lapsePromos()) >= batchSize);
    if (searchIndex) {
      for (;;) {
        if (stopping || !leadership.isLeader) return;
        const n = await syncSearchBatch(db(), searchIndex, batchSize);
        if (n < batchSize) break;
      }
    }
    if (projected >= bulkBatchSize) log.info({ outboxRows: projected }, 'projected a backlog of outbox rows');
    if (stopping || !leadership.isLeader) return;
    await housekeeping();
    if (!stopping && leadership.isLeader) snapshots.maybeWrite();
  }

  /** The pump, coalescing wake-ups: at most one run and one queued, only while leading. */
  const pumper = createCoalescedRunner(pumpOnce, () => leadership.isLeader && !stopping);
  const pump = () => pumper.run();

  function wake(): void {
    if (stopping || !leadership.isLeader) return;
    pump().catch((err: unknown) => log.error({ err }, 'projector batch failed; retrying on the next poll'));
  }

  async function tryLead(): Promise<void> {
    if (acquiring || stopping || leadership.isLeader) return;
    acquiring = true;
    try {
      if (await leadership.tryAcquire()) {
        log.info({ pid: process.pid }, 'projector is leading');
        wake();
      }
    } catch (err) {
      log.warn({ err }, 'projector could not reach the database for leadership; retrying');
    } finally {
      acquiring = false;
    }
  }

  let ticks = 0;
  function tick(): void {
    if (stopping) return;
    if (!leadership.isLeader) {
      void tryLead();
      return;
    }
    if (++ticks % Math.max(1, Math.round(VERIFY_LEADERSHIP_MS / pollMs)) === 0) void leadership.verify();
    wake();
  }

  function scheduleMidnight(): void {
    midnightTimer = setTimeout(() => {
      wake();
      scheduleMidnight();
    }, msUntilNextUtcMidnight(now()));
    midnightTimer.unref();
  }

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** Projects what was committed before it was called (every change the outbox held then). */
  async function catchUpTo(): Promise<void> {
    const { rows } = await db().query<{ horizon: string }>(`SELECT ${OUTBOX_HORIZON}::text AS horizon`);
    const target = rows[0]!.horizon;
    for (;;) {
      if (stopping) throw new Error('projector stopped');
      // A run under way (the one leading began) is waited for rather than followed by another:
      // what it left behind, the check below finds.
      if (leadership.isLeader) await (pumper.current ?? pump());
      const { rows: pending } = await db().query<{ behind: boolean }>(
        `SELECT EXISTS (
           SELECT 1 FROM projection.checkpoints c CROSS JOIN LATERAL (${firstOutboxRowAfterCheckpoint('o.txid < $1::xid8')}) later
            WHERE c.name = ANY($2::text[])
         ) OR EXISTS (SELECT 1 FROM projection.products WHERE promo_expires_at < $3::date)
           OR (SELECT site_url FROM projection.state) IS DISTINCT FROM $4 AS behind`,
        [target, searchIndex ? ['projection', 'search'] : ['projection'], utcDate(now()), siteUrl],
      );
      if (!pending[0]?.behind) return;
      await sleep(leadership.isLeader ? 10 : 50);
    }
  }

  return {
    get isLeader() {
      return leadership.isLeader;
    },
    get leaderSessionPid() {
      return leadership.sessionPid;
    },
    async start() {
      pool = createPool(opts.connectionString, { max: 4, applicationName: 'catalog-projector' });
      // Both connections are made at once; a change committed before the listener hears is
      // found by the first run anyway (it reads the outbox from the checkpoint).
      await Promise.all([listener.start(), tryLead()]);
      if (!leadership.isLeader) log.info({ pid: process.pid }, 'another projector is leading; standing by');
      pollTimer = setInterval(tick, pollMs);
      scheduleMidnight();
    },
    async stop() {
      stopping = true;
      if (pollTimer) clearInterval(pollTimer);
      if (midnightTimer) clearTimeout(midnightTimer);
      if (heldBackTimer) clearTimeout(heldBackTimer);
      await listener.close();
      await pumper.current?.catch(() => undefined);
      await snapshots.settle();
      await leadership.release();
      await pool?.end();
      pool = undefined;
    },
    async ensureSnapshot() {
      if (leadership.isLeader) await snapshots.ensure();
    },
    async catchUp() {
      catchingUp = true;
      try {
        await catchUpTo();
      } finally {
        catchingUp = false;
      }
    },
  };
}

export { projectionLag, type ProjectionLag } from './lag.ts';
