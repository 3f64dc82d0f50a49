import type { PoolClient } from '../../db/pool.ts';
import { BULK_WRITE_LOCK } from '../../db/locks.ts';

/**
 * Marks the caller's open transaction as bulk, before its first write: its outbox rows are
 * `bulk` (migration 013), and it holds BULK_WRITE_LOCK so the projector's interactive lane does
 * not wait for it to end. Both together or neither: the interactive lane passes over a running
 * holder of the lock, so a holder must write nothing but bulk rows. The setting and the lock
 * last until the transaction ends.
 */
export async function markBulkTransaction(client: Pick<PoolClient, 'query'>): Promise<void> {
  await client.query(`SELECT set_config('catalog.bulk', 'on', true), pg_advisory_xact_lock_shared($1)`, [BULK_WRITE_LOCK]);
}
