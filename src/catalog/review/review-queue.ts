import type { Queryable } from '../../db/pool.ts';
import type { CheckReason, HiddenReason, ListingStatus, Plan } from '../listings/listing-rules.ts';
import { LISTING_PAGES, type ListingUrls } from '../listings/listing-urls.ts';
import { reviewStateOf, type ReviewState } from './review-rules.ts';

/**
 * What admins read: the review queue (pending listings, oldest request first, with what the
 * automatic check found, the site as it was inspected, and other listings of the same website),
 * any listing by slug, and a listing's recorded decisions.
 */

/** The most listings the queue page shows at once (the oldest requests). */
export const REVIEW_QUEUE_PAGE = 50;

/** The site as the automatic check saw it (catalog.listings.site_snapshot). */
export interface SiteSnapshot {
  readonly url: string | null;
  readonly title: string | null;
  readonly description: string | null;
  readonly cover: string | null;
  readonly icon: string | null;
  /** How many FAQ entries the site's JSON-LD had. */
  readonly faq: number | null;
  /** Why the site could not be read, when it could not. */
  readonly problem: string | null;
}

interface SameWebsite {
  readonly slug: string;
  readonly name: string;
  readonly status: ListingStatus;
  readonly makerEmail: string | null;
}

export interface ReviewItem {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly punchline: string;
  readonly website: string;
  /** The site the listing had before a change of website waiting for this review: reserved to it until approved. */
  readonly previousWebsite: string | null;
  readonly category: string | null;
  readonly status: ListingStatus;
  readonly hiddenReason: HiddenReason | null;
  readonly featured: boolean;
  readonly plan: Plan;
  readonly badgeVerified: boolean;
  readonly makerEmail: string | null;
  /** When it (last) entered the queue. */
  readonly requestedAt: Date | null;
  readonly createdAt: Date;
  readonly listedAt: Date | null;
  readonly reasons: readonly CheckReason[];
  readonly site: SiteSnapshot | null;
  /** Other listings whose website has the same identity (src/sites/website-identity.ts). */
  readonly sameWebsite: readonly SameWebsite[];
  /** The feedback the maker sees now. */
  readonly feedback: string | null;
  /** The public page (answers while live) and the maker's edit page. */
  readonly url: string;
  readonly editUrl: string;
  /** What the review rules need to decide about it. */
  readonly state: ReviewState;
}

export interface DecisionRecord {
  readonly id: number;
  readonly action: string;
  readonly from: ListingStatus;
  readonly to: ListingStatus;
  readonly feedback: string | null;
  /** The admin's address; null for the directory itself (badge re-checks, the command line without --as). */
  readonly decidedBy: string | null;
  readonly decidedAt: Date;
}


interface Row {
  id: string;
  slug: string;
  name: string;
  punchline: string;
  website: string;
  website_key: string | null;
  previous_website: string | null;
  category: string | null;
  status: ListingStatus;
  hidden_reason: HiddenReason | null;
  featured: boolean;
  plan: Plan;
  badge_status: 'none' | 'verified';
  maker_email: string | null;
  review_requested_at: Date | null;
  created_at: Date;
  listed_at: Date | null;
  check_reasons: unknown;
  site_snapshot: unknown;
  review_feedback: string | null;
  status_before_hide: ListingStatus | null;
}

const SELECT = `SELECT l.id, l.slug, l.name, l.punchline, l.website, l.website_key, l.previous_website, l.category, l.status::text AS status, l.hidden_reason,
    l.featured, l.plan::text AS plan, l.badge_status, m.email AS maker_email, l.review_requested_at, l.created_at, l.listed_at,
    l.check_reasons, l.site_snapshot, l.review_feedback,
    (SELECT d.from_status::text FROM catalog.review_decisions d
      WHERE d.listing_id = l.id AND d.action IN ('hide', 'badge_hide')
      ORDER BY d.created_at DESC, d.id DESC LIMIT 1) AS status_before_hide
  FROM catalog.listings l LEFT JOIN catalog.makers m ON m.id = l.maker_id`;

/** When a listing entered the queue; imported pending listings never asked, so their creation counts. */
const QUEUE_ORDER = 'COALESCE(l.review_requested_at, l.created_at), l.id';

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function snapshotOf(value: unknown): SiteSnapshot | null {
  if (value === null || typeof value !== 'object') return null;
  const s = value as Record<string, unknown>;
  return {
    url: str(s.url),
    title: str(s.title),
    description: str(s.description),
    cover: str(s.cover),
    icon: str(s.icon),
    faq: typeof s.faq === 'number' ? s.faq : null,
    problem: str(s.problem),
  };
}

