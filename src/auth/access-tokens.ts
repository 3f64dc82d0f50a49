import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWK } from 'jose';
import type { Logger } from 'pino';
import type { Pool } from '../db/pool.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import type { Caller } from './caller.ts';

/**
 * The MCP endpoint as a resource server. An access token is an ES256 JWT from this service's
 * authorization server: verified locally (signature, issuer, audience = the MCP URL, expiry,
 * type at+jwt), then its grant is looked up, so a disconnected app is refused from the very next
 * call, in every process. A request without a token is anonymous; a request WITH a token that is
 * not valid is refused, never served as anonymous (a credential is never ignored).
 */
type TokenCheck =
  | { ok: true; caller: Caller }
  | { ok: false; error: 'invalid_token' | 'invalid_request'; description: string };

export interface AccessTokenVerifier {
  /** Checks the Authorization header of a request (undefined when absent). */
  check(authorization: string | undefined): Promise<TokenCheck>;
}

/** How often a call refreshes its grant's "last used" time (saves a write per call). */
const LAST_USED_WRITE_MS = 60_000;

export function createAccessTokenVerifier(opts: { pool: Pool; issuer: string; audience: string; publicKeys: readonly JWK[]; log: Logger }): AccessTokenVerifier {
  const keys = createLocalJWKSet({ keys: [...opts.publicKeys] });
  const lastUsedWritten = new Map<string, number>();

  const touch = (grantId: string) => {
    const now = Date.now();
    if ((lastUsedWritten.get(grantId) ?? 0) > now - LAST_USED_WRITE_MS) return;
    lastUsedWritten.set(grantId, now);
    if (lastUsedWritten.size > 10_000) lastUsedWritten.clear();
    opts.pool.query('UPDATE auth.grants SET last_used_at = now() WHERE grant_id = $1', [grantId]).catch((err: unknown) => opts.log.warn({ err }, 'could not record when a connected app was last used'));
  };

  return {
    async check(authorization) {
      if (authorization === undefined) return { ok: true, caller: { kind: 'anonymous' } };
      const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization.trim());
      if (!match) return { ok: false, error: 'invalid_request', description: 'The Authorization header must be "Bearer" followed by an access token.' };
      let payload;
      try {
        ({ payload } = await jwtVerify(match[1]!, keys, {
          issuer: opts.issuer,
          audience: opts.audience,
          algorithms: ['ES256'],
          typ: 'at+jwt',
          clockTolerance: 5,
        }));
      } catch (err) {
        if (err instanceof joseErrors.JWTExpired) return { ok: false, error: 'invalid_token', description: 'The access token has expired.' };
        if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud') {
          return { ok: false, error: 'invalid_token', description: `The access token is not for this resource (${opts.audience}).` };
        }
        return { ok: false, error: 'invalid_token', description: 'The access token is not valid.' };
      }
      const { sub, client_id: clientId, scope, gid } = payload as { sub?: unknown; client_id?: unknown; scope?: unknown; gid?: unknown };
      if (typeof sub !== 'string' || typeof clientId !== 'string' || typeof gid !== 'string') {
        return { ok: false, error: 'invalid_token', description: 'The access token is not valid.' };
      }
      const scopes = new Set(typeof scope === 'string' ? scope.split(' ').filter(Boolean) : []);
      let grant: { maker_id: string; revoked: boolean } | undefined;
      try {
        ({ rows: [grant] } = await opts.pool.query<{ maker_id: string; revoked: boolean }>('SELECT maker_id, revoked_at IS NOT NULL AS revoked FROM auth.grants WHERE grant_id = $1', [gid]));
      } catch (err) {
        if (!isDatabaseUnavailable(err)) throw err;
        // The signature, issuer, audience and expiry are checked; only the revocation cannot
        // be. The public reads go on (they would be served without any token), and every maker
        // tool answers SERVICE_UNAVAILABLE until the grant can be looked up again.
        return { ok: true, caller: { kind: 'maker', makerId: sub, clientId, grantId: gid, scopes, grantUnchecked: true } };
      }
      if (!grant || grant.revoked || grant.maker_id !== sub) {
        return { ok: false, error: 'invalid_token', description: 'The access token was revoked: the app was disconnected. Sign in again.' };
      }
      touch(gid);
      return { ok: true, caller: { kind: 'maker', makerId: sub, clientId, grantId: gid, scopes } };
    },
  };
}
