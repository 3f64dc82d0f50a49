import type { Log } from '../src/util/log.ts';
import type { Queryable } from './listing-source.ts';
import { projectListings } from './project-listings.ts';
import type { ProjectionWrite } from './projection-write.ts';

/**
 * A promo is public through the last day of its expires_at (UTC). Nothing is written when that
 * day ends, so the projector looks for projected products whose shown promo has lapsed (an
 * indexed range on projection.products.promo_expires_at, empty almost always) and projects them
 * again, which drops the promo.
 */
async function lapsedPromoIds(db: Queryable, todayUtc: string, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM projection.products WHERE promo_expires_at < $1::date ORDER BY promo_expires_at LIMIT $2',
    [todayUtc, limit],
  );
  return rows.map((r) => r.id);
}

/**
 * Projects again, in one write transaction, up to `limit` products whose shown promo lapsed
 * before `today` (a UTC date). Returns how many; fewer than `limit` means none is left.
 */
export async function lapsePromos(write: ProjectionWrite, opts: { today: string; limit: number; siteUrl: string; log: Log }): Promise<number> {
  const { today, siteUrl, log } = opts;
  const n = await write(async (client) => {
    const ids = await lapsedPromoIds(client, today, opts.limit);
    if (ids.length === 0) return undefined;
    await projectListings(client, { listingIds: ids, categorySlugs: [], siteUrl, today, log });
    return ids.length;
  });
  if (n) log.info({ listings: n, today }, 'projected again the listings whose promo lapsed');
  return n ?? 0;
}

/** Milliseconds from now to the next UTC midnight, plus a second so the date has turned. */
export function msUntilNextUtcMidnight(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return next - now.getTime() + 1000;
}

/**
 * Calls `wake` just after every UTC midnight by the clock `now`, when shown promos lapse. The
 * timer never keeps the process up.
 */
export function wakeAtUtcMidnights(now: () => Date, wake: () => void): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => {
      wake();
      arm();
    }, msUntilNextUtcMidnight(now()));
    timer.unref();
  };
  arm();
  return {
    stop() {
      clearTimeout(timer);
    },
  };
}
