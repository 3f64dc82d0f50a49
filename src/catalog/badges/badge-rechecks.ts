import type { Mailer } from '../../auth/mailer.ts';
import type { Pool } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import { badgeCheck } from '../../sites/inspect-site.ts';
import type { SiteFetcher } from '../../sites/safe-fetch.ts';
import type { ListingStatus, Plan } from '../listings/listing-rules.ts';
import type { ListingUrls } from '../listings/listing-urls.ts';
import { decisionMail } from '../review/review-mails.ts';
import { BADGE_MISSING_FEEDBACK, decideBadgeRecheck, nextBadgeCheckAt, type BadgeRecheckOutcome } from '../review/review-rules.ts';

/**
 * One pass of the scheduled badge re-check: every live free listing whose verified badge is due
 * (badge_next_check_at reached) is looked at through the safe site fetcher, a few at a time,
 * and the outcome applied under the rules of review-rules.ts, each listing in a short
 * transaction of its own. The site is fetched outside any transaction; a listing changed in the
 * meantime (Verify pressed, an admin's decision, a new plan) is left as it now is.
 *
 * Hiding for a missing badge records a 'badge_hide' decision (by the directory itself, decided_by
 * null), puts the reason in the maker's feedback and e-mails the maker. Verify brings the listing
 * back (badges.ts).
 */
export interface BadgeRecheckDeps {
  readonly pool: Pool;
  readonly fetcher: SiteFetcher;
  readonly urls: ListingUrls;
  readonly mailer: Mailer;
  readonly onMailError?: (err: unknown) => void;
  /** Told of a listing whose check failed for a reason other than the site (a bug, the database). */
  readonly onError?: (err: unknown, slug: string) => void;
  readonly now: () => Date;
  /** Time between two checks of one badge (a day), and how far either way each is moved at random. */
  readonly intervalMs: number;
  readonly jitterMs: number;
  readonly random: () => number;
  /** Sites fetched at once. */
  readonly concurrency: number;
}

export interface RecheckSummary {
  checked: number;
  found: number;
  missing: number;
  inconclusive: number;
  hidden: number;
  /** Listings whose check or update failed; they are looked at again on the next pass. */
  failed: number;
}

interface Due {
  id: string;
  slug: string;
  website: string;
  badge_next_check_at: Date | null;
}

/** Checks up to `limit` due badges. */
export async function recheckDueBadges(deps: BadgeRecheckDeps, limit: number): Promise<RecheckSummary> {
  const summary: RecheckSummary = { checked: 0, found: 0, missing: 0, inconclusive: 0, hidden: 0, failed: 0 };
  const { rows } = await deps.pool.query<Due>(
    `SELECT id, slug, website, badge_next_check_at FROM catalog.listings
      WHERE badge_status = 'verified' AND status = 'live' AND plan = 'free'
        AND COALESCE(badge_next_check_at, '-infinity') <= $1
      ORDER BY badge_next_check_at NULLS FIRST, id
      LIMIT $2`,
    [deps.now(), limit],
  );
  await forEachAtMost(rows, deps.concurrency, async (due) => {
    try {
      const check = await badgeCheck(due.website, `${deps.urls.siteUrl}/products/${due.slug}`, deps.fetcher);
      const applied = await applyRecheck(deps, due, check.status);
      summary.checked++;
      summary[check.status]++;
      if (applied === 'hidden') summary.hidden++;
    } catch (err) {
      summary.failed++;
      deps.onError?.(err, due.slug);
    }
  });
  return summary;
}

async function applyRecheck(deps: BadgeRecheckDeps, due: Due, outcome: BadgeRecheckOutcome): Promise<'hidden' | 'updated' | 'skipped'> {
  const result = await withTransaction(deps.pool, async (client) => {
    const { rows } = await client.query<{ status: ListingStatus; plan: Plan; badge_status: string; badge_misses: number; badge_next_check_at: Date | null; name: string; maker_email: string | null }>(
      `SELECT l.status::text AS status, l.plan::text AS plan, l.badge_status, l.badge_misses, l.badge_next_check_at, l.name, m.email AS maker_email
         FROM catalog.listings l LEFT JOIN catalog.makers m ON m.id = l.maker_id
        WHERE l.id = $1 FOR UPDATE OF l`,
      [due.id],
    );
    const row = rows[0];
    // Rescheduled since it was picked (Verify pressed meanwhile): this outcome is stale.
    if (!row || row.badge_next_check_at?.getTime() !== due.badge_next_check_at?.getTime()) return undefined;
    const now = deps.now();
    const decision = decideBadgeRecheck(
      { status: row.status, plan: row.plan, badgeVerified: row.badge_status === 'verified', misses: row.badge_misses },
      outcome,
      now,
      nextBadgeCheckAt(now, deps.intervalMs, deps.jitterMs, deps.random),
    );
    if (!decision.apply) return undefined;
    if (!decision.hide) {
      await client.query(
        `UPDATE catalog.listings SET badge_misses = $2, badge_checked_at = COALESCE($3, badge_checked_at), badge_next_check_at = $4 WHERE id = $1`,
        [due.id, decision.misses, decision.checkedAt, decision.nextCheckAt],
      );
      return { hidden: false as const, row };
    }
    await client.query(
      `UPDATE catalog.listings
          SET status = 'hidden', hidden_reason = 'badge_missing', badge_status = 'none', badge_misses = $2, badge_checked_at = $3,
              badge_next_check_at = NULL, review_feedback = $4, updated_at = $3
        WHERE id = $1`,
      [due.id, decision.misses, now, BADGE_MISSING_FEEDBACK],
    );
    await client.query(
      `INSERT INTO catalog.review_decisions (listing_id, decided_by, action, from_status, to_status, feedback, created_at)
       VALUES ($1, NULL, 'badge_hide', 'live', 'hidden', $2, $3)`,
      [due.id, BADGE_MISSING_FEEDBACK, now],
    );
    return { hidden: true as const, row };
  });
  if (!result) return 'skipped';
  if (!result.hidden) return 'updated';
  if (result.row.maker_email) {
    const mail = decisionMail('badge_hide', { to: result.row.maker_email, listing: { slug: due.slug, name: result.row.name }, feedback: null, urls: deps.urls });
    await deps.mailer.send(mail).catch((err: unknown) => deps.onMailError?.(err));
  }
  return 'hidden';
}

/** Runs fn over items with at most `limit` calls under way at once. */
async function forEachAtMost<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
