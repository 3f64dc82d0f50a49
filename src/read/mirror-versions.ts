/**
 * Which version a mirror applies next, and how: the rules over projection.state (read in the
 * same transaction as the rows, so they agree) and the mirror's own version.
 */

/** projection.state as a mirror reads it. */
export interface StateRow {
  version: number;
  oldest_version: number;
  change_position: number;
  change_log: string;
  committed_at: Date | null;
  oldest_change_at: Date | null;
  /** The W3C traceparent of the projector's batch that wrote this version, when it traced it. */
  traceparent: string | null;
}

/** projection.state of a database the projector never wrote. */
export const NO_STATE: StateRow = { version: 0, oldest_version: 0, change_position: 0, change_log: '', committed_at: null, oldest_change_at: null, traceparent: null };

/** Move to a newer snapshot once this many products changed since ours (and at least a fiftieth of the catalog). */
const RELOAD_MIN_CHANGES = 1000;
const RELOAD_SHARE = 50;
/** How often a mirror with many changes looks for a newer snapshot. */
const RELOAD_CHECK_MS = 10_000;

/**
 * Whether the mirror at `version` (-1: nothing loaded yet) must load the whole projection rather
 * than apply what changed since: it has loaded nothing; the removals since its version are no
 * longer kept (pruned up to oldest_version); or the projection is older than what it holds (a
 * database restored or rebuilt from scratch).
 */
export function mustLoadWhole(version: number, state: StateRow): boolean {
  return version < 0 || version < state.oldest_version || state.version < version;
}

/** Whether a snapshot of `snapshotVersion` can be loaded now: what changed since it is still known, and it is not ahead of the projection. */
export function snapshotUsable(snapshotVersion: number, state: StateRow): boolean {
  return snapshotVersion >= state.oldest_version && snapshotVersion <= state.version;
}

/**
 * Whether to look for a newer snapshot than ours: enough changed since it (RELOAD_MIN_CHANGES,
 * and a RELOAD_SHARE-th of its products) and the last look was RELOAD_CHECK_MS ago or more.
 */
export function newerSnapshotCheckDue(changesSinceSnapshot: number, snapshotProducts: number, msSinceLastCheck: number): boolean {
  return changesSinceSnapshot >= RELOAD_MIN_CHANGES && changesSinceSnapshot * RELOAD_SHARE >= snapshotProducts && msSinceLastCheck >= RELOAD_CHECK_MS;
}

/** Whether the projector's latest snapshot is one to move to: newer than ours, and usable now. */
export function newerSnapshotUsable(latest: { version: number } | undefined, ourVersion: number, state: StateRow): boolean {
  return latest !== undefined && latest.version > ourVersion && snapshotUsable(latest.version, state);
}

/**
 * The way of the latest version this process applied, in seconds: from the oldest write-model
 * change it carries being committed to the projector committing it (`projected`), and from then
 * to this process applying it (`applied`). Clocks: PostgreSQL's for the first, this host's for
 * the second's end (the same clock on one host; across hosts their offset adds in).
 */
export interface ChangeDelivery {
  projected: number;
  applied: number;
}

/** The way of a version applied at `nowMs` (this host's clock), when the projector recorded its times. */
export function deliveryOf(state: StateRow, nowMs: number): ChangeDelivery | undefined {
  if (!state.committed_at || !state.oldest_change_at) return undefined;
  const committed = state.committed_at.getTime();
  return { projected: Math.max(0, committed - state.oldest_change_at.getTime()) / 1000, applied: Math.max(0, nowMs - committed) / 1000 };
}
