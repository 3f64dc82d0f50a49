import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyOfHeader, MALFORMED_HEADER, type KeyCheck } from '../../../src/auth/consumer-keys/consumer-key-table.ts';
import {
  DEFAULT_KEY_LIMITS,
  expiryMs,
  isKeyBearer,
  KEY_LENGTH,
  KeyInputError,
  keyShapeProblem,
  MAX_KEY_LIMIT,
  newKey,
  parseExpiry,
  parseGraceHours,
  parseKeyLimit,
  parseKeyName,
  shownPrefix,
  withoutKeys,
} from '../../../src/auth/consumer-keys/consumer-keys.ts';
import { keyChallenge } from '../../../src/contract/errors.ts';

/**
 * Consumer keys as pure code: the key's shape and check characters, the operator's input at its
 * boundaries (names, budgets, expiry, grace hours) and the reading of an Authorization header.
 */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SHAPE = /^ck_[0-9A-Za-z]{38}$/;

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(KeyInputError);
    return (err as Error).message;
  }
  throw new Error('expected a KeyInputError');
}

function malformed(value: string): string {
  const result = keyOfHeader(value);
  expect(typeof result, `keyOfHeader(${JSON.stringify(value.slice(0, 40))})`).toBe('object');
  const check = result as Extract<KeyCheck, { ok: false }>;
  expect(check.ok).toBe(false);
  expect(check.reason).toBe('malformed');
  expect(check.message.startsWith(`${MALFORMED_HEADER}: `)).toBe(true);
  return check.message;
}

describe('a key', () => {
  it('is ck_, 32 base62 characters and 6 check characters, shown by its first 11', () => {
    const keys = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const key = newKey();
      expect(key).toMatch(SHAPE);
      expect(key).toHaveLength(KEY_LENGTH);
      expect(KEY_LENGTH).toBe(41);
      expect(keyShapeProblem(key)).toBeUndefined();
      expect(shownPrefix(key)).toBe(key.slice(0, 11));
      keys.add(key);
    }
    expect(keys.size).toBe(200);
  });

  it('uses every base62 character in its body (no bias towards a few)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 300; i++) for (const c of newKey().slice(3, 35)) seen.add(c);
    expect(seen.size).toBe(62);
  });

  it('tells any one mistyped character, or two neighbours swapped, from a real key', () => {
    const key = newKey();
    fc.assert(
      fc.property(fc.integer({ min: 3, max: KEY_LENGTH - 1 }), fc.constantFrom(...BASE62), (at, c) => {
        fc.pre(key[at] !== c);
        const typo = key.slice(0, at) + c + key.slice(at + 1);
        expect(keyShapeProblem(typo)).toMatch(/not whole or was mistyped/);
      }),
      { numRuns: 500 },
    );
    for (let at = 3; at < KEY_LENGTH - 1; at++) {
      if (key[at] === key[at + 1]) continue;
      const swapped = key.slice(0, at) + key[at + 1] + key[at] + key.slice(at + 2);
      expect(keyShapeProblem(swapped), `swap at ${at}`).toBeDefined();
    }
  });

  it('names what is wrong with a string that is not a key', () => {
    const key = newKey();
    expect(keyShapeProblem(`sk_live_${key.slice(3)}`)).toBe('a key of this service starts with "ck_"');
    expect(keyShapeProblem(key.toUpperCase())).toBe('a key of this service starts with "ck_"');
    expect(keyShapeProblem(key.slice(0, -1))).toBe('a key is "ck_" and 38 letters and digits');
    expect(keyShapeProblem(`${key}x`)).toBe('a key is "ck_" and 38 letters and digits');
    expect(keyShapeProblem(`ck_${'-'.repeat(38)}`)).toBe('a key is "ck_" and 38 letters and digits');
    expect(keyShapeProblem(`${key.slice(0, 35)}000000`)).toMatch(/check characters do not match/);
  });
});

