import { badRequest, conflict, listingNotFound } from '../../contract/errors.ts';
import type { Pool, PoolClient, Queryable } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import { websiteIdentity } from '../../sites/website-identity.ts';
import { decideMakerEdit, decideWebsiteChange, type CheckReason, type HiddenReason, type ListingState, type ListingStatus, type Plan } from './listing-rules.ts';
import { LISTING_PAGES, type ListingUrls } from './listing-urls.ts';
import { renderDescription, type ListingChanges } from './maker-input.ts';
import {
  assertReachableHost,
  bestIcon,
  checkListingSite,
  inspectListingSite,
  listedSite,
  lockWebsite,
  siteSnapshot,
  type InspectedSite,
  type SiteCheckDeps,
} from './site-check.ts';

/**
 * A maker's own listings: what my_listings and the dashboard show, and the edits of
 * update_listing and the edit page. Every query is scoped to the maker: another maker's listing
 * is "not found", never shown.
 */
export type BadgeState = 'verified' | 'not_verified' | 'not_needed';

export interface MakerListing {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly punchline: string;
  readonly status: ListingStatus;
  readonly hiddenReason: HiddenReason | null;
  readonly plan: Plan;
  /** The directory badge: premium listings need none. */
  readonly badge: BadgeState;
  /** The admin's latest feedback, when any. */
  readonly feedback: string | null;
  readonly website: string;
  /** The site's identity (src/sites/website-identity.ts). */
  readonly websiteKey: string;
  /** The site the listing had before a change of website that waits for review: reserved to it until a reviewer approves. */
  readonly previousWebsite: string | null;
  readonly category: string | null;
  readonly pricingModel: string | null;
  readonly productType: string | null;
  readonly social: string | null;
  readonly descriptionSource: string;
  /** The public listing page (it answers only while the listing is live). */
  readonly url: string;
  /** The page where the maker edits it. */
  readonly editUrl: string;
  readonly createdAt: Date;
  readonly listedAt: Date | null;
  readonly state: ListingState;
}

interface Row {
  id: string;
  slug: string;
  name: string;
  punchline: string;
  description: string;
  description_source: string | null;
  status: ListingStatus;
  hidden_reason: HiddenReason | null;
  plan: Plan;
  badge_status: 'none' | 'verified';
  review_feedback: string | null;
  website: string;
  website_key: string | null;
  previous_website: string | null;
  category: string | null;
  pricing_model: string | null;
  product_type: string | null;
  social: string | null;
  created_at: Date;
  listed_at: Date | null;
}

const COLUMNS = `id, slug, name, punchline, description, description_source, status::text AS status, hidden_reason,
  plan::text AS plan, badge_status, review_feedback, website, website_key, previous_website, category, pricing_model::text AS pricing_model,
  product_type::text AS product_type, social, created_at, listed_at`;

function toListing(row: Row, urls: ListingUrls): MakerListing {
  const badgeVerified = row.badge_status === 'verified';
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    punchline: row.punchline,
    status: row.status,
    hiddenReason: row.hidden_reason,
    plan: row.plan,
    badge: row.plan === 'premium' ? 'not_needed' : badgeVerified ? 'verified' : 'not_verified',
    feedback: row.review_feedback,
    website: row.website,
    websiteKey: row.website_key ?? websiteIdentity(row.website),
    previousWebsite: row.previous_website,
    category: row.category,
    pricingModel: row.pricing_model,
    productType: row.product_type,
    social: row.social,
    // An imported listing has no Markdown of its own: its HTML is what the maker edits.
    descriptionSource: row.description_source ?? row.description,
    url: `${urls.siteUrl}/products/${row.slug}`,
    editUrl: `${urls.publicUrl}${LISTING_PAGES.edit(row.slug)}`,
    createdAt: row.created_at,
    listedAt: row.listed_at,
    state: { status: row.status, hiddenReason: row.hidden_reason, plan: row.plan, badgeVerified, listedAt: row.listed_at },
  };
}


/** The maker's listings, newest first. */
export async function listMakerListings(db: Queryable, urls: ListingUrls, makerId: string): Promise<MakerListing[]> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM catalog.listings WHERE maker_id = $1 ORDER BY created_at DESC, id`, [makerId]);
  return rows.map((r) => toListing(r, urls));
}

/** One of the maker's listings; throws NOT_FOUND for a slug that is not theirs. */
export async function getMakerListing(db: Queryable, urls: ListingUrls, makerId: string, slug: string, lock = false): Promise<MakerListing> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM catalog.listings WHERE maker_id = $1 AND slug = $2${lock ? ' FOR UPDATE' : ''}`, [makerId, slug]);
  if (!rows[0]) throw listingNotFound(slug);
  return toListing(rows[0], urls);
}

