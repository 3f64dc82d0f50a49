import { withTransaction, type Pool } from '../src/db/pool.ts';
import type { SearchDocument, SearchIndex } from '../src/search/port.ts';
import { SEARCH_COLUMNS, searchDocumentOf, type SearchRow } from '../src/search/search-row.ts';
import type { Queryable } from './listing-source.ts';
import { SEARCH_WRITE_LOCK } from '../src/db/locks.ts';
import { comparePositions, readCheckpoint, readCommittedOutbox, writeCheckpoint } from './outbox-reader.ts';

async function loadSearchDocuments(db: Queryable, ids: readonly string[]): Promise<SearchDocument[]> {
  const { rows } = await db.query<SearchRow>(`SELECT ${SEARCH_COLUMNS} FROM projection.products WHERE id = ANY($1::uuid[])`, [ids]);
  return rows.map(searchDocumentOf);
}

/** Sends listings to the index as the projection holds them: upserted when there, else removed. */
async function sendListings(db: Queryable, index: SearchIndex, ids: readonly string[]): Promise<void> {
  const docs = ids.length ? await loadSearchDocuments(db, ids) : [];
  const present = new Set(docs.map((d) => d.id));
  const absent = ids.filter((id) => !present.has(id));
  if (docs.length) await index.upsert(docs);
  if (absent.length) await index.remove(absent);
}

/**
 * Feeds the external search index one batch of what the projection already committed: the
 * outbox rows between the 'search' and the 'projection' checkpoints name the listings; each is
 * upserted from projection.products when there, removed from the index otherwise. The 'search'
 * checkpoint moves only after the index confirmed the batch, so a crash replays it (upserts and
 * removals by id are idempotent). Returns the number of outbox rows covered, 0 when caught up
 * or when a reindex holds the index.
 */
async function syncSearchBatch(pool: Pool, index: SearchIndex, batchSize: number): Promise<number> {
  const covered = await withTransaction(pool, { tryLock: SEARCH_WRITE_LOCK }, async (client, tx) => {
    const from = await readCheckpoint(client, 'search');
    const to = await readCheckpoint(client, 'projection');
    const rows = comparePositions(from, to) >= 0 ? [] : await readCommittedOutbox(client, from, batchSize, to);
    if (rows.length === 0) {
      tx.rollbackOnReturn();
      return 0;
    }
    await sendListings(client, index, [...new Set(rows.flatMap((r) => (r.listing_id ? [r.listing_id] : [])))]);
    await writeCheckpoint(client, 'search', rows[rows.length - 1]!);
    return rows.length;
  });
  return covered ?? 0;
}

/**
 * Sends the given listings to the external index as the projection now holds them (upserted, or
 * removed when absent), for the interactive lane: its rows wait for the main lane's checkpoint
 * before syncSearchBatch reaches them, which an import may hold back for a while. Idempotent,
 * like that feed, which sends them again later. Skipped while a reindex holds the index (the
 * feed brings them then).
 */
export async function syncSearchListings(pool: Pool, index: SearchIndex, ids: readonly string[]): Promise<void> {
  await withTransaction(pool, { tryLock: SEARCH_WRITE_LOCK }, (client) => sendListings(client, index, ids));
}

/**
 * Feeds the external index batch after batch (syncSearchBatch) until it has every change the
 * projection committed. Resolves to false when `active` said stop before that.
 */
export async function syncSearchIndex(pool: () => Pool, index: SearchIndex, batchSize: number, active: () => boolean): Promise<boolean> {
  for (;;) {
    if (!active()) return false;
    if ((await syncSearchBatch(pool(), index, batchSize)) < batchSize) return true;
  }
}
