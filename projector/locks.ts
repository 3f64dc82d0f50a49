/**
 * Advisory lock keys of the projection. The migration runner uses 7430001; these sit next to it.
 */

/**
 * Held (transaction-level) by every transaction that writes projection.* : a projector batch, a
 * promo lapse, a reindex. Batches and rebuilds therefore apply one after another, each reading
 * the checkpoint the previous one left, whatever the number of processes.
 */
export const PROJECTION_WRITE_LOCK = 7_430_010;

/** Held (session-level) by the active projector; a second projector waits as standby. */
export const PROJECTOR_LEADER_LOCK = 7_430_011;

/**
 * Held (transaction-level) while the external search index is fed and its checkpoint moved, so
 * a reindex swapping the whole index and the projector's catch-up never interleave.
 */
export const SEARCH_WRITE_LOCK = 7_430_012;

/** Held (session-level) by the process running the scheduled badge re-checks; others stand by. */
export const BADGE_RECHECK_LEADER_LOCK = 7_430_013;