function reasonsOf(value: unknown): CheckReason[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((r) => (r && typeof r === 'object' && typeof r.code === 'string' && typeof r.message === 'string' ? [{ code: r.code, message: r.message }] : []));
}

async function sameWebsiteOf(db: Queryable, rows: Row[]): Promise<Map<string, SameWebsite[]>> {
  const keys = [...new Set(rows.flatMap((r) => (r.website_key ? [r.website_key] : [])))];
  const byKey = new Map<string, Array<SameWebsite & { id: string }>>();
  if (keys.length === 0) return new Map();
  const { rows: others } = await db.query<{ id: string; slug: string; name: string; status: ListingStatus; maker_email: string | null; website_key: string }>(
    `SELECT l.id, l.slug, l.name, l.status::text AS status, m.email AS maker_email, l.website_key
       FROM catalog.listings l LEFT JOIN catalog.makers m ON m.id = l.maker_id
      WHERE l.website_key = ANY($1::text[])
      ORDER BY l.created_at, l.id`,
    [keys],
  );
  for (const o of others) {
    const list = byKey.get(o.website_key) ?? [];
    list.push({ id: o.id, slug: o.slug, name: o.name, status: o.status, makerEmail: o.maker_email });
    byKey.set(o.website_key, list);
  }
  return new Map(
    rows.map((r) => [r.id, (byKey.get(r.website_key ?? '') ?? []).filter((o) => o.id !== r.id).map(({ id: _id, ...rest }) => rest)]),
  );
}

function toItem(row: Row, sameWebsite: SameWebsite[], urls: ListingUrls): ReviewItem {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    punchline: row.punchline,
    website: row.website,
    previousWebsite: row.previous_website,
    category: row.category,
    status: row.status,
    hiddenReason: row.hidden_reason,
    featured: row.featured,
    plan: row.plan,
    badgeVerified: row.badge_status === 'verified',
    makerEmail: row.maker_email,
    // An imported pending listing never asked: it waits since it was made (as the queue orders it).
    requestedAt: row.review_requested_at ?? row.created_at,
    createdAt: row.created_at,
    listedAt: row.listed_at,
    reasons: reasonsOf(row.check_reasons),
    site: snapshotOf(row.site_snapshot),
    sameWebsite,
    feedback: row.review_feedback,
    url: `${urls.siteUrl}/products/${row.slug}`,
    editUrl: `${urls.publicUrl}${LISTING_PAGES.edit(row.slug)}`,
    state: reviewStateOf(row),
  };
}

async function itemsOf(db: Queryable, urls: ListingUrls, rows: Row[]): Promise<ReviewItem[]> {
  const same = await sameWebsiteOf(db, rows);
  return rows.map((r) => toItem(r, same.get(r.id) ?? [], urls));
}

/** The pending listings, oldest request first: at most `limit` of them after `offset`, and how many wait in all. */
export async function listReviewQueue(db: Queryable, urls: ListingUrls, opts: { limit?: number; offset?: number } = {}): Promise<{ items: ReviewItem[]; total: number }> {
  const limit = opts.limit ?? null;
  const [{ rows }, count] = await Promise.all([
    db.query<Row>(`${SELECT} WHERE l.status = 'pending' ORDER BY ${QUEUE_ORDER} LIMIT $1 OFFSET $2`, [limit, opts.offset ?? 0]),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.listings WHERE status = 'pending'`),
  ]);
  return { items: await itemsOf(db, urls, rows), total: count.rows[0]!.n };
}

/** Any listing, whatever its state. */
export async function findReviewItem(db: Queryable, urls: ListingUrls, slug: string): Promise<ReviewItem | undefined> {
  const { rows } = await db.query<Row>(`${SELECT} WHERE l.slug = $1`, [slug]);
  return rows[0] ? (await itemsOf(db, urls, rows))[0] : undefined;
}

/** A listing's recorded decisions, newest first. */
export async function listDecisions(db: Queryable, listingId: string): Promise<DecisionRecord[]> {
  const { rows } = await db.query<{ id: number; action: string; from_status: ListingStatus; to_status: ListingStatus; feedback: string | null; email: string | null; created_at: Date }>(
    `SELECT d.id, d.action, d.from_status::text AS from_status, d.to_status::text AS to_status, d.feedback, m.email, d.created_at
       FROM catalog.review_decisions d LEFT JOIN catalog.makers m ON m.id = d.decided_by
      WHERE d.listing_id = $1
      ORDER BY d.created_at DESC, d.id DESC`,
    [listingId],
  );
  return rows.map((r) => ({ id: r.id, action: r.action, from: r.from_status, to: r.to_status, feedback: r.feedback, decidedBy: r.email, decidedAt: r.created_at }));
}
