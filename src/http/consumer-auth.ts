import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { ConsumerKey, KeyTable } from '../auth/consumer-keys/consumer-key-table.ts';
import { CatalogError, invalidKey } from '../contract/errors.ts';
import { ErrorCode } from '../contract/schemas.ts';
import { createKeyedLimiter, type KeyedLimiter } from '../util/keyed-limiter.ts';
import type { BudgetOwner } from './rate-limit.ts';

/**
 * Consumer keys on a request (docs/keys.md): `Authorization: Bearer ck_…` on /api/v1 and on
 * /api/mcp's read tools. A valid key's budgets are spent instead of the address's; any other
 * Authorization is refused with 401 INVALID_KEY and a `WWW-Authenticate: Bearer
 * error="invalid_token"` challenge, never served as anonymous. An address sending more than
 * INVALID_KEYS_PER_MINUTE invalid keys in a minute is answered 429 instead, so keys cannot be
 * guessed.
 */
export type RequestKey = { readonly ok: true; readonly key: ConsumerKey; readonly owner: BudgetOwner } | { readonly ok: false; readonly message: string };

export const INVALID_KEYS_PER_MINUTE = 20;

/** The consumer key a request is served under, set only on keyed requests (see keyOfRequest). */
export const REQUEST_KEY = Symbol('catalog.requestKey');

export interface KeyedRequest extends IncomingMessage {
  [REQUEST_KEY]?: ConsumerKey;
}

/** The consumer key whose budgets a request of the REST scope spends, when it has one. */
export function keyOfRequest(request: FastifyRequest): ConsumerKey | undefined {
  return (request.raw as KeyedRequest)[REQUEST_KEY];
}

export interface ConsumerAuth {
  readonly keys: KeyTable;
  /** The key of a request that carries an Authorization header (undefined when it carries none). */
  keyOf(headers: IncomingHttpHeaders, rawHeaders: readonly string[]): RequestKey | undefined;
  /** The error to answer a refused key with: 401, or 429 once the address has sent too many. */
  refusal(key: Extract<RequestKey, { ok: false }>, ip: string): Promise<CatalogError>;
}

/** The challenge of a 401 for a key (a header value: printable ASCII, no quotes inside the quoted string). */
export function keyChallenge(message: string): string {
  const description = message.replace(/…/g, '...').replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '');
  return `Bearer error="invalid_token", error_description="${description}"`;
}

/**
 * Whose budget a maker's MCP calls through a connected app spend: the grant's, with an
 * address's limits unless RATE_LIMIT_SIGNED_IN_*_PER_MIN set others.
 */
export function grantOwner(grantId: string, limits: { searchPerMinute: number; otherPerMinute: number }): BudgetOwner {
  return { id: `g:${grantId}`, limits: { search: limits.searchPerMinute, other: limits.otherPerMinute } };
}

function authorizationHeaders(rawHeaders: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') n++;
  }
  return n;
}

export function createConsumerAuth(keys: KeyTable, redis: Redis | undefined): ConsumerAuth {
  const owners = new WeakMap<ConsumerKey, BudgetOwner>();
  const ownerOf = (key: ConsumerKey): BudgetOwner => {
    let owner = owners.get(key);
    if (owner === undefined) owners.set(key, (owner = { id: `k:${key.id}`, limits: { ...key.limits }, usageKey: key.id }));
    return owner;
  };
  const guesses: KeyedLimiter = createKeyedLimiter({ keyPrefix: 'catalog:rl:invalid-key', points: INVALID_KEYS_PER_MINUTE, durationSeconds: 60, redis });
  return {
    keys,
    keyOf(headers, rawHeaders) {
      const authorization = headers.authorization;
      if (authorization === undefined) return undefined;
      // Node keeps the first of several Authorization headers: two are refused, never one picked.
      if (authorizationHeaders(rawHeaders) > 1) return { ok: false, message: 'Send one Authorization header: this request has several.' };
      const check = keys.check(authorization);
      return check.ok ? { ok: true, key: check.key, owner: ownerOf(check.key) } : { ok: false, message: check.message };
    },
    async refusal(key, ip) {
      const guess = await guesses.consume(ip).catch(() => ({ allowed: true, retryAfterSeconds: 0 }));
      if (guess.allowed) return invalidKey(key.message);
      return new CatalogError(
        ErrorCode.TOO_MANY_REQUESTS,
        429,
        `Too many requests with an invalid key from this address: check the key, and retry in about ${guess.retryAfterSeconds} s.`,
        { retryAfterSeconds: guess.retryAfterSeconds },
      );
    },
  };
}
