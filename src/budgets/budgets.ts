import type { Caller } from '../auth/caller.ts';
import type { ConsumerKey, KeyCheck, KeyTable } from '../auth/consumer-keys/consumer-key-table.ts';
import { CatalogError, invalidKey } from '../contract/errors.ts';
import { ErrorCode } from '../contract/schemas.ts';
import { createKeyedLimiter, type KeyedLimiter } from '../util/keyed-limiter.ts';
import type { LeaseStore } from './lease-store.ts';
import { uncounted, type Bucket, type BudgetOwner, type Counted, type Verdict } from './verdict.ts';

/**
 * Request budgets, decided in one place for every road a request takes: the Fastify hook of the
 * REST API and the pages (src/http/budget-hook.ts), the direct read path beneath Fastify
 * (src/http/direct-reads.ts), the MCP route and its direct path (src/mcp), each read tool,
 * resource read and completion, and the change feed's check of a key after a long poll.
 *
 * What a request carries decides whose budget it spends:
 * - nothing: its address's (TRUST_PROXY read as Fastify reads it);
 * - an Authorization header (REST, and MCP when it holds `Bearer ck_…`): the consumer key's
 *   budgets, looked up in the process's key table (docs/keys.md). Any other value, a key that is
 *   malformed, unknown, revoked or expired, or several Authorization headers, is refused with
 *   401 INVALID_KEY and its `WWW-Authenticate: Bearer error="invalid_token"` challenge, never
 *   served as anonymous; an address sending more than INVALID_KEYS_PER_MINUTE of them in a
 *   minute is refused with 429 instead, so keys cannot be guessed;
 * - a maker signed in through a connected app (MCP, its access token checked by
 *   src/mcp/mcp-auth.ts): the grant's budgets, an address's unless RATE_LIMIT_SIGNED_IN_*_PER_MIN
 *   set others;
 * - an owner decided earlier in the same request (an MCP call's tools spend after the route
 *   decided who is calling).
 *
 * With a bucket, one unit of it is spent (lease-store.ts) and the verdict carries what the
 * RateLimit headers tell, a refusal being 429 TOO_MANY_REQUESTS with Retry-After until the
 * window ends. Without one, nothing is spent: the verdict says who is calling, or refuses its key.
 */
export interface Budgets {
  /** One unit of `bucket` spent by an owner decided earlier (or the address): always counted. */
  decide(bucket: Bucket, address: string, credential: BudgetOwner | Caller | undefined): Counted | Promise<Counted>;
  /** Who is calling, nothing spent, decided at once: a key checked again, a sign-in, an owner. */
  decide(bucket: undefined, address: string, credential: Credential): Verdict;
  /**
   * The budget verdict of a request: whose budget it spends (`owner`), and either that it goes
   * on (with what its RateLimit headers tell when a unit of `bucket` was spent) or the refusal
   * to send. Decided at once when it can be (the budget kept in this process, or its lease of a
   * Redis budget), else a promise of it.
   *
   * `rawHeaders`: the request's headers as it sent them, given when its credential arrives with
   * it: several Authorization headers are then refused (Node keeps the first, and one is never
   * picked), and a key refused is a guess of its address. Left out, a key is checked again (a
   * long poll's, after its wait): refused with 401, and no guess counted.
   */
  decide(bucket: Bucket | undefined, address: string, credential: Credential, rawHeaders?: readonly string[]): Verdict | Promise<Verdict>;
  /** The consumer keys, as this process holds them (reloaded whenever they change). */
  readonly keys: KeyTable;
  /** Where the budgets are counted: refusals per bucket, the Redis connection, keys' usage. */
  readonly store: LeaseStore;
}

/**
 * What a request carries: its Authorization header (read as a consumer key), a signed-in maker
 * (or anonymous), an owner decided earlier, or nothing.
 */
type Credential = string | Caller | BudgetOwner | undefined;

export const INVALID_KEYS_PER_MINUTE = 20;

export interface BudgetsOptions {
  store: LeaseStore;
  keys: KeyTable;
  /** A signed-in maker's budgets per grant (RATE_LIMIT_SIGNED_IN_*). */
  signedIn: { readonly searchPerMinute: number; readonly otherPerMinute: number };
}

const SEVERAL_HEADERS: KeyCheck = { ok: false, reason: 'malformed', message: 'Send one Authorization header: this request has several.' };

function authorizationHeaders(rawHeaders: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') n++;
  }
  return n;
}

/** An address that sent too many invalid keys this minute. */
function tooManyGuesses(retryAfterSeconds: number): CatalogError {
  return new CatalogError(
    ErrorCode.TOO_MANY_REQUESTS,
    429,
    `Too many requests with an invalid key from this address: check the key, and retry in about ${retryAfterSeconds} s.`,
    { retryAfterSeconds },
  );
}

export function createBudgets(opts: BudgetsOptions): Budgets {
  const { store, keys } = opts;
  const signedInLimits = { search: opts.signedIn.searchPerMinute, other: opts.signedIn.otherPerMinute };
  const guesses: KeyedLimiter = createKeyedLimiter({ keyPrefix: 'catalog:rl:invalid-key', points: INVALID_KEYS_PER_MINUTE, durationSeconds: 60, redis: store.redis });
  /** The verdict naming a key's owner, nothing spent: made once per key (the table makes a key anew when it changes). */
  const keyVerdicts = new WeakMap<ConsumerKey, Verdict>();
  const verdictOfKey = (key: ConsumerKey): Verdict => {
    let verdict = keyVerdicts.get(key);
    if (verdict === undefined) keyVerdicts.set(key, (verdict = uncounted({ id: `k:${key.id}`, limits: { ...key.limits }, holder: 'key', key }, undefined)));
    return verdict;
  };
  const grantOwner = (grantId: string): BudgetOwner => ({ id: `g:${grantId}`, limits: signedInLimits, holder: 'sign-in', key: undefined });
  const anyone = uncounted(undefined, undefined);

  /** A key refused as its request arrives: 401, or 429 once its address has sent too many. */
  const refuseArriving = (message: string, address: string): Promise<Verdict> =>
    guesses.consume(address).then(
      (guess) => uncounted(undefined, guess.allowed ? invalidKey(message) : tooManyGuesses(guess.retryAfterSeconds)),
      // The count of guesses failed: the key is refused all the same.
      () => uncounted(undefined, invalidKey(message)),
    );

  function decide(bucket: Bucket | undefined, address: string, credential: Credential, rawHeaders?: readonly string[]): Verdict | Promise<Verdict> {
    let owner: BudgetOwner | undefined;
    if (credential === undefined) owner = undefined;
    else if (typeof credential === 'string') {
      const check = rawHeaders !== undefined && authorizationHeaders(rawHeaders) > 1 ? SEVERAL_HEADERS : keys.check(credential);
      if (!check.ok) return rawHeaders === undefined ? uncounted(undefined, invalidKey(check.message)) : refuseArriving(check.message, address);
      const known = verdictOfKey(check.key);
      if (bucket === undefined) return known;
      owner = known.owner;
    } else if ('kind' in credential) owner = credential.kind === 'maker' ? grantOwner(credential.grantId) : undefined;
    else owner = credential;
    if (bucket !== undefined) return store.spend(bucket, address, owner);
    return owner === undefined ? anyone : uncounted(owner, undefined);
  }

  return { decide: decide as Budgets['decide'], keys, store };
}
