import type { PoolClient } from '../../db/pool.ts';
import { websiteIdentity } from '../../sites/website-identity.ts';
import type { CategoryLine, ListingLine } from '../listings/listing-input.ts';

/**
 * Set-based writes of the import: one statement per batch of rows, each row passed inside one
 * JSON parameter (no parameter-count limit, arrays and jsonb carried as they are). The outbox
 * triggers fire per row, in the same transaction.
 */

export async function upsertCategories(client: PoolClient, rows: readonly CategoryLine[]): Promise<void> {
  if (rows.length === 0) return;
  await client.query(
    `INSERT INTO catalog.categories (slug, name, noun)
     SELECT r.slug, r.name, r.noun FROM jsonb_to_recordset($1::jsonb) AS r(slug text, name text, noun text)
     ON CONFLICT (slug) DO UPDATE SET name = EXCLUDED.name, noun = EXCLUDED.noun, updated_at = now()
     WHERE (catalog.categories.name, catalog.categories.noun) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.noun)`,
    [JSON.stringify(rows.map(({ slug, name, noun }) => ({ slug, name, noun })))],
  );
}

/** Labels and tags are created on first use. */
export async function ensureLabelsAndTags(client: PoolClient, labels: readonly string[], tags: readonly string[]): Promise<void> {
  if (labels.length > 0) {
    await client.query('INSERT INTO catalog.labels (slug) SELECT unnest($1::text[]) ON CONFLICT (slug) DO NOTHING', [labels]);
  }
  if (tags.length > 0) {
    await client.query('INSERT INTO catalog.tags (slug) SELECT unnest($1::text[]) ON CONFLICT (slug) DO NOTHING', [tags]);
  }
}

/** A maker is one row per e-mail address, compared without case. */
export async function ensureMakers(client: PoolClient, emails: readonly string[]): Promise<void> {
  if (emails.length === 0) return;
  await client.query('INSERT INTO catalog.makers (email) SELECT unnest($1::text[]) ON CONFLICT ((lower(email))) DO NOTHING', [emails]);
}

export interface StoredListingKey {
  id: string;
  slug: string;
  listed_at: Date | null;
}

/** The listings already stored under any of these slugs or ids. */
export async function findListings(client: PoolClient, slugs: readonly string[], ids: readonly string[]): Promise<StoredListingKey[]> {
  if (slugs.length === 0 && ids.length === 0) return [];
  const { rows } = await client.query<StoredListingKey>(
    'SELECT id, slug, listed_at FROM catalog.listings WHERE slug = ANY($1::text[]) OR id = ANY($2::uuid[])',
    [slugs, ids],
  );
  return rows;
}

/** A listing line ready to store: listed_at resolved (see importCatalog). */
export type ListingRow = Omit<ListingLine, 'listed_at'> & { listed_at: string | null };

const LISTING_COLUMNS = `id uuid, slug text, name text, punchline text, description text, website text, logo text,
  cover text, category text, labels text[], tags text[], product_type catalog.product_type,
  pricing_model catalog.pricing_model, social text, featured boolean, status catalog.listing_status,
  plan catalog.listing_plan, listed_at timestamptz, highlights text[], ideal_for text[], faq jsonb,
  promo_code text, promo_discount text, promo_url text, promo_expires_at date, maker_email text, website_key text`;

/**
 * Inserts or updates listings by slug. An update replaces every field the file carries and
 * keeps the listing's id, its review feedback and, when the line names no maker, its maker.
 * Slugs must be distinct within one call (Postgres refuses to update a row twice in a statement).
 */
export async function upsertListings(client: PoolClient, rows: readonly ListingRow[]): Promise<void> {
  if (rows.length === 0) return;
  const payload = rows.map((r, position) => ({
    position,
    id: r.id ?? null,
    slug: r.slug,
    name: r.name,
    punchline: r.punchline,
    description: r.description,
    website: r.website,
    logo: r.logo,
    cover: r.cover,
    category: r.category,
    labels: r.labels,
    tags: r.tags,
    product_type: r.product_type,
    pricing_model: r.pricing_model,
    social: r.social,
    featured: r.featured,
    status: r.status,
    plan: r.plan,
    listed_at: r.listed_at,
    highlights: r.highlights,
    ideal_for: r.ideal_for,
    faq: r.faq,
    promo_code: r.promo?.code ?? null,
    promo_discount: r.promo?.discount ?? null,
    promo_url: r.promo?.url ?? null,
    promo_expires_at: r.promo?.expires_at ?? null,
    maker_email: r.maker_email ?? null,
    website_key: websiteIdentity(r.website),
  }));
  await client.query(
    `INSERT INTO catalog.listings AS l (id, slug, name, punchline, description, website, logo, cover, category, labels, tags,
       product_type, pricing_model, social, featured, status, plan, listed_at, highlights, ideal_for, faq,
       promo_code, promo_discount, promo_url, promo_expires_at, maker_id, website_key)
     SELECT COALESCE(r.id, gen_random_uuid()), r.slug, r.name, r.punchline, r.description, r.website, r.logo, r.cover,
       r.category, r.labels, r.tags, r.product_type, r.pricing_model, r.social, r.featured, r.status, r.plan, r.listed_at,
       r.highlights, r.ideal_for, r.faq, r.promo_code, r.promo_discount, r.promo_url, r.promo_expires_at, m.id, r.website_key
     FROM jsonb_to_recordset($1::jsonb) AS r(${LISTING_COLUMNS}, position integer)
     LEFT JOIN catalog.makers m ON lower(m.email) = lower(r.maker_email)
     -- in file order, so the outbox (and the projector after it) sees the listings in that order
     ORDER BY r.position
     ON CONFLICT (slug) DO UPDATE SET
       name = EXCLUDED.name, punchline = EXCLUDED.punchline, description = EXCLUDED.description,
       website = EXCLUDED.website, logo = EXCLUDED.logo, cover = EXCLUDED.cover, category = EXCLUDED.category,
       labels = EXCLUDED.labels, tags = EXCLUDED.tags, product_type = EXCLUDED.product_type,
       pricing_model = EXCLUDED.pricing_model, social = EXCLUDED.social, featured = EXCLUDED.featured,
       status = EXCLUDED.status, plan = EXCLUDED.plan, listed_at = EXCLUDED.listed_at,
       highlights = EXCLUDED.highlights, ideal_for = EXCLUDED.ideal_for, faq = EXCLUDED.faq,
       promo_code = EXCLUDED.promo_code, promo_discount = EXCLUDED.promo_discount, promo_url = EXCLUDED.promo_url,
       promo_expires_at = EXCLUDED.promo_expires_at, website_key = EXCLUDED.website_key,
       -- the imported HTML is now what a maker edits
       description_source = CASE WHEN l.description IS DISTINCT FROM EXCLUDED.description THEN NULL ELSE l.description_source END,
       maker_id = COALESCE(EXCLUDED.maker_id, l.maker_id),
       -- the file says what the listing's site is: a site kept reserved by a change of website
       -- that waited for review is free
       previous_website = NULL, previous_website_key = NULL,
       updated_at = now()`,
    [JSON.stringify(payload)],
  );
}
