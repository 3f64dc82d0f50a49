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

/**
 * Tells API processes a new version is committed (delivered at COMMIT, dropped on rollback), and
 * records when, with the time the oldest write-model change it carries was made (undefined for
 * a version that carries none): the processes time their delivery from them. `traceparent`
 * names the batch's span when traces are on (the processes' apply spans join its trace).
 */
export async function notifyProjectionChanged(db: Queryable, version: number, oldestChangeAt?: Date, traceparent?: string): Promise<void> {
  await db.query(
    `WITH stamped AS (UPDATE projection.state SET committed_at = clock_timestamp(), oldest_change_at = $3, traceparent = $4 RETURNING 1)
     SELECT pg_notify($1, $2) FROM stamped`,
    ['projection_changed', String(version), oldestChangeAt ?? null, traceparent ?? null],
  );
}

/**
 * A text[] literal for one row's array column: inside the statement's parallel arrays (one per
 * column, unnested together), an array column travels as its literal and is cast per row.
 */
function textArrayLiteral(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
}

/**
 * Long texts (the documents, the descriptions' text) travel as one bytea, which node-postgres
 * sends in binary, with each text's byte offset and length: as elements of a text[] they are
 * escaped by the client and unescaped by the server, which cost about 100 µs a document (a
 * JSON document is full of quotes), five times the whole insert. `textAt` reads one back.
 */
function packTexts(values: readonly string[]): { blob: Buffer; starts: number[]; lengths: number[] } {
  const starts = new Array<number>(values.length);
  const lengths = new Array<number>(values.length);
  let at = 1;
  values.forEach((v, i) => {
    starts[i] = at;
    lengths[i] = Buffer.byteLength(v, 'utf8');
    at += lengths[i];
  });
  // One encoding of the whole, rather than a buffer per text copied together afterwards.
  return { blob: Buffer.from(values.join(''), 'utf8'), starts, lengths };
}

const textAt = (blob: string, start: string, length: string) => `convert_from(substring(${blob} FROM ${start} FOR ${length}), 'UTF8')`;

function productColumns(docs: readonly ProductDocument[]): unknown[] {
  const n = docs.length;
  const cols = {
    id: new Array<string>(n),
    slug: new Array<string>(n),
    name: new Array<string>(n),
    punchline: new Array<string>(n),
    category: new Array<string | null>(n),
    labels: new Array<string>(n),
    tags: new Array<string>(n),
    listedAt: new Array<string | null>(n),
    promoExpiresAt: new Array<string | null>(n),
    websiteFollowed: new Array<boolean>(n),
  };
  const texts = new Array<string>(2 * n);
  docs.forEach(({ product, doc, search, websiteFollowed }, i) => {
    cols.id[i] = product.id;
    cols.slug[i] = product.slug;
    cols.name[i] = product.name;
    cols.punchline[i] = product.punchline;
    cols.category[i] = product.category;
    cols.labels[i] = textArrayLiteral(product.labels);
    cols.tags[i] = textArrayLiteral(product.tags);
    cols.listedAt[i] = product.listed_at;
    // the expiry of the promo the document shows: the day after it, the document must change
    cols.promoExpiresAt[i] = product.promo?.expires_at ?? null;
    cols.websiteFollowed[i] = websiteFollowed;
    texts[2 * i] = doc;
    texts[2 * i + 1] = search.description_text;
  });
  const { blob, starts, lengths } = packTexts(texts);
  return [...Object.values(cols), blob, starts, lengths];
}

/** The rows of productColumns' parameters ($1 … $13), as r(id, slug, doc, …). */
const PRODUCT_ROWS = `(SELECT r.id, r.slug, ${textAt('$11::bytea', 'starts[(2 * r.i - 1)::int]', 'lengths[(2 * r.i - 1)::int]')} AS doc, r.name, r.punchline,
         ${textAt('$11::bytea', 'starts[(2 * r.i)::int]', 'lengths[(2 * r.i)::int]')} AS description_text, r.category,
         r.labels::text[] AS labels, r.tags::text[] AS tags, r.listed_at, r.promo_expires_at, r.website_followed
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::date[], $10::boolean[])
           WITH ORDINALITY AS r(id, slug, name, punchline, category, labels, tags, listed_at, promo_expires_at, website_followed, i),
         (SELECT $12::int[] AS starts, $13::int[] AS lengths) t) AS r`;

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
            r.listed_at, r.promo_expires_at, r.website_followed, $14
       FROM ${PRODUCT_ROWS}
     ${conflict}`,
    [...productColumns(docs), version],
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
