import type { Pool } from '../src/db/pool.ts';
import { firstOutboxRowAfterCheckpoint, OUTBOX_HORIZON } from './outbox-reader.ts';
import { utcDate } from './product-document.ts';

export interface CatchUpOptions {
  pool: () => Pool;
  isLeader: () => boolean;
  stopping: () => boolean;
  /** The run of the projector under way, or a new one when none is. */
  pump: () => Promise<void>;
  /** Whether an external search index is fed (its checkpoint must get there too). */
  external: boolean;
  /** The site url the projection must be built on. */
  siteUrl: () => string;
  now: () => Date;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Resolves once everything committed before the call (every change the outbox held then, below
 * its horizon) is projected, and fed to the external index when there is one; no shown promo has
 * lapsed; and the projection is built on the site url. A leader runs the projector to get there
 * (a run under way is waited for rather than followed by another: what it left behind, the
 * check finds); a standby waits for the leader. Rejects when the projector stops.
 */
export async function catchUpTo(opts: CatchUpOptions): Promise<void> {
  const { rows } = await opts.pool().query<{ horizon: string }>(`SELECT ${OUTBOX_HORIZON}::text AS horizon`);
  const target = rows[0]!.horizon;
  for (;;) {
    if (opts.stopping()) throw new Error('projector stopped');
    if (opts.isLeader()) await opts.pump();
    const { rows: pending } = await opts.pool().query<{ behind: boolean }>(
      `SELECT EXISTS (
         SELECT 1 FROM projection.checkpoints c CROSS JOIN LATERAL (${firstOutboxRowAfterCheckpoint('o.txid < $1::xid8')}) later
          WHERE c.name = ANY($2::text[])
       ) OR EXISTS (SELECT 1 FROM projection.products WHERE promo_expires_at < $3::date)
         OR (SELECT site_url FROM projection.state) IS DISTINCT FROM $4 AS behind`,
      [target, opts.external ? ['projection', 'search'] : ['projection'], utcDate(opts.now()), opts.siteUrl()],
    );
    if (!pending[0]?.behind) return;
    await sleep(opts.isLeader() ? 10 : 50);
  }
}
