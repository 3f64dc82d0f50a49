import { withTransaction, type Pool, type PoolClient } from '../src/db/pool.ts';
import type { SearchDocument, SearchIndex } from '../src/search/port.ts';
import { recomputeCategoryCounts } from './category-counts.ts';
import { recordRebuildChanges } from './change-log.ts';
import { LISTING_COLUMNS, type ListingRow } from './listing-source.ts';
import { PROJECTION_WRITE_LOCK, SEARCH_WRITE_LOCK } from '../src/db/locks.ts';
import { silentLog, type Log } from '../src/util/log.ts';
import { comparePositions, committedOutboxEnd, readCheckpoint, writeCheckpoint, type OutboxPosition } from './outbox-reader.ts';
import { buildProductDocument, utcDate, type ProductDocument } from './product-document.ts';
import { notifyProjectionChanged, nextVersion, recordRemoved, writeProducts } from './projection-store.ts';
import { SEARCH_COLUMNS, searchDocumentOf } from '../src/search/search-row.ts';

export interface ReindexOptions {
  pool: Pool;
  siteUrl: string;
  /** Keep the site url the projection was built with, when there is one (see ProjectorOptions). */
  keepRecordedSiteUrl?: boolean;
  /** The external search index (Meilisearch); undefined in embedded mode. */
  searchIndex?: SearchIndex;
  batchSize?: number;
  now?: () => Date;
  log?: Log;
  /** Called as the rebuild advances: phase, items done, items in total. */
  onProgress?: (phase: 'projection' | 'search', done: number, total: number) => void;
}

export interface ReindexSummary {
  /** Projection version the rebuild committed. */
  version: number;
  /** Live products in the projection. */
  products: number;
  /** Products that were in the projection and no longer are. */
  removed: number;
  /** Differences the public catalog saw (upserts and deletes added to the change log). */
  changes: number;
  categories: number;
  /** Documents sent to the external search index; undefined without one. */
  searchDocuments: number | undefined;
  durationMs: number;
}

async function* fetchCursor<T extends object>(client: PoolClient, cursor: string, batchSize: number): AsyncGenerator<T[]> {
  for (;;) {
    const { rows } = await client.query<T>(`FETCH ${batchSize} FROM ${cursor}`);
    if (rows.length === 0) return;
    yield rows;
  }
}

/**
 * Rebuilds projection.products and projection.category_counts from the write model in ONE
 * transaction under PROJECTION_WRITE_LOCK: readers see the old projection until it commits,
 * then the new one, never a partial or empty catalog. Rows that did not change keep their
 * version, so API processes reload only what moved, and the change log gets only the public
 * differences. The 'projection' checkpoint moves to the
 * end of the committed outbox (everything before it is reflected); without an external index
 * the 'search' checkpoint follows it.
 */
