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
  if (rows.length > 0) {
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
  await db.query(
    `DELETE FROM projection.category_counts cc
      WHERE ($1 OR cc.slug = ANY($2::text[]))
        AND NOT EXISTS (SELECT 1 FROM catalog.categories c WHERE c.slug = cc.slug)`,
    [all, all ? [] : slugs],
  );
}
