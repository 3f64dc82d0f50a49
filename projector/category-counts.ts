import type { Queryable } from './listing-source.ts';
import { buildCategoryDocument, type CategoryRow } from './product-document.ts';

/**
 * Recomputes projection.category_counts for the given category slugs (or every category): each
 * category of the write model is present with the number of live products the projection holds
 * in it, zero included; categories gone from the write model are dropped. Counting the
 * projection's own products (in the same transaction) keeps counts and search results in step;
 * once the projector has caught up they equal a GROUP BY over live listings.
 */
export async function recomputeCategoryCounts(
  db: Queryable,
  slugs: readonly string[] | 'all',
  siteUrl: string,
  version: number,
): Promise<void> {
  const all = slugs === 'all';
  if (!all && slugs.length === 0) return;
  const { rows } = await db.query<CategoryRow>(
    `SELECT c.slug, c.name, c.noun,
            (SELECT count(*)::int FROM projection.products p WHERE p.category = c.slug) AS count
       FROM catalog.categories c
      WHERE $1 OR c.slug = ANY($2::text[])`,
    [all, all ? [] : slugs],
  );
  await writeCounts(db, rows, siteUrl, version);
  await db.query(
    `DELETE FROM projection.category_counts cc
      WHERE ($1 OR cc.slug = ANY($2::text[]))
        AND NOT EXISTS (SELECT 1 FROM catalog.categories c WHERE c.slug = cc.slug)`,
    [all, all ? [] : slugs],
  );
}

/**
 * Applies one batch to projection.category_counts by the products it moved: each product that
 * left a category (its row before the batch) counts −1 there, each one now live in a category
 * +1, so a batch that moves no product between categories (most edits) touches no count, and
 * none counts every product of a category again (tens of milliseconds a category at a million
 * listings). Categories whose own row changed (created, renamed, deleted), and any the counts do
 * not hold yet, are counted afresh. Runs in the projector's transaction, under its write lock:
 * the counts it starts from are those of the projection it changes.
 */
export async function applyCategoryMoves(
  db: Queryable,
  moves: { left: readonly (string | null)[]; entered: readonly (string | null)[]; recount: readonly string[] },
  siteUrl: string,
  version: number,
): Promise<void> {
  const recount = new Set(moves.recount);
  const net = new Map<string, number>();
  for (const slug of moves.left) if (slug !== null) net.set(slug, (net.get(slug) ?? 0) - 1);
  for (const slug of moves.entered) if (slug !== null) net.set(slug, (net.get(slug) ?? 0) + 1);
  const moved = [...net].filter(([slug, n]) => n !== 0 && !recount.has(slug));
  if (moved.length > 0) {
    const { rows } = await db.query<CategoryRow>(
      `SELECT c.slug, c.name, c.noun, cc.count
         FROM catalog.categories c JOIN projection.category_counts cc ON cc.slug = c.slug
        WHERE c.slug = ANY($1::text[])`,
      [moved.map(([slug]) => slug)],
    );
    const held = new Map(rows.map((r) => [r.slug, r]));
    const next: CategoryRow[] = [];
    for (const [slug, n] of moved) {
      const row = held.get(slug);
      if (row) next.push({ ...row, count: row.count + n });
      else recount.add(slug);
    }
    await writeCounts(db, next, siteUrl, version);
  }
  if (recount.size > 0) await recomputeCategoryCounts(db, [...recount], siteUrl, version);
}

/** Upserts counts with their documents, leaving rows that would not change as they are. */
async function writeCounts(db: Queryable, rows: readonly CategoryRow[], siteUrl: string, version: number): Promise<void> {
  if (rows.length === 0) return;
  const records = rows.map((row) => ({ ...row, doc: buildCategoryDocument(row, siteUrl).doc }));
  await db.query(
    `INSERT INTO projection.category_counts AS cc (slug, name, noun, count, doc, version)
     SELECT r.slug, r.name, r.noun, r.count, r.doc, $2
       FROM jsonb_to_recordset($1::jsonb) AS r(slug text, name text, noun text, count int, doc text)
     ON CONFLICT (slug) DO UPDATE SET name = EXCLUDED.name, noun = EXCLUDED.noun, count = EXCLUDED.count,
       doc = EXCLUDED.doc, version = EXCLUDED.version
     WHERE (cc.name, cc.noun, cc.count, cc.doc) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.noun, EXCLUDED.count, EXCLUDED.doc)`,
    [JSON.stringify(records), version],
  );
}
