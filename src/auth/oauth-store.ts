import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Pool } from '../db/pool.ts';
import { hashTokenHex } from './secret-token.ts';

/**
 * The authorization server's storage in PostgreSQL (auth.oauth_records), so every API process
 * sees the same codes, refresh tokens, grants and registered clients, and a restart loses none.
 *
 * Codes, refresh tokens, sessions and interactions are bearer secrets: their ids are stored only
 * as SHA-256 hashes, and every copy of the id the library keeps in the payload (`jti`, and the
 * resume URL of an interaction, which ends with its id) is replaced by a marker before writing
 * and put back from the presented id when read. Clients and grants keep their ids (a client id is
 * public; a grant id is a handle, never a credential).
 *
 * Two lifetimes are ours rather than the library's:
 * - a dynamically registered client expires when unused for `clientIdleSeconds` (each lookup
 *   counts as use), so abandoned registrations do not pile up;
 * - a grant lives as long as its newest refresh token: issuing one extends the grant, so a client
 *   holding offline_access stays connected until the maker disconnects it.
 */
const PLAIN_ID_KINDS = new Set(['Client', 'Grant']);

export interface OAuthStoreOptions {
  pool: Pool;
  /** A dynamically registered client unused this long is forgotten. */
  clientIdleSeconds: number;
}

/** Stands for the record's own id inside a stored payload (see above). */
const OWN_ID = 'urn:catalog:oauth-record-id';

function hideOwnId(json: string, id: string): string {
  return json.split(id).join(OWN_ID);
}

function restoreOwnId(json: string, id: string): string {
  return json.split(OWN_ID).join(id);
}

/** How often a lookup refreshes a client's last use (saves a write per token request). */
const CLIENT_TOUCH_SECONDS = 3600;

function keyOf(kind: string, id: string): string {
  return PLAIN_ID_KINDS.has(kind) ? id : hashTokenHex(id);
}

