import type { Pool } from '../db/pool.ts';
import { findOrCreateMaker, type Maker } from './makers.ts';
import { hashToken, newSecretToken } from './secret-token.ts';

/**
 * E-mailed sign-in links: random, single use, valid 15 minutes, stored only as a hash. The
 * address needs no account beforehand (the account is made when the link is used), so asking
 * for a link tells nothing about whether an address has one.
 */
export const SIGN_IN_LINK_SECONDS = 15 * 60;
const SIGN_IN_PATH = '/signin';

/** A path on this site to continue to after signing in; anything else is dropped. */
export function safeReturnTo(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2000) return undefined;
  // Only a local absolute path: never //host, /\host or a scheme, which would leave the site.
  if (!/^\/(?![/\\])[\x21-\x7e]*$/.test(value)) return undefined;
  return value;
}

export async function createSignInLink(pool: Pool, publicUrl: string, email: string, returnTo: string | undefined, now = new Date()): Promise<string> {
  const token = newSecretToken();
  await pool.query('INSERT INTO catalog.sign_in_links (token_hash, email, return_to, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)', [
    hashToken(token),
    email,
    safeReturnTo(returnTo) ?? null,
    now,
    new Date(now.getTime() + SIGN_IN_LINK_SECONDS * 1000),
  ]);
  return `${publicUrl}${SIGN_IN_PATH}/link/${token}`;
}

export type LinkCheck =
  | { status: 'valid'; email: string }
  | { status: 'used' | 'expired' | 'unknown' };

/** What a link holds, without using it (the page that asks to confirm the sign-in). */
export async function checkSignInLink(pool: Pool, token: string): Promise<LinkCheck> {
  const { rows } = await pool.query<{ email: string; expired: boolean; used: boolean }>(
    'SELECT email, expires_at <= now() AS expired, used_at IS NOT NULL AS used FROM catalog.sign_in_links WHERE token_hash = $1',
    [hashToken(token)],
  );
  const row = rows[0];
  if (!row) return { status: 'unknown' };
  if (row.used) return { status: 'used' };
  if (row.expired) return { status: 'expired' };
  return { status: 'valid', email: row.email };
}

/**
 * Uses a link: marks it used (at most once, even when two requests race) and returns the
 * account it signs in, made if needed, and where to continue.
 */
export async function useSignInLink(pool: Pool, token: string): Promise<{ status: 'signed_in'; maker: Maker; returnTo: string | undefined } | { status: 'used' | 'expired' | 'unknown' }> {
  const { rows } = await pool.query<{ email: string; return_to: string | null }>(
    `UPDATE catalog.sign_in_links SET used_at = now()
     WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
     RETURNING email, return_to`,
    [hashToken(token)],
  );
  const row = rows[0];
  if (!row) {
    const check = await checkSignInLink(pool, token);
    return { status: check.status === 'valid' ? 'used' : check.status };
  }
  const maker = await findOrCreateMaker(pool, row.email);
  await pool.query('UPDATE catalog.makers SET last_sign_in_at = now() WHERE id = $1', [maker.id]);
  return { status: 'signed_in', maker, returnTo: row.return_to ?? undefined };
}
