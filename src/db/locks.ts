/**
 * Every PostgreSQL advisory lock the service takes, in one place, so no two uses ever share a key.
 * Single-key locks are bigints; two-key locks are (class, 32-bit key) pairs, a class per use.
 * Two more are keyed by hashtext() of a name, each in its own transaction only: the base of a
 * new slug (src/catalog/listings/slugs.ts) and the makers' draft limits
 * (src/catalog/submissions/drafts.ts).
 */

/** Held (session-level) while migrating, so two processes starting at once apply each file once. */
export const MIGRATION_LOCK = 7_430_001;

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

/**
 * Held (transaction-level, shared) by a bulk transaction (an import) from before its first write
 * to its end, with the setting catalog.bulk on (migration 013). The projector's interactive lane
 * leaves the holders out of its horizon: what they write is bulk, projected by the main lane.
 */
export const BULK_WRITE_LOCK = 7_430_014;

/**
 * The class of refresh tokens' locks (two-key form: this class, then 32 bits of the token's
 * hash), held while a refresh is exchanged (src/auth/refresh-replay.ts). Two different tokens
 * sharing those bits only wait for each other briefly.
 */
export const REFRESH_LOCK_CLASS = 7_430_020;

/**
 * The class of websites' locks (two-key form: this class, then hashtext of the website identity),
 * held (transaction-level) by everything that gives a listing a website, so two requests for one
 * site at once, in any processes, never give it to two listings (src/catalog/listings/site-check.ts).
 */
export const WEBSITE_LOCK_CLASS = 7_430_030;
