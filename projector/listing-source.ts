import type pg from 'pg';

/** A listing as the write model holds it, with the columns the public Product is built from. */
export interface ListingRow {
  id: string;
  slug: string;
  name: string;
  punchline: string;
  description: string;
  website: string;
  logo: string | null;
  cover: string | null;
  category: string | null;
  labels: string[];
  tags: string[];
  product_type: 'software' | 'digital_product' | null;
  pricing_model: 'free' | 'freemium' | 'paid' | 'open_source' | null;
  social: string | null;
  featured: boolean;
  status: 'draft' | 'pending' | 'changes_requested' | 'live' | 'rejected' | 'hidden';
  plan: 'free' | 'premium';
  listed_at: Date | null;
  highlights: string[];
  ideal_for: string[];
  faq: unknown;
  promo_code: string | null;
  promo_discount: string | null;
  promo_url: string | null;
  /** yyyy-mm-dd: selected as text, since node-postgres would turn a date into local midnight. */
  promo_expires_at: string | null;
  badge_status: 'none' | 'verified';
}

export type Queryable = Pick<pg.ClientBase, 'query'>;

export const LISTING_COLUMNS = `l.id, l.slug, l.name, l.punchline, l.description, l.website, l.logo, l.cover,
  l.category, l.labels, l.tags, l.product_type::text AS product_type, l.pricing_model::text AS pricing_model,
  l.social, l.featured, l.status::text AS status, l.plan::text AS plan, l.listed_at, l.highlights, l.ideal_for,
  l.faq, l.promo_code, l.promo_discount, l.promo_url, to_char(l.promo_expires_at, 'YYYY-MM-DD') AS promo_expires_at, l.badge_status`;

/** The current write-model state of the given listings; ids that no longer exist are absent. */
export async function loadListings(db: Queryable, ids: readonly string[]): Promise<ListingRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<ListingRow>(`SELECT ${LISTING_COLUMNS} FROM catalog.listings l WHERE l.id = ANY($1::uuid[])`, [ids]);
  return rows;
}
