import { conflict } from '../../contract/errors.ts';
import type { Pool } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import { badgeCheck, badgeMarkup, type BadgeCheck } from '../../sites/inspect-site.ts';
import type { SiteFetcher } from '../../sites/safe-fetch.ts';
import { DIRECTORY_NAME } from '../directory-name.ts';
import { BADGE_RECHECK_SCHEDULE, nextBadgeCheckAt } from '../review/review-rules.ts';
import { getMakerListing, type MakerListing } from '../listings/maker-listings.ts';
import type { ListingUrls } from '../listings/listing-urls.ts';

/**
 * The directory badge: a free listing's maker puts a link to the listing (with the badge image
 * this service serves) on their site; once Verify finds it, the listing page's link to the
 * maker's site is followed, and a listing hidden for a missing badge comes back.
 *
 * check_badge only looks (it records nothing); Verify on the edit page records what it finds.
 */
export const BADGE_PATH = '/badge';

function badgeImageUrl(publicUrl: string, slug: string): string {
  return `${publicUrl}${BADGE_PATH}/${slug}.svg`;
}

export interface BadgeAnswer {
  readonly check: BadgeCheck;
  readonly listing: MakerListing;
  /** The exact HTML to put on the site. */
  readonly markup: string;
  readonly badgeImageUrl: string;
}

export interface BadgeDeps {
  pool: Pool;
  fetcher: SiteFetcher;
  urls: ListingUrls;
  now?: () => Date;
}

/** The badge markup for one listing, and the image it shows. */
export function markupFor(urls: ListingUrls, listing: MakerListing): { markup: string; badgeImageUrl: string } {
  const image = badgeImageUrl(urls.publicUrl, listing.slug);
  return { markup: badgeMarkup({ listingUrl: listing.url, badgeImageUrl: image, name: DIRECTORY_NAME }), badgeImageUrl: image };
}

/** Looks now for the badge on the site of one of the maker's free listings. Records nothing. */
export async function checkBadge(deps: BadgeDeps, makerId: string, slug: string): Promise<BadgeAnswer> {
  const listing = await getMakerListing(deps.pool, deps.urls, makerId, slug);
  if (listing.plan === 'premium') throw conflict('This listing is on the premium plan: its link to your site is followed without a badge.');
  const check = await badgeCheck(listing.website, listing.url, deps.fetcher);
  return { check, listing, ...markupFor(deps.urls, listing) };
}

export type VerifyOutcome = BadgeAnswer & { readonly restored: boolean };

/**
 * Verify: checks now and records a found badge (the link becomes followed; a listing hidden for
 * a missing badge is live again). Missing or inconclusive changes nothing.
 */
export async function verifyBadge(deps: BadgeDeps, makerId: string, slug: string): Promise<VerifyOutcome> {
  const answer = await checkBadge(deps, makerId, slug);
  if (answer.check.status !== 'found') return { ...answer, restored: false };
  const now = deps.now?.() ?? new Date();
  const restored = await withTransaction(deps.pool, async (client) => {
    const current = await getMakerListing(client, deps.urls, makerId, slug, true);
    const comesBack = current.status === 'hidden' && current.hiddenReason === 'badge_missing';
    await client.query(
      `UPDATE catalog.listings SET badge_status = 'verified', badge_verified_at = $2, badge_checked_at = $2, badge_misses = 0,
         badge_next_check_at = $3, updated_at = $2,
         status = CASE WHEN $4 THEN 'live'::catalog.listing_status ELSE status END,
         hidden_reason = CASE WHEN $4 THEN NULL ELSE hidden_reason END,
         review_feedback = CASE WHEN $4 THEN NULL ELSE review_feedback END
       WHERE id = $1`,
      [current.id, now, nextBadgeCheckAt(now, BADGE_RECHECK_SCHEDULE.intervalMs, BADGE_RECHECK_SCHEDULE.jitterMs, Math.random), comesBack],
    );
    if (comesBack) {
      await client.query(
        `INSERT INTO catalog.review_decisions (listing_id, decided_by, action, from_status, to_status, feedback, created_at)
         VALUES ($1, NULL, 'badge_restore', 'hidden', 'live', 'The badge was found on your site again: the listing is back.', $2)`,
        [current.id, now],
      );
    }
    return comesBack;
  });
  return { ...answer, listing: await getMakerListing(deps.pool, deps.urls, makerId, slug), restored };
}