describe('the operator input', () => {
  it('names: 1 to 64 of a-z, 0-9 and -', () => {
    for (const ok of ['a', '0', '-', 'partner-1', 'x'.repeat(64)]) expect(parseKeyName(ok)).toBe(ok);
    for (const bad of ['', 'x'.repeat(65), 'Partner', 'a_b', 'a b', ' a', 'café', 'a.b', 'a/b']) {
      expect(refusal(() => parseKeyName(bad))).toContain('is not 1 to 64 of a-z, 0-9 and -');
    }
  });

  it('budgets: a whole number from 1 to 10,000,000', () => {
    expect(MAX_KEY_LIMIT).toBe(10_000_000);
    expect(parseKeyLimit('--searches-per-min', '1')).toBe(1);
    expect(parseKeyLimit('--searches-per-min', '10000000')).toBe(10_000_000);
    expect(parseKeyLimit('--searches-per-min', '0600')).toBe(600);
    expect(parseKeyLimit('--searches-per-min', ' 40 ')).toBe(40);
    for (const out of ['0', '10000001', '99999999999999999999']) {
      const message = refusal(() => parseKeyLimit('--export-per-min', out));
      expect(message).toContain('--export-per-min must be from 1 to 10,000,000');
    }
    for (const text of ['-1', '1e12', '1e3', '1.5', '10,000', 'text', '', ' ', '0x10', 'Infinity', 'NaN', '+5', '５']) {
      const message = refusal(() => parseKeyLimit('--other-per-min', text));
      expect(message, text).toBe(`--other-per-min must be a whole number from 1 to 10,000,000, not ${JSON.stringify(text)}`);
    }
  });

  it('the budgets of a key made without them: 600 searches, 1,200 other calls, 30 exports, 1,200 change-feed requests', () => {
    expect(DEFAULT_KEY_LIMITS).toEqual({ search: 600, other: 1200, export: 30, changes: 1200 });
  });

  it('expiry: a real date, today (UTC) or later', () => {
    const now = Date.parse('2026-03-10T23:59:59Z');
    expect(parseExpiry('2026-03-10', now)).toBe('2026-03-10');
    expect(parseExpiry('2026-03-11', now)).toBe('2026-03-11');
    expect(parseExpiry('2099-12-31', now)).toBe('2099-12-31');
    expect(parseExpiry('2028-02-29', now)).toBe('2028-02-29');
    expect(refusal(() => parseExpiry('2026-03-09', now))).toBe('the expiry 2026-03-09 is in the past (today is 2026-03-10 UTC); a key works through its last day');
    for (const bad of ['2026-02-30', '2027-02-29', '2026-13-01', '2026-00-10', '2026-3-11', '11/03/2026', 'tomorrow', '', '2026-03-11T00:00:00Z', '+02026-03-11']) {
      expect(refusal(() => parseExpiry(bad, now)), bad).toBe(`the expiry must be a date as YYYY-MM-DD, not ${JSON.stringify(bad)}`);
    }
    // Just after midnight UTC, yesterday is in the past whatever the local time zone says.
    expect(refusal(() => parseExpiry('2026-03-10', Date.parse('2026-03-11T00:00:00Z')))).toContain('is in the past');
  });

  it('a key works through the whole of its last day (UTC)', () => {
    expect(expiryMs(null)).toBe(Infinity);
    expect(expiryMs('2026-03-10')).toBe(Date.parse('2026-03-11T00:00:00Z'));
  });

  it('grace hours: 0 to 720', () => {
    expect(parseGraceHours('0')).toBe(0);
    expect(parseGraceHours('1.5')).toBe(1.5);
    expect(parseGraceHours('720')).toBe(720);
    for (const bad of ['721', '-1', 'x', '', '1e2', '24h']) expect(refusal(() => parseGraceHours(bad))).toContain('from 0 to 720');
  });
});

