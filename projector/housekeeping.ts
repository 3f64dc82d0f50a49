import type { Pool } from '../src/db/pool.ts';
import type { Log } from '../src/util/log.ts';
import { pruneChanges } from './change-log.ts';
import { blockingTransaction } from './lag.ts';
import type { ProjectionWrite } from './projection-write.ts';
import { pruneOutbox, pruneRemoved } from './prune.ts';

/** How often the leader prunes what it no longer needs. */
export const PRUNE_EVERY_MS = 10 * 60_000;
/** Batches of the change log pruned in one round, each its own short transaction. */
export const CHANGE_PRUNE_BATCHES = 20;
/** How often the leader looks for an open transaction holding it back. */
const BLOCKED_CHECK_MS = 5_000;
/** How long an open transaction may hold the projector back before a warning names it. */
const BLOCKED_WARN_SECONDS = 5;

/**
 * Whether a round of pruning is due: every PRUNE_EVERY_MS, but never while catchUp is waited
 * for (a process starting waits for nothing it does not need; the first poll after prunes).
 */
export function pruningDue(nowMs: number, lastPruneMs: number, catchingUp: boolean): boolean {
  return !catchingUp && nowMs - lastPruneMs >= PRUNE_EVERY_MS;
}

/**
 * Prunes in short transactions one after another: up to `batches` of them, stopping at the first
 * that finds nothing (undefined or 0) or once `go` says no more. Returns how many rows went.
 */
export async function pruneInBatches(pruneOne: () => Promise<number | undefined>, batches: number, go: () => boolean): Promise<number> {
  let pruned = 0;
  for (let i = 0; i < batches && go(); i++) {
    const n = await pruneOne();
    if (!n) break;
    pruned += n;
  }
  return pruned;
}

export interface HousekeepingOptions {
  pool: () => Pool;
  write: ProjectionWrite;
  log: Log;
  /** Removals (projection.removed) and projected outbox rows are kept this long. */
  retentionHours: number;
  /** The change feed keeps changes this long. */
  changesRetentionHours: number;
  /** Whether to go on: this process leads and is not stopping. */
  active: () => boolean;
}

/**
 * The leader's housekeeping after a turn of the pump: pruning (removals, under
 * PROJECTION_WRITE_LOCK; the outbox rows both checkpoints passed; the change log past its
 * retention, in batches) when due, and a warning naming an open transaction that has held the
 * projector back for more than 5 s.
 */
export class Housekeeping {
  private lastPrune = 0;
  private lastBlockedCheck = 0;

  constructor(private readonly opts: HousekeepingOptions) {}

  async run(catchingUp: boolean): Promise<void> {
    const t = Date.now();
    if (pruningDue(t, this.lastPrune, catchingUp)) {
      this.lastPrune = t;
      await this.prune();
    }
    if (t - this.lastBlockedCheck >= BLOCKED_CHECK_MS) {
      this.lastBlockedCheck = t;
      await this.warnIfHeldBack();
    }
  }

  private async prune(): Promise<void> {
    const { write, log, retentionHours, changesRetentionHours } = this.opts;
    const pruned = await write(async (client) => {
      const n = await pruneRemoved(client, retentionHours);
      return n > 0 ? n : undefined;
    });
    if (pruned) log.info({ pruned }, 'pruned old removals from projection.removed');
    const outbox = await pruneOutbox(this.opts.pool(), retentionHours);
    if (outbox) log.info({ pruned: outbox }, 'pruned projected outbox rows');
    const changes = await pruneInBatches(
      () =>
        write(async (client) => {
          const n = await pruneChanges(client, changesRetentionHours);
          return n > 0 ? n : undefined;
        }),
      CHANGE_PRUNE_BATCHES,
      this.opts.active,
    );
    if (changes) log.info({ pruned: changes }, 'pruned changes older than the retention from the change feed');
  }

  private async warnIfHeldBack(): Promise<void> {
    const blocker = await blockingTransaction(this.opts.pool(), BLOCKED_WARN_SECONDS);
    if (blocker) {
      this.opts.log.warn(
        { pid: blocker.pid, ageSeconds: Math.round(blocker.ageSeconds), state: blocker.state, applicationName: blocker.applicationName, database: blocker.database },
        `an open transaction (pid ${blocker.pid}, ${Math.round(blocker.ageSeconds)} s old) holds the projector back: changes committed after it started are not projected until it ends`,
      );
    }
  }
}