export function createOAuthStore(opts: OAuthStoreOptions): new (name: string) => Adapter {
  const { pool } = opts;

  return class OAuthStore implements Adapter {
    readonly kind: string;

    constructor(kind: string) {
      this.kind = kind;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const stored: AdapterPayload = { ...payload };
      if (!PLAIN_ID_KINDS.has(this.kind) && stored.jti === id) delete stored.jti;
      const json = PLAIN_ID_KINDS.has(this.kind) ? JSON.stringify(stored) : hideOwnId(JSON.stringify(stored), id);
      const uidKey = payload.uid ? hashTokenHex(payload.uid) : null;
      const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
      await pool.query(
        `INSERT INTO auth.oauth_records (kind, id_key, payload, grant_id, uid_key, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (kind, id_key) DO UPDATE
           SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid_key = EXCLUDED.uid_key,
               expires_at = CASE WHEN $1 = 'Grant' THEN greatest(auth.oauth_records.expires_at, EXCLUDED.expires_at)
                                 ELSE EXCLUDED.expires_at END`,
        [this.kind, keyOf(this.kind, id), json, payload.grantId ?? null, uidKey, expiresAt],
      );
      if (this.kind === 'RefreshToken' && payload.grantId && expiresAt) {
        await pool.query(
          `UPDATE auth.oauth_records SET expires_at = $2
           WHERE kind = 'Grant' AND id_key = $1 AND expires_at IS NOT NULL AND expires_at < $2`,
          [payload.grantId, expiresAt],
        );
      }
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const { rows } = await pool.query<{ payload: AdapterPayload; expires_at: Date | null; consumed_at: Date | null; last_used_at: Date }>(
        `SELECT payload, expires_at, consumed_at, last_used_at FROM auth.oauth_records
         WHERE kind = $1 AND id_key = $2 AND (expires_at IS NULL OR expires_at > now())`,
        [this.kind, keyOf(this.kind, id)],
      );
      const row = rows[0];
      if (!row) return undefined;
      if (this.kind === 'Client') {
        const idleSeconds = (Date.now() - row.last_used_at.getTime()) / 1000;
        if (idleSeconds > opts.clientIdleSeconds) {
          await this.destroy(id);
          return undefined;
        }
        if (idleSeconds > CLIENT_TOUCH_SECONDS) {
          await pool.query(`UPDATE auth.oauth_records SET last_used_at = now() WHERE kind = 'Client' AND id_key = $1`, [id]);
        }
      }
      const payload: AdapterPayload = PLAIN_ID_KINDS.has(this.kind) ? { ...row.payload } : (JSON.parse(restoreOwnId(JSON.stringify(row.payload), id)) as AdapterPayload);
      if (!PLAIN_ID_KINDS.has(this.kind) && payload.jti === undefined) payload.jti = id;
      if (row.consumed_at) payload.consumed = Math.floor(row.consumed_at.getTime() / 1000);
      // A grant's stored expiry moves forward with its refresh tokens (see above).
      if (this.kind === 'Grant' && row.expires_at) payload.exp = Math.floor(row.expires_at.getTime() / 1000);
      return payload;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      // Used only to read a session's account and grants; the session's own id is known only
      // hashed, and these reads never need it.
      const { rows } = await pool.query<{ payload: AdapterPayload }>(
        `SELECT payload FROM auth.oauth_records WHERE kind = $1 AND uid_key = $2 AND (expires_at IS NULL OR expires_at > now())`,
        [this.kind, hashTokenHex(uid)],
      );
      return rows[0]?.payload;
    }

    async findByUserCode(): Promise<undefined> {
      // The device flow is not enabled: there are no user codes.
      return undefined;
    }

    async consume(id: string): Promise<void> {
      await pool.query(`UPDATE auth.oauth_records SET consumed_at = now() WHERE kind = $1 AND id_key = $2 AND consumed_at IS NULL`, [
        this.kind,
        keyOf(this.kind, id),
      ]);
    }

    async destroy(id: string): Promise<void> {
      await pool.query('DELETE FROM auth.oauth_records WHERE kind = $1 AND id_key = $2', [this.kind, keyOf(this.kind, id)]);
      // The library destroys a grant when it revokes it (a spent refresh token or a code used
      // twice): the app is then disconnected, and its access tokens refused from the next call.
      if (this.kind === 'Grant') {
        await pool.query('UPDATE auth.grants SET revoked_at = now() WHERE grant_id = $1 AND revoked_at IS NULL', [id]);
      }
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await pool.query('DELETE FROM auth.oauth_records WHERE kind = $1 AND grant_id = $2', [this.kind, grantId]);
    }
  };
}

/**
 * Spends an authorization code that its own client presented with a PKCE verifier that does not
 * match its challenge (`challengeOfVerifier`: the S256 of the verifier presented, or null when
 * none was). One statement, so only one caller ever spends a code: returns the code's grant id
 * when this call spent it, null when the code is unknown, expired, another client's, already
 * spent, or the verifier matches after all.
 */
export async function spendCodeOnWrongVerifier(pool: Pool, code: string, clientId: string, challengeOfVerifier: string | null): Promise<string | null> {
  const { rows } = await pool.query<{ grant_id: string | null }>(
    `UPDATE auth.oauth_records SET consumed_at = now()
     WHERE kind = 'AuthorizationCode' AND id_key = $1 AND consumed_at IS NULL
       AND (expires_at IS NULL OR expires_at > now())
       AND payload->>'clientId' = $2 AND payload->>'codeChallenge' IS DISTINCT FROM $3
     RETURNING grant_id`,
    [hashTokenHex(code), clientId, challengeOfVerifier],
  );
  return rows[0]?.grant_id ?? null;
}

/** Deletes expired records and idle registered clients. Run now and then by the leader. */
export async function pruneOAuthRecords(pool: Pool, clientIdleSeconds: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM auth.oauth_records
     WHERE (expires_at IS NOT NULL AND expires_at < now() - interval '1 hour')
        OR (kind = 'Client' AND last_used_at < now() - make_interval(secs => $1))`,
    [clientIdleSeconds],
  );
  await pool.query(`DELETE FROM auth.refresh_replays WHERE expires_at < now()`);
  return rowCount ?? 0;
}