describe('the Authorization header', () => {
  const key = newKey();

  it('holds a key after "Bearer", in any case, with spaces around it', () => {
    expect(keyOfHeader(`Bearer ${key}`)).toBe(key);
    expect(keyOfHeader(`bearer ${key}`)).toBe(key);
    expect(keyOfHeader(`BEARER ${key}`)).toBe(key);
    expect(keyOfHeader(`  Bearer ${key}  `)).toBe(key);
    expect(keyOfHeader(`Bearer \t ${key}\t`)).toBe(key);
  });

  it('anything else is malformed, with the reason', () => {
    expect(malformed('')).toContain('it is empty');
    expect(malformed('   ')).toContain('it is empty');
    expect(malformed('Bearer')).toContain('no key follows "Bearer"');
    expect(malformed('Bearer ')).toContain('no key follows "Bearer"');
    expect(malformed('Basic dXNlcjpwYXNz')).toContain('it uses the "Basic" scheme');
    expect(malformed('Token abc')).toContain('it uses the "Token" scheme');
    expect(malformed(`Bearer ${key} ${key}`)).toContain('the key may not contain spaces');
    expect(malformed(`Bearer ${key.slice(0, 20)}é${key.slice(21)}`)).toContain('a key has letters and digits only');
    expect(malformed(`Bearer ${key.slice(0, 20)}\u0000${key.slice(21)}`)).toContain('a key has letters and digits only');
    expect(malformed(`Bearer sk_live_${'a'.repeat(24)}`)).toContain('a key of this service starts with "ck_"');
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
    expect(malformed(`Bearer ${jwt}`)).toContain('a key of this service starts with "ck_"');
    expect(malformed(`Bearer ${key.slice(0, -1)}${key.at(-1) === 'a' ? 'b' : 'a'}`)).toContain('check characters do not match');
  });

  it('a key, or another service\'s secret, sent without "Bearer" is not echoed back, not even its start', () => {
    for (const secret of [key, `sk_live_${'a1B2c3D4'.repeat(3)}`, 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl']) {
      const message = malformed(secret);
      expect(message).toContain('it does not start with "Bearer"');
      expect(message).not.toContain(secret.slice(0, 8));
    }
  });

  it('a long value is refused by its length, and never echoed', () => {
    const long = `Bearer ck_${'A'.repeat(10_000)}`;
    const message = malformed(long);
    expect(message).toContain(`this one is ${long.length} characters long, a key 41`);
    expect(message.length).toBeLessThan(300);
    expect(malformed(`Bearer ${'x'.repeat(249)}`)).toContain('a key of this service starts with "ck_"');
    expect(malformed(`Bearer ${'x'.repeat(250)}`)).toContain('characters long');
  });

  it('a refused key is never echoed back', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 8, maxLength: 300 }), (token) => {
        fc.pre(!token.includes('Bearer') && /[A-Za-z0-9]{8}/.test(token));
        const result = keyOfHeader(`Bearer ${token}`);
        if (typeof result === 'string') return;
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.message).not.toContain(token.trim());
      }),
    );
  });

  it('a bearer token is a key when it starts as a key does, in any case, whatever the spacing; anything else is an access token', () => {
    const key = newKey();
    for (const value of [`Bearer ${key}`, `bearer ${key}`, `  BEARER \t${key}  `, 'Bearer ck_', 'Bearer ck_mistyped', 'Bearer CK_abc']) expect(isKeyBearer(value), value).toBe(true);
    for (const value of [key, `Basic ${key}`, 'Bearer eyJhbGciOiJFUzI1NiJ9.e30.sig', `Bearer  x${key}`, 'Bearer'])
      expect(isKeyBearer(value), value).toBe(false);
  });

  it('a key in a text is shown as its prefix only, as its shape says', () => {
    const key = newKey();
    expect(withoutKeys(`/api/v1/search?key=${key}&q=${key.slice(0, 7)}`)).toBe('/api/v1/search?key=ck_…&q=ck_…');
    expect(withoutKeys('/api/v1/search?q=ck_ab')).toBe('/api/v1/search?q=ck_ab');
  });

  it('the challenge of a 401 is a header value: printable ASCII, no quote inside its quoted string', () => {
    expect(keyChallenge('This key was revoked by the operator.')).toBe('Bearer error="invalid_token", error_description="This key was revoked by the operator."');
    expect(keyChallenge('a "b" \\ … é')).toBe(`Bearer error="invalid_token", error_description="a 'b' ' ... "`);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (message) => {
        const value = keyChallenge(message);
        expect(value).toMatch(/^Bearer error="invalid_token", error_description="[\x20-\x21\x23-\x5b\x5d-\x7e]*"$/);
      }),
    );
  });
});
