import type { Pool } from '../../db/pool.ts';
import { websiteIdentity } from '../../sites/website-identity.ts';

/**
 * Listings written before website identities existed (or by an import) get theirs here, in
 * batches, when a service process starts: duplicate detection compares identities, and the
 * normalisation lives in code (src/sites/website-identity.ts), not in SQL.
 */
export async function fillWebsiteKeys(pool: Pool, batchSize = 1000): Promise<number> {
  let filled = 0;
  for (;;) {
    const { rows } = await pool.query<{ id: string; website: string }>('SELECT id, website FROM catalog.listings WHERE website_key IS NULL LIMIT $1', [batchSize]);
    if (rows.length === 0) return filled;
    const keys = rows.map((r) => {
      try {
        return websiteIdentity(r.website);
      } catch {
        // an unparseable address (older data) is its own identity, so it is never filled twice
        return r.website.trim().toLowerCase();
      }
    });
    await pool.query(
      `UPDATE catalog.listings l SET website_key = k.key FROM unnest($1::uuid[], $2::text[]) AS k(id, key) WHERE l.id = k.id`,
      [rows.map((r) => r.id), keys],
    );
    filled += rows.length;
  }
}
