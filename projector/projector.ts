import { createLeadership } from '../src/db/leadership.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import type { SearchIndex } from '../src/search/port.ts';
import { createCoalescedRunner } from '../src/util/coalesced-runner.ts';
import { silentLog, type Log } from '../src/util/log.ts';
import { catchUpTo } from './catch-up.ts';
import { HeldBackRetry } from './held-back-retry.ts';
import { Housekeeping } from './housekeeping.ts';
import { ProjectionLanes } from './lanes.ts';
import { LeaderPoll } from './leader-poll.ts';
import { createOutboxListener } from './listener.ts';
import { utcDate } from './product-document.ts';
import { ProjectionOrigin } from './projection-origin.ts';
import { createProjectionWrite } from './projection-write.ts';
import { lapsePromos, wakeAtUtcMidnights } from './promo-lapse.ts';
import { syncSearchIndex } from './search-sync.ts';
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
  log?: Log;
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

const DEFAULT_CHANGES_RETENTION_HOURS = 7 * 24;

/**
 * A projector process's parts, put together: leadership (leader-poll.ts; only the leader runs),
 * the pump run on every wake-up (the outbox's NOTIFY, the poll, a held-back retry, midnight),
 * which checks what the projection was built for (projection-origin.ts), runs both lanes
 * (lanes.ts), lapses promos (promo-lapse.ts), feeds an external index (search-sync.ts), keeps
 * house (housekeeping.ts) and has snapshots written (snapshots.ts). Every transaction of theirs
 * that writes projection.* is a ProjectionWrite (projection-write.ts).
 */
export function createProjector(opts: ProjectorOptions): Projector {
  const log = opts.log ?? silentLog;
  const batchSize = opts.batchSize ?? 500;
  const bulkBatchSize = opts.bulkBatchSize ?? Math.max(batchSize, 1000);
  const pollMs = opts.pollMs ?? 1000;
  const now = opts.now ?? (() => new Date());
  const searchIndex = opts.searchIndex;

  let pool: Pool | undefined;
  let stopping = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let midnight: { stop(): void } | undefined;
  let catchingUp = false;

  function db(): Pool {
    if (!pool) throw new Error('projector is not started');
    return pool;
  }

  const leadership = createLeadership(opts.connectionString, {
    log,
    // What this process kept in memory as leader; the next leader (this one again, or another)
    // starts from the database.
    onLost: () => {
      origin.forget();
      lanes.forget();
    },
  });
  const active = () => !stopping && leadership.isLeader;
  const write = createProjectionWrite(db, leadership);
  const origin = new ProjectionOrigin({ pool: db, siteUrl: opts.siteUrl, keepRecordedSiteUrl: opts.keepRecordedSiteUrl ?? false, searchIndex, batchSize, now, log });
  const lanes = new ProjectionLanes({ pool: db, write, siteUrl: () => origin.siteUrl, now, log, batchSize, bulkBatchSize, searchIndex, active });
  const housekeeping = new Housekeeping({
    pool: db,
    write,
    log,
    retentionHours: opts.removedRetentionHours ?? 24,
    changesRetentionHours: opts.changesRetentionHours ?? DEFAULT_CHANGES_RETENTION_HOURS,
    active,
  });
  const heldBack = new HeldBackRetry(pollMs, () => wake(), () => stopping);
  const leaderPoll = new LeaderPoll(leadership, { pollMs, log, stopping: () => stopping, wake: () => wake() });
  const listener = createOutboxListener(opts.connectionString, { onWake: () => wake(), log });
  const snapshots = createSnapshotWriter({ pool: db, connectionString: opts.connectionString, search: !searchIndex, cacheDir: opts.snapshotCacheDir, log });

  async function pumpOnce(): Promise<void> {
    if (!origin.checked) await origin.check();
    const turn = await lanes.run();
    if (!turn) return;
    heldBack.note(turn.heldBack);
    while (active() && (await lapsePromos(write, { today: utcDate(now()), limit: batchSize, siteUrl: origin.siteUrl, log })) >= batchSize);
    if (searchIndex && !(await syncSearchIndex(db, searchIndex, batchSize, active))) return;
    if (turn.projected >= bulkBatchSize) log.info({ outboxRows: turn.projected }, 'projected a backlog of outbox rows');
    if (!active()) return;
    await housekeeping.run(catchingUp);
    if (active()) snapshots.maybeWrite();
  }

  /** The pump, coalescing wake-ups: at most one run and one queued, only while leading. */
  const pumper = createCoalescedRunner(pumpOnce, active);
  const pump = () => pumper.run();

  function wake(): void {
    if (!active()) return;
    pump().catch((err: unknown) => log.error({ err }, 'projector batch failed; retrying on the next poll'));
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
      await Promise.all([listener.start(), leaderPoll.tryLead()]);
      if (!leadership.isLeader) log.info({ pid: process.pid }, 'another projector is leading; standing by');
      pollTimer = setInterval(() => leaderPoll.tick(), pollMs);
      midnight = wakeAtUtcMidnights(now, wake);
    },
    async stop() {
      stopping = true;
      if (pollTimer) clearInterval(pollTimer);
      midnight?.stop();
      heldBack.stop();
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
        await catchUpTo({
          pool: db,
          isLeader: () => leadership.isLeader,
          stopping: () => stopping,
          pump: () => pumper.current ?? pump(),
          external: searchIndex !== undefined,
          siteUrl: () => origin.siteUrl,
          now,
        });
      } finally {
        catchingUp = false;
      }
    },
  };
}

export { projectionLag,  } from './lag.ts';
