import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { LISTING_COLUMNS, type ListingRow } from '../../projector/listing-source.ts';
import { buildProductDocument } from '../../projector/product-document.ts';

/**
 * Writes to the write model (catalog.*) with plain SQL, for projection tests. The triggers of
 * migration 001 append the outbox rows exactly as the catalog's own commands would.
 */
type Db = Pick<pg.ClientBase, 'query'>;

export interface CategoryInput {
  slug: string;
  name?: string;
  noun?: string;
}

export async function insertCategory(db: Db, c: CategoryInput): Promise<void> {
  await db.query('INSERT INTO catalog.categories (slug, name, noun) VALUES ($1, $2, $3)', [c.slug, c.name ?? c.slug, c.noun ?? 'tools']);
}

export async function deleteCategory(db: Db, slug: string): Promise<void> {
  await db.query('DELETE FROM catalog.categories WHERE slug = $1', [slug]);
}

export interface ListingInput {
  id?: string;
  slug?: string;
  name?: string;
  punchline?: string;
  description?: string;
  website?: string;
  logo?: string | null;
  cover?: string | null;
  category?: string | null;
  labels?: string[];
  tags?: string[];
  product_type?: 'software' | 'digital_product' | null;
  pricing_model?: 'free' | 'freemium' | 'paid' | 'open_source' | null;
  social?: string | null;
  featured?: boolean;
  status?: 'draft' | 'pending' | 'live' | 'rejected' | 'hidden';
  plan?: 'free' | 'premium';
  listed_at?: Date | string | null;
  highlights?: string[];
  ideal_for?: string[];
  faq?: { question: string; answer: string }[];
  promo_code?: string | null;
  promo_discount?: string | null;
  promo_url?: string | null;
  /** yyyy-mm-dd */
  promo_expires_at?: string | null;
}

const COLUMNS = [
  'id', 'slug', 'name', 'punchline', 'description', 'website', 'logo', 'cover', 'category', 'labels', 'tags',
  'product_type', 'pricing_model', 'social', 'featured', 'status', 'plan', 'listed_at', 'highlights', 'ideal_for',
  'faq', 'promo_code', 'promo_discount', 'promo_url', 'promo_expires_at',
] as const;

let counter = 0;

/** A complete live listing with every field set, overridable. */
function listingValues(input: ListingInput = {}): Required<ListingInput> {
  const n = ++counter;
  const slug = input.slug ?? `listing-${process.pid}-${n}-${randomUUID().slice(0, 8)}`;
  return {
    id: randomUUID(),
    slug,
    name: `Listing ${n}`,
    punchline: `Punchline of listing ${n}`,
    description: `<p>Description of <b>listing</b> ${n} &amp; friends</p>`,
    website: `https://example.com/${slug}`,
    logo: `https://cdn.example.com/${slug}/logo.png`,
    cover: null,
    category: null,
    labels: [],
    tags: [],
    product_type: 'software',
    pricing_model: 'freemium',
    social: null,
    featured: false,
    status: 'live',
    plan: 'free',
    listed_at: new Date(Date.UTC(2025, 0, 1) + n * 60_000),
    highlights: [],
    ideal_for: [],
    faq: [],
    promo_code: null,
    promo_discount: null,
    promo_url: null,
    promo_expires_at: null,
    ...input,
  } as Required<ListingInput>;
}

function sqlValue(column: string, value: unknown): unknown {
  if (column === 'faq') return JSON.stringify(value);
  return value;
}

/** Inserts a listing; returns its id. */
export async function insertListing(db: Db, input: ListingInput = {}): Promise<string> {
  const v = listingValues(input);
  await db.query(
    `INSERT INTO catalog.listings (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c, i) => `$${i + 1}${c === 'faq' ? '::jsonb' : ''}`).join(', ')})`,
    COLUMNS.map((c) => sqlValue(c, v[c])),
  );
  return v.id;
}

/** Inserts many listings in one statement (backlogs for crash and load tests); returns ids. */
export async function insertListings(db: Db, inputs: ListingInput[]): Promise<string[]> {
  const rows = inputs.map((i) => listingValues(i));
  await db.query(
    `INSERT INTO catalog.listings (${COLUMNS.join(', ')})
     SELECT ${COLUMNS.join(', ')} FROM jsonb_populate_recordset(NULL::catalog.listings, $1::jsonb)`,
    [JSON.stringify(rows.map((r) => ({ ...r, listed_at: r.listed_at instanceof Date ? r.listed_at.toISOString() : r.listed_at })))],
  );
  return rows.map((r) => r.id);
}

/** Updates some columns of a listing. */
export async function updateListing(db: Db, id: string, patch: Omit<ListingInput, 'id'>): Promise<void> {
  const entries = Object.entries(patch).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return;
  const sets = entries.map(([k], i) => `${k} = $${i + 2}${k === 'faq' ? '::jsonb' : ''}`);
  await db.query(`UPDATE catalog.listings SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, [
    id,
    ...entries.map(([k, v]) => sqlValue(k, v)),
  ]);
}

export async function deleteListing(db: Db, id: string): Promise<void> {
  await db.query('DELETE FROM catalog.listings WHERE id = $1', [id]);
}

/** Live counts per category as a GROUP BY over the write model computes them, zero included. */
export async function expectedCategoryCounts(db: Db): Promise<Record<string, number>> {
  const { rows } = await db.query<{ slug: string; n: number }>(
    `SELECT c.slug, count(l.id)::int AS n FROM catalog.categories c
       LEFT JOIN catalog.listings l ON l.category = c.slug AND l.status = 'live'
      GROUP BY c.slug`,
  );
  return Object.fromEntries(rows.map((r) => [r.slug, r.n]));
}

/** Counts per category as the projection holds them. */
export async function projectedCategoryCounts(db: Db): Promise<Record<string, number>> {
  const { rows } = await db.query<{ slug: string; count: number }>('SELECT slug, count FROM projection.category_counts');
  return Object.fromEntries(rows.map((r) => [r.slug, r.count]));
}

/**
 * The projection as it should be: every live listing's document built from the write model,
 * by id. Compared with projection.products after the projector caught up.
 */
export async function recomputedDocs(db: Db, siteUrl: string, todayUtc: string): Promise<Map<string, string>> {
  const { rows } = await db.query<ListingRow>(`SELECT ${LISTING_COLUMNS} FROM catalog.listings l WHERE l.status = 'live'`);
  return new Map(rows.map((r) => [r.id, buildProductDocument(r, siteUrl, todayUtc).doc]));
}

/** projection.products as id → doc. */
export async function projectedDocs(db: Db): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; doc: string }>('SELECT id, doc FROM projection.products');
  return new Map(rows.map((r) => [r.id, r.doc]));
}
