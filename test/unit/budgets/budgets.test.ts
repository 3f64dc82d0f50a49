import { afterEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../../src/auth/caller.ts';
import type { ConsumerKey, KeyCheck, KeyTable } from '../../../src/auth/consumer-keys/consumer-key-table.ts';
import { createBudgets, INVALID_KEYS_PER_MINUTE, type Budgets } from '../../../src/budgets/budgets.ts';
import { createLeaseStore, type LeaseStore } from '../../../src/budgets/lease-store.ts';
import { rateLimitHeaders } from '../../../src/budgets/rate-limit-headers.ts';
import { isCounted, type Verdict } from '../../../src/budgets/verdict.ts';
import { ErrorCode } from '../../../src/contract/schemas.ts';

/**
 * The one budget decision (Budgets.decide) as pure code, its budgets kept in this process's
 * memory: whose budget a request spends (its address's, a consumer key's, a signed-in maker's
 * grant's), which family, and the refusal it gets (401 for a key refused, 429 with Retry-After
 * for a budget spent or an address guessing keys).
 */
const GOOD = 'Bearer ck_good';
const REVOKED = 'Bearer ck_revoked';

/** A key table of one valid key (`GOOD`) with budgets of its own; every other value is refused. */
function keyTable(key: ConsumerKey): KeyTable {
  return {
    check(authorization: string): KeyCheck {
      if (authorization === GOOD) return { ok: true, key };
      if (authorization === REVOKED) return { ok: false, reason: 'revoked', message: 'This key was revoked by the operator.' };
      return { ok: false, reason: 'unknown', message: 'This key is not known here: check that it was copied whole, or ask the operator for a new one.' };
    },
    onChange: () => () => undefined,
    refresh: async () => undefined,
    start: async () => undefined,
    stop: async () => undefined,
  };
}

const KEY: ConsumerKey = { id: 'key-1', name: 'partner', limits: { search: 4, other: 8, export: 2, changes: 6 } };
const MAKER = (grantId: string): Caller => ({ kind: 'maker', makerId: 'maker-1', clientId: 'client-1', grantId, scopes: new Set() });
/** A request's raw headers as Node gives them: names and values in turn. */
const RAW_ONE = ['Host', 'catalog.test', 'Authorization', GOOD];

let addressCount = 0;
const address = () => `198.51.100.${++addressCount}`;

let store: LeaseStore;
let budgets: Budgets;
const open = (limits: { search: number; other: number }, signedIn = { searchPerMinute: 3, otherPerMinute: 7 }) => {
  store = createLeaseStore({ searchPerMinute: limits.search, otherPerMinute: limits.other });
  budgets = createBudgets({ store, keys: keyTable(KEY), signedIn });
};
afterEach(async () => {
  await store?.close();
});

/** A verdict decided at once (the budgets are in memory). */
function now(verdict: Verdict | Promise<Verdict>): Verdict {
  expect(verdict).not.toBeInstanceOf(Promise);
  return verdict as Verdict;
}

describe('whose budget', () => {
  it('without a credential: the address spends its own, family by family, to its limit; then 429 with Retry-After', () => {
    open({ search: 2, other: 3 });
    const ip = address();
    const first = now(budgets.decide('search', ip, undefined, RAW_ONE.slice(0, 2)));
    expect(first).toMatchObject({ allowed: true, owner: undefined, refusal: undefined, bucket: 'search', limit: 2, remaining: 1, windowSeconds: 60 });
    expect(now(budgets.decide('search', ip, undefined))).toMatchObject({ allowed: true, remaining: 0 });
    const refused = now(budgets.decide('search', ip, undefined));
    expect(refused).toMatchObject({ allowed: false, bucket: 'search', limit: 2, remaining: 0 });
    expect(refused.refusal).toMatchObject({ status: 429, code: ErrorCode.TOO_MANY_REQUESTS, retryAfterSeconds: refused.resetSeconds });
    expect(refused.refusal?.message).toContain('from this address');
    expect(refused.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.resetSeconds).toBeLessThanOrEqual(60);
    // Its headers say so: the budget, and when to come back.
    expect(isCounted(refused) && rateLimitHeaders(refused)).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0', 'retry-after': String(refused.resetSeconds), ratelimit: `"search";r=0;t=${refused.resetSeconds}` });
    // Another family, and another address, are budgets of their own.
    expect(now(budgets.decide('other', ip, undefined))).toMatchObject({ allowed: true, bucket: 'other', limit: 3, remaining: 2 });
    expect(now(budgets.decide('search', address(), undefined))).toMatchObject({ allowed: true, remaining: 1 });
    expect(store.rejections).toMatchObject({ search: 1, other: 0 });
  });

  it('the families without a setting of their own have the defaults: pages 300, export 6, changes 120', () => {
    open({ search: 2, other: 3 });
    const ip = address();
    expect(now(budgets.decide('pages', ip, undefined))).toMatchObject({ bucket: 'pages', limit: 300, remaining: 299 });
    expect(now(budgets.decide('export', ip, undefined))).toMatchObject({ bucket: 'export', limit: 6, remaining: 5 });
    expect(now(budgets.decide('changes', ip, undefined))).toMatchObject({ bucket: 'changes', limit: 120, remaining: 119 });
  });

  it("a valid consumer key: the key's own budgets, per family, never its address's; refused as the key's", () => {
    open({ search: 2, other: 3 });
    const ip = address();
    const keyed = now(budgets.decide('search', ip, GOOD, RAW_ONE));
    expect(keyed).toMatchObject({ allowed: true, bucket: 'search', limit: 4, remaining: 3 });
    expect(keyed.owner).toMatchObject({ id: 'k:key-1', holder: 'key', key: KEY });
    expect(now(budgets.decide('other', ip, GOOD, RAW_ONE))).toMatchObject({ bucket: 'other', limit: 8, remaining: 7 });
    expect(now(budgets.decide('export', ip, GOOD, RAW_ONE))).toMatchObject({ bucket: 'export', limit: 2, remaining: 1 });
    for (let i = 0; i < 3; i++) now(budgets.decide('search', ip, GOOD, RAW_ONE));
    const refused = now(budgets.decide('search', ip, GOOD, RAW_ONE));
    expect(refused).toMatchObject({ allowed: false, limit: 4, remaining: 0, owner: keyed.owner });
    expect(refused.refusal?.message).toContain('with this key');
    // The address from which the key came still has all of its own.
    expect(now(budgets.decide('search', ip, undefined))).toMatchObject({ allowed: true, remaining: 1 });
  });

  it("a maker signed in through a connected app: the grant's budgets (RATE_LIMIT_SIGNED_IN_*), two grants apart", () => {
    open({ search: 2, other: 3 }, { searchPerMinute: 3, otherPerMinute: 7 });
    const ip = address();
    const first = now(budgets.decide('other', ip, MAKER('grant-a')));
    expect(first).toMatchObject({ allowed: true, limit: 7, remaining: 6 });
    expect(first.owner).toMatchObject({ id: 'g:grant-a', holder: 'sign-in', key: undefined });
    expect(now(budgets.decide('other', ip, MAKER('grant-b')))).toMatchObject({ remaining: 6 });
    for (let i = 0; i < 2; i++) now(budgets.decide('search', ip, MAKER('grant-a')));
    expect(now(budgets.decide('search', ip, MAKER('grant-a')))).toMatchObject({ allowed: true, limit: 3, remaining: 0 });
    const refused = now(budgets.decide('search', ip, MAKER('grant-a')));
    expect(refused.refusal?.message).toContain('through this sign-in');
    // Anonymous is the address's; the address's budget was not touched.
    expect(now(budgets.decide('search', ip, { kind: 'anonymous' }))).toMatchObject({ owner: undefined, limit: 2, remaining: 1 });
  });

  it('an owner decided earlier in the request spends the same budget as its credential', () => {
    open({ search: 2, other: 3 });
    const ip = address();
    const who = now(budgets.decide(undefined, ip, GOOD, RAW_ONE));
    expect(who).toMatchObject({ allowed: true, bucket: undefined, limit: 0, remaining: 0 });
    expect(now(budgets.decide('other', ip, who.owner))).toMatchObject({ limit: 8, remaining: 7 });
    expect(now(budgets.decide('other', ip, GOOD, RAW_ONE))).toMatchObject({ limit: 8, remaining: 6 });
  });
});

describe('nothing spent without a family', () => {
  it('says who is calling and spends no unit of anyone', () => {
    open({ search: 2, other: 3 });
    const ip = address();
    expect(now(budgets.decide(undefined, ip, undefined))).toMatchObject({ allowed: true, owner: undefined, bucket: undefined });
    expect(now(budgets.decide(undefined, ip, GOOD, RAW_ONE)).owner).toMatchObject({ id: 'k:key-1' });
    expect(now(budgets.decide(undefined, ip, MAKER('grant-c'))).owner).toMatchObject({ id: 'g:grant-c' });
    expect(now(budgets.decide('search', ip, undefined))).toMatchObject({ remaining: 1 });
    expect(now(budgets.decide('search', ip, GOOD, RAW_ONE))).toMatchObject({ remaining: 3 });
  });
});

describe('a credential refused', () => {
  it('a key that is not valid, as its request arrives: 401 INVALID_KEY with its challenge, nothing spent, never anonymous', async () => {
    open({ search: 2, other: 3 });
    const ip = address();
    const arriving = budgets.decide('search', ip, REVOKED, ['Authorization', REVOKED]);
    expect(arriving).toBeInstanceOf(Promise);
    const verdict = await arriving;
    expect(verdict).toMatchObject({ allowed: false, owner: undefined, bucket: undefined });
    expect(verdict.refusal).toMatchObject({ status: 401, code: ErrorCode.INVALID_KEY, message: 'This key was revoked by the operator.' });
    expect(verdict.refusal?.challenge).toBe('Bearer error="invalid_token", error_description="This key was revoked by the operator."');
    expect(isCounted(verdict)).toBe(false);
    expect(now(budgets.decide('search', ip, undefined))).toMatchObject({ remaining: 1 });
    expect(store.rejections.search).toBe(0);
  });

  it('several Authorization headers are refused, whatever the first one says', async () => {
    open({ search: 2, other: 3 });
    const verdict = await budgets.decide('other', address(), GOOD, ['Authorization', GOOD, 'authorization', 'Bearer ck_other']);
    expect(verdict.refusal).toMatchObject({ status: 401, message: 'Send one Authorization header: this request has several.' });
  });

  it(`an address sending more than ${INVALID_KEYS_PER_MINUTE} invalid keys in a minute: 429 with Retry-After; a valid key from it is still served`, async () => {
    open({ search: 2, other: 3 });
    const ip = address();
    for (let i = 0; i < INVALID_KEYS_PER_MINUTE; i++) expect((await budgets.decide('other', ip, 'Bearer ck_guess', [])).refusal?.status).toBe(401);
    const guessing = await budgets.decide('other', ip, 'Bearer ck_guess', []);
    expect(guessing.refusal).toMatchObject({ status: 429, code: ErrorCode.TOO_MANY_REQUESTS });
    expect(guessing.refusal?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(guessing.refusal?.message).toContain('invalid key from this address');
    expect(now(budgets.decide('other', ip, GOOD, RAW_ONE))).toMatchObject({ allowed: true, limit: 8 });
    // Another address guesses on its own count.
    expect((await budgets.decide('other', address(), 'Bearer ck_guess', [])).refusal?.status).toBe(401);
  });

  it('a key checked again (a long poll after its wait): 401 at once, counted as no guess', async () => {
    open({ search: 2, other: 3 });
    const ip = address();
    for (let i = 0; i < INVALID_KEYS_PER_MINUTE + 5; i++) {
      const again = now(budgets.decide(undefined, ip, REVOKED));
      expect(again.refusal).toMatchObject({ status: 401, code: ErrorCode.INVALID_KEY });
    }
    expect(now(budgets.decide(undefined, ip, GOOD))).toMatchObject({ allowed: true, owner: { id: 'k:key-1' } });
    // The address has guessed nothing yet: its next invalid key on arrival is a 401, not a 429.
    expect((await budgets.decide('other', ip, REVOKED, [])).refusal?.status).toBe(401);
  });
});
