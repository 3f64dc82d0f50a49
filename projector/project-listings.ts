import { applyCategoryMoves } from './category-counts.ts';
import { catalogDifferences, recordChanges } from './change-log.ts';
import { loadListings, type ListingRow, type Queryable } from './listing-source.ts';
import type { Log } from '../src/util/log.ts';
import { buildProductDocument, type ProductDocument } from './product-document.ts';
import { deleteProducts, nextVersion, notifyProjectionChanged, recordRemoved, writeProducts } from './projection-store.ts';

export interface ProjectListingsInput {
  listingIds: readonly string[];
  /** Categories whose own row changed (created, renamed, deleted). */
  categorySlugs: readonly string[];
  siteUrl: string;
  /** yyyy-mm-dd, UTC. */
  today: string;
  /** When the oldest write-model change this projects was made (its outbox row), if any. */
  oldestChangeAt?: Date;
  /** The W3C traceparent of the batch's span, when traces are on. */
  traceparent?: string | undefined;
  log: Log;
}

export interface ProjectedListings {
  version: number;
  /** Products now in the projection (written by this call). */
  live: ProductDocument[];
  /** Listings not in the projection after this call (removed now, or absent already). */
  gone: string[];
}

function documentOf(row: ListingRow, input: ProjectListingsInput): ProductDocument | undefined {
  if (row.status !== 'live') return undefined;
  try {
    return buildProductDocument(row, input.siteUrl, input.today);
  } catch (err) {
    // One listing the contract rejects must not stop the whole projection: it stays out of
    // the public catalog, loudly, until the write model is corrected (which re-projects it).
    input.log.error({ err, listingId: row.id }, 'listing is live but does not form a valid Product; left out of the projection');
    return undefined;
  }
}

/**
 * Brings the projection of the given listings and categories in line with the write model's
 * current state, under a new version, and appends the public differences to the change log.
 * Runs inside the caller's transaction, which holds PROJECTION_WRITE_LOCK and commits (or not)
 * everything at once.
 */
export async function projectListings(db: Queryable, input: ProjectListingsInput): Promise<ProjectedListings> {
  const ids = new Set(input.listingIds);
  const docs = new Map<string, ProductDocument>();
  let toLoad = [...ids];
  // A listing may take a slug that another listing's projected row still holds (that listing
  // moved to another slug in a change not projected yet): project that one too, from its current
  // state, so the projection never holds two rows with one slug.
  while (toLoad.length > 0) {
    for (const row of await loadListings(db, toLoad)) {
      const doc = documentOf(row, input);
      if (doc) docs.set(row.id, doc);
    }
    const slugs = [...docs.values()].map((d) => d.product.slug);
    const { rows } = await db.query<{ id: string }>(
      'SELECT id FROM projection.products WHERE slug = ANY($1::text[]) AND NOT (id = ANY($2::uuid[]))',
      [slugs, [...ids]],
    );
    toLoad = rows.map((r) => r.id).filter((id) => !ids.has(id));
    for (const id of toLoad) ids.add(id);
  }

  const version = await nextVersion(db);
  // Delete then insert: within one transaction two listings may swap slugs.
  const before = await deleteProducts(db, [...ids]);
  const live = [...docs.values()];
  await writeProducts(db, live, version);
  const gone = [...ids].filter((id) => !docs.has(id));
  const goneSet = new Set(gone);
  await recordRemoved(
    db,
    before.filter((r) => goneSet.has(r.id)).map((r) => r.id),
    version,
  );

  // The public differences go to the change log in this transaction: `before` and `live` cover
  // every slug this batch could touch (the loop above brought in any listing holding a slug
  // one of them takes).
  await recordChanges(
    db,
    catalogDifferences(
      before,
      live.map((d) => ({ slug: d.product.slug, doc: d.doc })),
    ),
  );

  await applyCategoryMoves(
    db,
    { left: before.map((r) => r.category), entered: live.map((d) => d.product.category), recount: input.categorySlugs },
    input.siteUrl,
    version,
  );
  await notifyProjectionChanged(db, version, input.oldestChangeAt, input.traceparent);
  return { version, live, gone };
}