export async function rebuildProjection(
  opts: Omit<ReindexOptions, 'searchIndex'> & { externalSearch: boolean },
): Promise<Omit<ReindexSummary, 'searchDocuments' | 'durationMs'>> {
  const { pool, siteUrl } = opts;
  const log = opts.log ?? silentLog;
  const batchSize = opts.batchSize ?? 500;
  const today = utcDate((opts.now ?? (() => new Date()))());
  return withTransaction(pool, { lock: PROJECTION_WRITE_LOCK }, async (client) => {
    // Before reading the write model: every row up to this end is then reflected.
    const end = await committedOutboxEnd(client);
    const { rows: totals } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.listings WHERE status = 'live'`);
    const total = totals[0]?.n ?? 0;
    const version = await nextVersion(client, siteUrl);
    // What the catalog showed before, slug by slug: the change log gets only the differences,
    // so a rebuild that changes nothing public adds nothing and every cursor stays valid.
    await client.query(`CREATE TEMP TABLE reindex_before ON COMMIT DROP AS
      SELECT id, slug, sha256(convert_to(doc, 'UTF8')) AS doc_sha256 FROM projection.products`);
    await client.query('CREATE TEMP TABLE reindex_live (id uuid PRIMARY KEY) ON COMMIT DROP');
    // A cursor reads every live listing at one snapshot, a page at a time.
    await client.query(`DECLARE reindex_listings NO SCROLL CURSOR FOR
      SELECT ${LISTING_COLUMNS} FROM catalog.listings l WHERE l.status = 'live'`);
    let done = 0;
    let products = 0;
    opts.onProgress?.('projection', 0, total);
    for await (const rows of fetchCursor<ListingRow>(client, 'reindex_listings', batchSize)) {
      const docs: ProductDocument[] = [];
      for (const row of rows) {
        try {
          docs.push(buildProductDocument(row, siteUrl, today));
        } catch (err) {
          log.error({ err, listingId: row.id }, 'listing is live but does not form a valid Product; left out of the projection');
        }
      }
      // A row still holding one of these slugs for another listing is stale: that listing moved
      // to another slug (its page rewrites it) or left live (deleted below).
      await client.query(
        `DELETE FROM projection.products p USING unnest($1::text[], $2::uuid[]) AS n(slug, id)
          WHERE p.slug = n.slug AND p.id <> n.id`,
        [docs.map((d) => d.product.slug), docs.map((d) => d.product.id)],
      );
      await writeProducts(client, docs, version, { onlyChanged: true });
      await client.query('INSERT INTO reindex_live SELECT unnest($1::uuid[])', [docs.map((d) => d.product.id)]);
      done += rows.length;
      products += docs.length;
      opts.onProgress?.('projection', done, Math.max(total, done));
    }
    await client.query('CLOSE reindex_listings');
    await client.query('DELETE FROM projection.products p WHERE NOT EXISTS (SELECT 1 FROM reindex_live r WHERE r.id = p.id)');
    const { rows: removedRows } = await client.query<{ id: string }>(
      'SELECT b.id FROM reindex_before b WHERE NOT EXISTS (SELECT 1 FROM projection.products p WHERE p.id = b.id)',
    );
    await recordRemoved(
      client,
      removedRows.map((r) => r.id),
      version,
    );
    const changes = await recordRebuildChanges(client, 'reindex_before', version);
    await recomputeCategoryCounts(client, 'all', siteUrl, version);
    const { rows: cats } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM projection.category_counts');
    const current = await readCheckpoint(client, 'projection');
    const to: OutboxPosition = end && comparePositions(end, current) > 0 ? end : current;
    await writeCheckpoint(client, 'projection', to);
    if (!opts.externalSearch) await writeCheckpoint(client, 'search', to);
    await notifyProjectionChanged(client, version);
    return { version, products, removed: removedRows.length, categories: cats[0]?.n ?? 0, changes };
  });
}

/**
 * Replaces the external search index's whole content with the projection (the index swaps
 * atomically for its readers), then sets the 'search' checkpoint to the projection checkpoint
 * read before the documents: the projector replays anything after it, idempotently.
 */
export async function rebuildSearchIndex(
  pool: Pool,
  index: SearchIndex,
  opts: { batchSize?: number; onProgress?: ReindexOptions['onProgress'] } = {},
): Promise<number> {
  const batchSize = opts.batchSize ?? 1000;
  return withTransaction(pool, { lock: SEARCH_WRITE_LOCK }, async (client) => {
    const at = await readCheckpoint(client, 'projection');
    const { rows: totals } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM projection.products');
    const total = totals[0]?.n ?? 0;
    await client.query(`DECLARE reindex_search NO SCROLL CURSOR FOR SELECT ${SEARCH_COLUMNS} FROM projection.products`);
    let done = 0;
    opts.onProgress?.('search', 0, total);
    await index.replaceAll(
      (async function* (): AsyncGenerator<SearchDocument[]> {
        for await (const rows of fetchCursor<Parameters<typeof searchDocumentOf>[0]>(client, 'reindex_search', batchSize)) {
          done += rows.length;
          yield rows.map(searchDocumentOf);
          opts.onProgress?.('search', done, Math.max(total, done));
        }
      })(),
    );
    await writeCheckpoint(client, 'search', at);
    await client.query(`UPDATE projection.checkpoints SET target = $1 WHERE name = 'search'`, [index.target]);
    return done;
  });
}

/** `catalog reindex`: the projection, then the external search index when there is one. */
export async function reindex(opts: ReindexOptions): Promise<ReindexSummary> {
  const started = performance.now();
  let siteUrl = opts.siteUrl;
  if (opts.keepRecordedSiteUrl) {
    const { rows } = await opts.pool.query<{ site_url: string | null }>('SELECT site_url FROM projection.state');
    siteUrl = rows[0]?.site_url ?? siteUrl;
  }
  const projection = await rebuildProjection({ ...opts, siteUrl, externalSearch: opts.searchIndex !== undefined });
  const searchDocuments = opts.searchIndex
    ? await rebuildSearchIndex(opts.pool, opts.searchIndex, { batchSize: opts.batchSize, onProgress: opts.onProgress })
    : undefined;
  return { ...projection, searchDocuments, durationMs: Math.round(performance.now() - started) };
}
