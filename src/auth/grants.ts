import type { Pool } from '../db/pool.ts';
import { withTransaction } from '../db/pool.ts';

/**
 * Connected apps: the grants makers approved on the consent page. The authorization server keeps
 * its own record of each grant (auth.oauth_records); this table is what the maker sees and what
 * API processes look up on every call that carries a token (one primary-key read), so a revoked
 * grant's tokens stop working from the very next call in every process, reads included.
 */
export interface ConnectedApp {
  readonly grantId: string;
  readonly clientId: string;
  readonly clientName: string;
  readonly clientSite: string | null;
  readonly clientKind: 'metadata_document' | 'registered';
  readonly scopes: readonly string[];
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

export async function recordGrant(
  pool: Pool,
  grant: { grantId: string; makerId: string; clientId: string; clientName: string; clientSite: string | null; clientKind: ConnectedApp['clientKind']; scopes: readonly string[] },
): Promise<void> {
  await pool.query(
    `INSERT INTO auth.grants (grant_id, maker_id, client_id, client_name, client_site, client_kind, scopes)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [grant.grantId, grant.makerId, grant.clientId, grant.clientName, grant.clientSite, grant.clientKind, grant.scopes],
  );
}

/** The maker's apps that can still act: not disconnected, and their grant not expired. */
export async function listConnectedApps(pool: Pool, makerId: string): Promise<ConnectedApp[]> {
  const { rows } = await pool.query<{
    grant_id: string;
    client_id: string;
    client_name: string;
    client_site: string | null;
    client_kind: ConnectedApp['clientKind'];
    scopes: string[];
    created_at: Date;
    last_used_at: Date | null;
  }>(
    `SELECT g.grant_id, g.client_id, g.client_name, g.client_site, g.client_kind, g.scopes, g.created_at, g.last_used_at
     FROM auth.grants g
     JOIN auth.oauth_records r ON r.kind = 'Grant' AND r.id_key = g.grant_id AND (r.expires_at IS NULL OR r.expires_at > now())
     WHERE g.maker_id = $1 AND g.revoked_at IS NULL
     ORDER BY g.created_at DESC`,
    [makerId],
  );
  return rows.map((r) => ({
    grantId: r.grant_id,
    clientId: r.client_id,
    clientName: r.client_name,
    clientSite: r.client_site,
    clientKind: r.client_kind,
    scopes: r.scopes,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
  }));
}

/**
 * Disconnect: the grant is revoked and every code and refresh token issued under it deleted, in
 * one transaction. Access tokens are JWTs that cannot be deleted; API processes refuse them
 * because their grant is revoked. Returns false when the grant is not this maker's (or gone).
 */
export async function disconnectApp(pool: Pool, makerId: string, grantId: string): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const { rowCount } = await client.query('UPDATE auth.grants SET revoked_at = now() WHERE grant_id = $1 AND maker_id = $2 AND revoked_at IS NULL', [grantId, makerId]);
    if (!rowCount) return false;
    await client.query(`DELETE FROM auth.oauth_records WHERE grant_id = $1 OR (kind = 'Grant' AND id_key = $1)`, [grantId]);
    return true;
  });
}