/**
 * The maker's own listing of this site, whatever its state: by its website, or by the site it
 * keeps reserved while a change of website waits for review. A rejected listing counts (its site
 * is not submitted again as a new listing); one that is not rejected is named first.
 */
export async function makersListingOfSite(db: Queryable, urls: ListingUrls, makerId: string, websiteKey: string, exceptListingId?: string): Promise<MakerListing | undefined> {
  const { rows } = await db.query<{ slug: string }>(
    `SELECT slug FROM catalog.listings
      WHERE maker_id = $1 AND (website_key = $2 OR previous_website_key = $2) AND id IS DISTINCT FROM $3::uuid
      ORDER BY status = 'rejected', created_at DESC LIMIT 1`,
    [makerId, websiteKey, exceptListingId ?? null],
  );
  return rows[0] ? getMakerListing(db, urls, makerId, rows[0].slug) : undefined;
}

export interface EditResult {
  readonly listing: MakerListing;
  /** 'updated_live' when the live listing was changed in place; 'sent_to_review' when it went to review. */
  readonly outcome: 'updated_live' | 'sent_to_review';
  /** When the edit gave the listing a site of another identity: what became of the change. */
  readonly websiteChange: WebsiteChange | null;
}

interface WebsiteChange {
  /** The site the listing had. */
  readonly from: string;
  /** Accepted at once (a live listing whose new site passed the automatic check), or waiting for a reviewer. */
  readonly accepted: boolean;
  /** What the automatic check found on the new site (the reviewer's reasons when it did not pass). */
  readonly reasons: readonly CheckReason[];
}

/** What an edit needs: the write model, and for a new website what a submission's site goes through. */
export interface EditDeps extends SiteCheckDeps {
  readonly pool: Pool;
  readonly urls: ListingUrls;
}

/** A new site of another identity, read and checked before the edit's transaction. */
interface NewSite {
  readonly website: string;
  readonly websiteKey: string;
  readonly site: InspectedSite;
}

/**
 * The new website's refusals, which a submission of it would meet as already_submitted or
 * already_listed: the site is one of the maker's own listings', or another listing's in the
 * directory (the maker's own is named first: that is the listing to edit).
 */
async function assertSiteFree(db: Pool | PoolClient, urls: ListingUrls, makerId: string, listingId: string, websiteKey: string): Promise<void> {
  const own = await makersListingOfSite(db, urls, makerId, websiteKey, listingId);
  if (own) {
    const state = own.status === 'rejected' ? 'it was rejected, so its site cannot be listed again' : `edit that listing instead`;
    throw badRequest([{ path: ['website'], message: `You already have a listing for this site, ${own.name} (${own.status}): ${state}.` }]);
  }
  const listed = await listedSite(db, urls, websiteKey, { makerId, exceptListingId: listingId });
  if (listed) {
    throw badRequest([{ path: ['website'], message: `This site is already in the directory as ${listed.name} (${listed.url}): one site has one listing.` }]);
  }
}

/**
 * Applies a maker's edit under the review rules (listing-rules.ts). The category must exist;
 * a rejected listing is refused with CONFLICT and nothing changes. A website of another
 * identity goes through what a submission's site goes through (decideWebsiteChange): refused
 * (BAD_REQUEST on `website`) when it is another listing's or one of the maker's own, read and
 * inspected before the transaction, and checked by the automatic check with the listing's
 * fields as they will be; what depends on the site is derived again.
 */
