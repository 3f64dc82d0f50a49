import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Pool } from '../db/pool.ts';

/**
 * Keys the service makes for itself on first start and every process shares: the ES256 key
 * that signs access tokens (API processes verify with its public half) and the keys that sign
 * the authorization server's cookies. Made once, stored in auth.service_keys; whichever process
 * starts first writes them and the others read the same row.
 */
export interface ServiceKeys {
  /** Private signing keys, newest first, as the authorization server takes them. */
  readonly signingKeys: readonly JWK[];
  /** The public halves, for verifying access tokens. */
  readonly publicKeys: readonly JWK[];
  readonly cookieKeys: readonly string[];
}

async function newSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, alg: 'ES256', use: 'sig', kid: await calculateJwkThumbprint(jwk) };
}

async function loadOrCreate<T>(pool: Pool, name: string, make: () => Promise<T>): Promise<T> {
  const existing = await pool.query<{ value: T }>('SELECT value FROM auth.service_keys WHERE name = $1', [name]);
  if (existing.rows[0]) return existing.rows[0].value;
  await pool.query('INSERT INTO auth.service_keys (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, JSON.stringify(await make())]);
  const stored = await pool.query<{ value: T }>('SELECT value FROM auth.service_keys WHERE name = $1', [name]);
  return stored.rows[0]!.value;
}

export async function loadServiceKeys(pool: Pool): Promise<ServiceKeys> {
  const signingKeys = await loadOrCreate(pool, 'token_signing_keys', async () => [await newSigningKey()]);
  const cookieKeys = await loadOrCreate(pool, 'cookie_keys', async () => [randomBytes(32).toString('base64url')]);
  const publicKeys = signingKeys.map(({ kty, crv, x, y, alg, use, kid }) => ({ kty, crv, x, y, alg, use, kid }));
  return { signingKeys, publicKeys, cookieKeys };
}
