import type { Queryable } from './listing-source.ts';
import type { ProductDocument } from './product-document.ts';

/**
 * The writes of projection.* shared by the projector's batches and the rebuild. Every caller
 * runs inside a transaction holding PROJECTION_WRITE_LOCK.
 */

/** Advances projection.state.version; the new version stamps every row this transaction writes. */
export async function nextVersion(db: Queryable, siteUrl?: string): Promise<number> {
  const { rows } = await db.query<{ version: number }>(
    `UPDATE projection.state SET version = version + 1, updated_at = now(), site_url = COALESCE($1, site_url)
     RETURNING version`,
    [siteUrl ?? null],
  );
  return rows[0]!.version;
}

/** Tells API processes a new version is committed (delivered at COMMIT, dropped on rollback). */
export async function notifyProjectionChanged(db: Queryable, version: number): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', ['projection_changed', String(version)]);
}

const PRODUCT_RECORD = `r(id uuid, slug text, doc text, name text, punchline text, description_text text, category text,
  labels text[], tags text[], listed_at timestamptz, promo_expires_at date, website_followed boolean)`;

function productRecords(docs: readonly ProductDocument[]): string {
  return JSON.stringify(
    docs.map(({ product, doc, search, websiteFollowed }) => ({
      id: product.id,
      slug: product.slug,
      doc,
      name: product.name,
      punchline: product.punchline,
      description_text: search.description_text,
      category: product.category,
      labels: product.labels,
      tags: product.tags,
      listed_at: product.listed_at,
      // the expiry of the promo the document shows: the day after it, the document must change
      promo_expires_at: product.promo?.expires_at ?? null,
      website_followed: websiteFollowed,
    })),
  );
}

/**
 * Writes products. With `onlyChanged`, existing rows are replaced only when something differs,
 * so a rebuild does not make every API process reload an unchanged catalog.
 */
export async function writeProducts(db: Queryable, docs: readonly ProductDocument[], version: number, opts: { onlyChanged?: boolean } = {}): Promise<void> {
  if (docs.length === 0) return;
  const conflict = opts.onlyChanged
    ? `ON CONFLICT (id) DO UPDATE SET slug = EXCLUDED.slug, doc = EXCLUDED.doc, name = EXCLUDED.name,
         punchline = EXCLUDED.punchline, description_text = EXCLUDED.description_text, category = EXCLUDED.category,
         labels = EXCLUDED.labels, tags = EXCLUDED.tags, listed_at = EXCLUDED.listed_at,
         promo_expires_at = EXCLUDED.promo_expires_at, website_followed = EXCLUDED.website_followed, version = EXCLUDED.version
       WHERE (p.slug, p.doc, p.description_text, p.category, p.labels, p.tags, p.listed_at, p.promo_expires_at, p.website_followed)
             IS DISTINCT FROM (EXCLUDED.slug, EXCLUDED.doc, EXCLUDED.description_text, EXCLUDED.category,
                               EXCLUDED.labels, EXCLUDED.tags, EXCLUDED.listed_at, EXCLUDED.promo_expires_at, EXCLUDED.website_followed)`
    : '';
  await db.query(
    `INSERT INTO projection.products AS p (id, slug, doc, name, punchline, description_text, category, labels, tags,
                                           listed_at, promo_expires_at, website_followed, version)
     SELECT r.id, r.slug, r.doc, r.name, r.punchline, r.description_text, r.category, r.labels, r.tags,
            r.listed_at, r.promo_expires_at, r.website_followed, $2
       FROM jsonb_to_recordset($1::jsonb) AS ${PRODUCT_RECORD}
     ${conflict}`,
    [productRecords(docs), version],
  );
  // A product back in the projection is no longer a removal.
  await db.query('DELETE FROM projection.removed WHERE id = ANY($1::uuid[])', [docs.map((d) => d.product.id)]);
}

export interface DeletedProduct {
  id: string;
  slug: string;
  doc: string;
  category: string | null;
}

/** Deletes products by id; returns those that were there, with what they showed. */
export async function deleteProducts(db: Queryable, ids: readonly string[]): Promise<DeletedProduct[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<DeletedProduct>(
    'DELETE FROM projection.products WHERE id = ANY($1::uuid[]) RETURNING id, slug, doc, category',
    [ids],
  );
  return rows;
}

/** Records products that left the projection, so readers following versions drop them. */
export async function recordRemoved(db: Queryable, ids: readonly string[], version: number): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `INSERT INTO projection.removed (id, version, removed_at) SELECT unnest($1::uuid[]), $2, now()
     ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, removed_at = EXCLUDED.removed_at`,
    [ids, version],
  );
}
