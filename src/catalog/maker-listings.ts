import { badRequest, conflict, listingNotFound } from '../contract/errors.ts';
import type { Pool, PoolClient } from '../db/pool.ts';
import { withTransaction } from '../db/pool.ts';
import { decideMakerEdit, type HiddenReason, type ListingState, type ListingStatus, type Plan } from './listing-rules.ts';
import { renderDescription, type ListingChanges } from './maker-input.ts';

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

export const LISTING_PAGES = { dashboard: '/dashboard', edit: (slug: string) => `/dashboard/listings/${slug}` } as const;

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
  category: string | null;
  pricing_model: string | null;
  product_type: string | null;
  social: string | null;
  created_at: Date;
  listed_at: Date | null;
}

const COLUMNS = `id, slug, name, punchline, description, description_source, status::text AS status, hidden_reason,
  plan::text AS plan, badge_status, review_feedback, website, category, pricing_model::text AS pricing_model,
  product_type::text AS product_type, social, created_at, listed_at`;

export interface ListingUrls {
  siteUrl: string;
  publicUrl: string;
}

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

type Queryable = Pool | PoolClient;

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

export interface EditResult {
  readonly listing: MakerListing;
  /** 'updated_live' when the live listing was changed in place; 'sent_to_review' when it went to review. */
  readonly outcome: 'updated_live' | 'sent_to_review';
}

/**
 * Applies a maker's edit under the review rules (listing-rules.ts). The category must exist;
 * a rejected listing is refused with CONFLICT and nothing changes.
 */
export async function editListing(pool: Pool, urls: ListingUrls, makerId: string, slug: string, changes: ListingChanges, now: Date): Promise<EditResult> {
  return withTransaction(pool, async (client) => {
    const current = await getMakerListing(client, urls, makerId, slug, true);
    const decision = decideMakerEdit(current.state);
    if (!decision.allowed) throw conflict(decision.message);
    if (changes.category !== undefined) await assertCategoryExists(client, changes.category);
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
    set('status', decision.nextStatus);
    if (decision.reviewRequested) {
      set('review_requested_at', now);
      set('hidden_reason', null);
    }
    set('updated_at', now);
    values.push(current.id);
    await client.query(`UPDATE catalog.listings SET ${sets.join(', ')} WHERE id = $${values.length}`, values);
    return { listing: await getMakerListing(client, urls, makerId, slug), outcome: decision.reviewRequested ? 'sent_to_review' : 'updated_live' };
  });
}

/** Throws a BAD_REQUEST naming the field when the category does not exist. */
export async function assertCategoryExists(db: Queryable, category: string): Promise<void> {
  const { rows } = await db.query('SELECT 1 FROM catalog.categories WHERE slug = $1', [category]);
  if (!rows[0]) throw badRequest([{ path: ['category'], message: `category '${category}' does not exist; list_categories gives the slugs` }]);
}
