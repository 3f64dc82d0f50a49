import { createLeadership } from '../../db/leadership.ts';
import { BADGE_RECHECK_LEADER_LOCK } from '../../db/locks.ts';
import type { Log } from '../../util/log.ts';
import type { Mailer } from '../../auth/mailer.ts';
import type { Pool } from '../../db/pool.ts';
import type { SiteFetcher } from '../../sites/safe-fetch.ts';
import { recheckDueBadges, type RecheckSummary } from './badge-rechecks.ts';
import type { ListingUrls } from '../listings/listing-urls.ts';
import { BADGE_RECHECK_SCHEDULE } from '../review/review-rules.ts';

/**
 * The scheduled badge re-check (badge-rechecks.ts), run by `catalog serve` and `catalog
 * projector`. One process per database does the work: the one holding a session-level advisory
 * lock, like the projector's leader; the others stand by and try again on each poll, so one
 * takes over when the leader stops. The leader looks for due badges every poll (a minute) and
 * right after it starts; each badge is due a day after its last check, give or take the jitter.
 */
const BADGE_RECHECK_DEFAULTS = {
  ...BADGE_RECHECK_SCHEDULE,
  concurrency: 4,
  pollMs: 60_000,
  batchSize: 100,
} as const;

export interface BadgeRecheckJobOptions {
  readonly connectionString: string;
  readonly pool: Pool;
  readonly fetcher: SiteFetcher;
  readonly urls: ListingUrls;
  readonly mailer: Mailer;
  readonly log: Log;
  readonly intervalMs?: number;
  readonly jitterMs?: number;
  readonly concurrency?: number;
  readonly pollMs?: number;
  readonly batchSize?: number;
  /** The clock deciding what is due and when the next check is; tests move it. */
  readonly now?: () => Date;
  readonly random?: () => number;
}

export interface BadgeRecheckJob {
  /** Resolves once running, as leader or standby. */
  start(): Promise<void>;
  /** Finishes the pass under way, gives up leadership. */
  stop(): Promise<void>;
  /**
   * Runs a pass now (after the one under way) when this process leads, trying to lead first
   * when nobody does. Resolves to what it did, or undefined on a standby.
   */
  runOnce(): Promise<RecheckSummary | undefined>;
  readonly isLeader: boolean;
}

export type BadgeRecheckSettings = Pick<BadgeRecheckJobOptions, 'intervalMs' | 'jitterMs' | 'concurrency' | 'pollMs' | 'now' | 'random'>;

export function createBadgeRecheckJob(opts: BadgeRecheckJobOptions): BadgeRecheckJob {
  const d = BADGE_RECHECK_DEFAULTS;
  const settings = {
    intervalMs: opts.intervalMs ?? d.intervalMs,
    jitterMs: opts.jitterMs ?? d.jitterMs,
    concurrency: opts.concurrency ?? d.concurrency,
    pollMs: opts.pollMs ?? d.pollMs,
    batchSize: opts.batchSize ?? d.batchSize,
  };
  const now = opts.now ?? (() => new Date());
  const log = opts.log;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<unknown> = Promise.resolve();
  let running = 0;

  const leadership = createLeadership(opts.connectionString, {
    log,
    onLost: () => undefined,
    lock: BADGE_RECHECK_LEADER_LOCK,
    applicationName: 'catalog-badge-rechecks',
    role: 'badge re-check',
  });

  const deps = {
    pool: opts.pool,
    fetcher: opts.fetcher,
    urls: opts.urls,
    mailer: opts.mailer,
    now,
    intervalMs: settings.intervalMs,
    jitterMs: Math.min(settings.jitterMs, settings.intervalMs / 2),
    random: opts.random ?? Math.random,
    concurrency: settings.concurrency,
    onMailError: (err: unknown) => log.error({ err }, 'the "listing hidden" e-mail could not be sent'),
    onError: (err: unknown, slug: string) => log.error({ err, slug }, 'badge re-check failed; it is tried again on the next pass'),
  };

  /** Batches until nothing is due, stopping early when a batch made no progress at all. */
  async function pass(): Promise<RecheckSummary> {
    const total: RecheckSummary = { checked: 0, found: 0, missing: 0, inconclusive: 0, hidden: 0, failed: 0 };
    for (;;) {
      if (stopping || !leadership.isLeader) return total;
      const batch = await recheckDueBadges(deps, settings.batchSize);
      for (const key of Object.keys(total) as (keyof RecheckSummary)[]) total[key] += batch[key];
      const seen = batch.checked + batch.failed;
      if (seen < settings.batchSize || batch.failed === seen) break;
    }
    if (total.checked + total.failed > 0) log.info({ ...total }, 'badge re-check pass done');
    return total;
  }

  function queuePass(): Promise<RecheckSummary> {
    running++;
    const run = chain.then(pass).finally(() => running--);
    chain = run.catch(() => undefined);
    return run;
  }

  async function tryLead(): Promise<boolean> {
    if (stopping) return false;
    try {
      const was = leadership.isLeader;
      const leads = await leadership.tryAcquire();
      if (stopping) {
        await leadership.release();
        return false;
      }
      if (leads && !was) log.info({ pid: process.pid }, 'badge re-checks run in this process');
      return leads;
    } catch (err) {
      log.warn({ err }, 'badge re-check could not reach the database for leadership; retrying');
      return false;
    }
  }

  let ticking: Promise<void> | undefined;
  function tick(): void {
    if (stopping || ticking) return;
    ticking = (async () => {
      await leadership.verify();
      if (!(await tryLead()) || running > 0) return;
      await queuePass().catch((err: unknown) => log.error({ err }, 'badge re-check pass failed; retrying on the next poll'));
    })().finally(() => {
      ticking = undefined;
    });
  }

  return {
    get isLeader() {
      return leadership.isLeader;
    },
    async start() {
      // Lead (or stand by) now; the first pass, catching up on what fell due while no process
      // ran, goes on in the background.
      await tryLead();
      tick();
      timer = setInterval(tick, settings.pollMs);
      timer.unref();
    },
    async stop() {
      stopping = true;
      if (timer) clearInterval(timer);
      await ticking;
      await chain;
      await leadership.release();
    },
    async runOnce() {
      if (stopping || !(await tryLead())) return undefined;
      return queuePass();
    },
  };
}
