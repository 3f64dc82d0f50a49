import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importCatalog } from '../../../src/catalog/import/import-catalog.ts';
import type { PoolClient } from '../../../src/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

/**
 * The outbox is how the projector learns of changes: every change to what a listing or a
 * category shows publicly appends a row in the same transaction, and nothing else does.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("INSERT INTO catalog.categories (slug, name, noun) VALUES ('design', 'Design', 'resources')");
});
afterAll(async () => {
  await db?.drop();
});

interface OutboxRow {
  seq: number;
  txid: string;
  listing_id: string | null;
  category_slug: string | null;
}

/** Runs fn in a transaction; returns its txid, the outbox rows it appended (as seen inside it) and fn's result. */
async function inTransaction<T>(fn: (c: PoolClient) => Promise<T>, end: 'COMMIT' | 'ROLLBACK' = 'COMMIT') {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    const txid = (await client.query<{ txid: string }>('SELECT pg_current_xact_id()::text AS txid')).rows[0]!.txid;
    const before = (await client.query<{ max: number }>('SELECT coalesce(max(seq), 0)::int AS max FROM catalog.outbox')).rows[0]!.max;
    const value = await fn(client);
    const rows = (
      await client.query<OutboxRow>('SELECT seq, txid::text, listing_id, category_slug FROM catalog.outbox WHERE seq > $1 ORDER BY seq', [before])
    ).rows;
    await client.query(end);
    return { txid, rows, value };
  } finally {
    client.release();
  }
}

async function insertListing(c: PoolClient, slug: string): Promise<string> {
  const { rows } = await c.query<{ id: string }>(
    `INSERT INTO catalog.listings (slug, name, punchline, description, website, category, status)
     VALUES ($1, 'Name', 'Punchline', '<p>x</p>', 'https://x.example', 'design', 'live') RETURNING id`,
    [slug],
  );
  return rows[0]!.id;
}

async function outboxFor(listingId: string): Promise<number> {
  return (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog.outbox WHERE listing_id = $1', [listingId])).rows[0]!.n;
}

describe('the outbox', () => {
  it('gets a row with the transaction id when a listing is inserted or its public fields change', async () => {
    const inserted = await inTransaction((c) => insertListing(c, 'outbox-insert'));
    expect(inserted.rows).toEqual([{ seq: expect.any(Number), txid: inserted.txid, listing_id: inserted.value, category_slug: null }]);

    const updated = await inTransaction((c) => c.query("UPDATE catalog.listings SET name = 'Renamed' WHERE id = $1", [inserted.value]));
    expect(updated.rows).toEqual([{ seq: expect.any(Number), txid: updated.txid, listing_id: inserted.value, category_slug: null }]);
    expect(updated.rows[0]!.seq).toBeGreaterThan(inserted.rows[0]!.seq);

    const hidden = await inTransaction((c) => c.query("UPDATE catalog.listings SET status = 'hidden' WHERE id = $1", [inserted.value]));
    expect(hidden.rows).toHaveLength(1);
  });

  it('gets no row when only review feedback changes, or nothing changes', async () => {
    const id = (await inTransaction((c) => insertListing(c, 'outbox-feedback'))).value;
    const feedback = await inTransaction((c) => c.query("UPDATE catalog.listings SET review_feedback = 'Add a cover' WHERE id = $1", [id]));
    expect(feedback.rows).toEqual([]);
    const same = await inTransaction((c) => c.query('UPDATE catalog.listings SET name = name, updated_at = now() WHERE id = $1', [id]));
    expect(same.rows).toEqual([]);
    expect(await outboxFor(id)).toBe(1);
  });

  it('keeps no row of a rolled-back change', async () => {
    const rolledBack = await inTransaction((c) => insertListing(c, 'outbox-rollback'), 'ROLLBACK');
    expect(rolledBack.rows).toHaveLength(1); // visible inside the transaction...
    expect(await outboxFor(rolledBack.value)).toBe(0); // ...and gone with it

    const id = (await inTransaction((c) => insertListing(c, 'outbox-rollback-update'))).value;
    await inTransaction((c) => c.query("UPDATE catalog.listings SET punchline = 'Changed' WHERE id = $1", [id]), 'ROLLBACK');
    expect(await outboxFor(id)).toBe(1);
  });

  it('gets a row with the category slug when a category is inserted or renamed', async () => {
    const inserted = await inTransaction((c) =>
      c.query("INSERT INTO catalog.categories (slug, name, noun) VALUES ('outbox-category', 'Outbox', 'things')"),
    );
    expect(inserted.rows).toEqual([{ seq: expect.any(Number), txid: inserted.txid, listing_id: null, category_slug: 'outbox-category' }]);
    const renamed = await inTransaction((c) => c.query("UPDATE catalog.categories SET name = 'Outbox 2' WHERE slug = 'outbox-category'"));
    expect(renamed.rows.map((r) => r.category_slug)).toEqual(['outbox-category']);
  });

  it('gets one row per listing an import writes, all in the import transaction', async () => {
    const lines = ['a', 'b', 'c'].map((s) =>
      JSON.stringify({ kind: 'listing', slug: `outbox-import-${s}`, name: s, punchline: s, description: s, website: 'https://x.example' }),
    );
    const before = (await db.pool.query<{ max: number }>('SELECT coalesce(max(seq), 0)::int AS max FROM catalog.outbox')).rows[0]!.max;
    expect((await importCatalog(db.pool, lines, { batchSize: 2 })).ok).toBe(true);
    const { rows } = await db.pool.query<{ txid: string; slug: string }>(
      'SELECT o.txid::text, l.slug FROM catalog.outbox o JOIN catalog.listings l ON l.id = o.listing_id WHERE o.seq > $1 ORDER BY o.seq',
      [before],
    );
    expect(rows.map((r) => r.slug)).toEqual(['outbox-import-a', 'outbox-import-b', 'outbox-import-c']);
    expect(new Set(rows.map((r) => r.txid)).size).toBe(1);
  });
});
