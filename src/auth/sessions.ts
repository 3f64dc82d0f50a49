import type { Pool } from '../db/pool.ts';
import type { Maker } from './makers.ts';
import { hashToken, newSecretToken } from './secret-token.ts';

/**
 * Web sessions of signed-in makers. The cookie holds a random token; the database holds its
 * hash. A new token is made at every sign-in (a token planted before sign-in is never promoted),
 * and sign-out deletes the session.
 */
export const SESSION_COOKIE = 'catalog_session';
export const SESSION_SECONDS = 30 * 24 * 3600;
/** How often a request refreshes a session's last-seen time (saves a write per page). */
const TOUCH_SECONDS = 300;

export interface WebSession {
  readonly maker: Maker;
  /** The hash of the cookie's token: identifies the session without being usable as one. */
  readonly id: string;
}

export async function createSession(pool: Pool, makerId: string): Promise<{ token: string; expiresAt: Date }> {
  const token = newSecretToken();
  const expiresAt = new Date(Date.now() + SESSION_SECONDS * 1000);
  await pool.query('INSERT INTO catalog.sessions (token_hash, maker_id, expires_at) VALUES ($1, $2, $3)', [hashToken(token), makerId, expiresAt]);
  return { token, expiresAt };
}

export async function findSession(pool: Pool, token: string | undefined): Promise<WebSession | undefined> {
  if (!token || token.length > 200) return undefined;
  const hash = hashToken(token);
  const { rows } = await pool.query<{ id: string; email: string; is_admin: boolean; stale: boolean }>(
    `SELECT m.id, m.email, m.is_admin, s.last_seen_at < now() - make_interval(secs => $2) AS stale
     FROM catalog.sessions s JOIN catalog.makers m ON m.id = s.maker_id
     WHERE s.token_hash = $1 AND s.expires_at > now()`,
    [hash, TOUCH_SECONDS],
  );
  const row = rows[0];
  if (!row) return undefined;
  if (row.stale) await pool.query('UPDATE catalog.sessions SET last_seen_at = now() WHERE token_hash = $1', [hash]);
  return { maker: { id: row.id, email: row.email, isAdmin: row.is_admin }, id: hash.toString('hex') };
}

export async function endSession(pool: Pool, token: string | undefined): Promise<void> {
  if (!token) return;
  await pool.query('DELETE FROM catalog.sessions WHERE token_hash = $1', [hashToken(token)]);
}

export async function pruneSessions(pool: Pool): Promise<void> {
  await pool.query('DELETE FROM catalog.sessions WHERE expires_at < now()');
  await pool.query("DELETE FROM catalog.sign_in_links WHERE expires_at < now() - interval '1 day'");
}