export async function editListing(deps: EditDeps, makerId: string, slug: string, changes: ListingChanges, now: Date): Promise<EditResult> {
  const { pool, urls } = deps;
  let newSite: NewSite | undefined;
  if (changes.website !== undefined) {
    const current = await getMakerListing(pool, urls, makerId, slug);
    const allowed = decideMakerEdit(current.state);
    if (!allowed.allowed) throw conflict(allowed.message);
    const websiteKey = websiteIdentity(changes.website);
    if (websiteKey !== current.websiteKey) {
      if (changes.category !== undefined) await assertCategoryExists(pool, changes.category);
      await assertReachableHost(deps, changes.website);
      await assertSiteFree(pool, urls, makerId, current.id, websiteKey);
      newSite = { website: changes.website, websiteKey, site: await inspectListingSite(deps.fetcher, changes.website) };
    }
  }

  return withTransaction(pool, async (client) => {
    const current = await getMakerListing(client, urls, makerId, slug, true);
    if (changes.category !== undefined) await assertCategoryExists(client, changes.category);
    // Another listing may have taken the site while it was being read.
    if (newSite) {
      await lockWebsite(client, newSite.websiteKey);
      await assertSiteFree(client, urls, makerId, current.id, newSite.websiteKey);
    }
    const check = newSite
      ? checkListingSite(deps, newSite.website, newSite.site, {
          name: changes.name ?? current.name,
          punchline: changes.punchline ?? current.punchline,
          description: changes.description ?? current.descriptionSource,
          category: changes.category ?? current.category,
        })
      : undefined;
    const decision = check ? decideWebsiteChange(current.state, check.publish) : decideMakerEdit(current.state);
    if (!decision.allowed) throw conflict(decision.message);

    const sets: string[] = [];
    const values: unknown[] = [];
    const set = (column: string, value: unknown) => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.punchline !== undefined) set('punchline', changes.punchline);
    if (changes.description !== undefined) {
      set('description', renderDescription(changes.description));
      set('description_source', changes.description);
    }
    if (changes.category !== undefined) set('category', changes.category);
    if (changes.pricing_model !== undefined) set('pricing_model', changes.pricing_model);
    if (changes.social !== undefined) set('social', changes.social);
    // The same site at another address (https for http, www…): the field alone changes.
    if (changes.website !== undefined && !newSite && changes.website !== current.website) set('website', changes.website);
    let websiteChange: WebsiteChange | null = null;
    if (newSite && check && 'acceptedNow' in decision) {
      const { inspection } = newSite.site;
      set('website', newSite.website);
      set('website_key', newSite.websiteKey);
      set('check_reasons', JSON.stringify(check.reasons));
      set('site_snapshot', JSON.stringify(siteSnapshot(newSite.site)));
      // Images taken from the old site (as its inspection recorded them) follow the site; an
      // imported logo or cover stays.
      values.push(bestIcon(inspection));
      sets.push(`logo = CASE WHEN logo IS NOT DISTINCT FROM site_snapshot->>'icon' THEN $${values.length} ELSE logo END`);
      values.push(inspection?.cover ?? null);
      sets.push(`cover = CASE WHEN cover IS NOT DISTINCT FROM site_snapshot->>'cover' THEN $${values.length} ELSE cover END`);
      // The badge was found on the old site: Verify looks for it on the new one.
      sets.push(`badge_status = 'none', badge_verified_at = NULL, badge_checked_at = NULL, badge_misses = 0, badge_next_check_at = NULL`);
      // The old site stays reserved to the listing until a reviewer accepts the change (the site
      // it had before a first change that waits, not one it was changed to meanwhile); coming
      // back to the reserved site ends the reservation.
      const reserved = current.previousWebsite === null ? null : { website: current.previousWebsite, key: websiteIdentity(current.previousWebsite) };
      const keep = decision.acceptedNow ? null : (reserved ?? { website: current.website, key: current.websiteKey });
      const reservation = keep && keep.key !== newSite.websiteKey ? keep : null;
      set('previous_website', reservation?.website ?? null);
      set('previous_website_key', reservation?.key ?? null);
      websiteChange = { from: current.website, accepted: decision.acceptedNow, reasons: check.reasons };
    }
    set('status', decision.nextStatus);
    if (decision.reviewRequested) {
      set('review_requested_at', now);
      set('hidden_reason', null);
    }
    set('updated_at', now);
    values.push(current.id);
    await client.query(`UPDATE catalog.listings SET ${sets.join(', ')} WHERE id = $${values.length}`, values);
    return {
      listing: await getMakerListing(client, urls, makerId, slug),
      outcome: decision.reviewRequested ? 'sent_to_review' : 'updated_live',
      websiteChange,
    };
  });
}

/** Throws a BAD_REQUEST naming the field when the category does not exist. */
export async function assertCategoryExists(db: Queryable, category: string): Promise<void> {
  const { rows } = await db.query('SELECT 1 FROM catalog.categories WHERE slug = $1', [category]);
  if (!rows[0]) throw badRequest([{ path: ['category'], message: `category '${category}' does not exist; list_categories gives the slugs` }]);
}
