import type { Queryable } from './listing-source.ts';

/**
 * A promo is public through the last day of its expires_at (UTC). Nothing is written when that
 * day ends, so the projector looks for projected products whose shown promo has lapsed (an
 * indexed range on projection.products.promo_expires_at, empty almost always) and projects them
 * again, which drops the promo.
 */
export async function lapsedPromoIds(db: Queryable, todayUtc: string, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM projection.products WHERE promo_expires_at < $1::date ORDER BY promo_expires_at LIMIT $2',
    [todayUtc, limit],
  );
  return rows.map((r) => r.id);
}

/** Milliseconds from now to the next UTC midnight, plus a second so the date has turned. */
export function msUntilNextUtcMidnight(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return next - now.getTime() + 1000;
}
