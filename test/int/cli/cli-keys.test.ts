import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUsage, createKey, newUsageBatchId, revokeKey, utcDay } from '../../../src/auth/consumer-keys/consumer-keys.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { runCatalogCommand, type CommandRun } from '../../helpers/review.ts';

/**
 * `catalog keys` run as an operator runs it, a child process of bin/catalog.js on a database of
 * its own: every subcommand with and without --json, exit statuses 0 (done), 1 (no key of that
 * name) and 2 (bad input, checked before the database is opened), never a stack trace.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const DAY = 86_400_000;
const STACK_TRACE = /^\s+at .+[(:]\d+/m;

/** At most this many commands at once: more only crowd the cores. */
const MAX_CHILDREN = 4;
let running = 0;
const waiting: Array<() => void> = [];

async function keys(...args: string[]): Promise<CommandRun> {
  if (running < MAX_CHILDREN) running++;
  else await new Promise<void>((resolve) => waiting.push(resolve));
  let run: CommandRun;
  try {
    run = await runCatalogCommand(['keys', ...args], { DATABASE_URL: db.url, LOG_LEVEL: 'warn', LOG_FORMAT: 'json', REDIS_URL: '', SMTP_URL: '' });
  } finally {
    // The slot goes to the next command waiting, if any.
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
  expect(run.stderr, `catalog keys ${args.join(' ')}`).not.toMatch(STACK_TRACE);
  expect(run.stdout, `catalog keys ${args.join(' ')}`).not.toMatch(STACK_TRACE);
  return run;
}

/** The one JSON object a --json run prints, and nothing else on stdout. */
function json(run: CommandRun): Record<string, unknown> {
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout.endsWith('\n')).toBe(true);
  expect(run.stdout.trimEnd().split('\n')).toHaveLength(1);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

function expectRefused(run: CommandRun, code: 1 | 2, reason: RegExp | string): void {
  expect(run.code, run.stderr).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^catalog keys: |^(?:Option|Unknown option|Unexpected argument)/);
  if (typeof reason === 'string') expect(run.stderr).toContain(reason);
  else expect(run.stderr).toMatch(reason);
}

const keyHash = async (name: string) =>
  (await db.pool.query<{ hash: Buffer }>('SELECT s.hash FROM auth.consumer_key_secrets s JOIN auth.consumer_keys k ON k.id = s.key_id WHERE k.name = $1 AND s.retires_at IS NULL', [name])).rows[0]?.hash;
const sha256 = (text: string) => createHash('sha256').update(text).digest();

describe('catalog keys create', () => {
  it('prints the key alone on stdout, once; the rest goes to stderr', async () => {
    const run = await keys('create', 'plain-text');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^ck_[0-9A-Za-z]{38}\n$/);
    expect(run.stderr).toContain('Made the key "plain-text": 600 searches, 1,200 other calls, 30 exports, 1,200 change-feed requests a minute; no expiry.');
    expect((await keyHash('plain-text'))!.equals(sha256(run.stdout.trim()))).toBe(true);
  });

  it('--json: name, key, prefix, limits and expiry, with the budgets and expiry given', async () => {
    const expires = utcDay(Date.now() + 10 * DAY);
    const body = json(
      await keys('create', 'partner-json', '--searches-per-min', '40', '--other-per-min', '1', '--export-per-min', '10000000', '--changes-per-min', '7', '--expires', expires, '--json'),
    );
    expect(Object.keys(body)).toEqual(['name', 'key', 'prefix', 'limits', 'expires_at']);
    expect(body).toEqual({
      name: 'partner-json',
      key: expect.stringMatching(/^ck_[0-9A-Za-z]{38}$/),
      prefix: (body.key as string).slice(0, 11),
      limits: { search: 40, other: 1, export: 10_000_000, changes: 7 },
      expires_at: expires,
    });
    expect(Object.keys(body.limits as object)).toEqual(['search', 'other', 'export', 'changes']);
    expect((await keyHash('partner-json'))!.equals(sha256(body.key as string))).toBe(true);
    // An expiry of today is accepted: the key works through the day.
    expect(json(await keys('create', 'expires-today', '--expires', utcDay(Date.now()), '--json')).expires_at).toBe(utcDay(Date.now()));
  });

  it('refuses bad input with exit status 2 and the reason, making nothing', async () => {
    const before = (await db.pool.query('SELECT 1 FROM auth.consumer_keys')).rowCount;
    const yesterday = utcDay(Date.now() - DAY);
    const cases: Array<[string[], RegExp | string]> = [
      [['create', 'bad-limit', '--searches-per-min', '0'], '--searches-per-min must be from 1 to 10,000,000, not 0'],
      [['create', 'bad-limit', '--other-per-min=-1'], '--other-per-min must be a whole number from 1 to 10,000,000, not "-1"'],
      [['create', 'bad-limit', '--searches-per-min', '-1'], /--searches-per-min/],
      [['create', 'bad-limit', '--export-per-min', '1e12'], '--export-per-min must be a whole number from 1 to 10,000,000, not "1e12"'],
      [['create', 'bad-limit', '--changes-per-min', '10000001'], '--changes-per-min must be from 1 to 10,000,000, not 10000001'],
      [['create', 'bad-limit', '--searches-per-min', 'lots', '--json'], '--searches-per-min must be a whole number from 1 to 10,000,000, not "lots"'],
      [['create', 'bad-expiry', '--expires', yesterday], `the expiry ${yesterday} is in the past`],
      [['create', 'bad-expiry', '--expires', '2026-02-30'], 'the expiry must be a date as YYYY-MM-DD, not "2026-02-30"'],
      [['create', 'Bad_Name'], 'the name "Bad_Name" is not 1 to 64 of a-z, 0-9 and -'],
      [['create', 'x'.repeat(65)], 'is not 1 to 64 of a-z, 0-9 and -'],
      [['create'], "'create' needs the key's NAME"],
      [['create', 'a', 'b'], "'create' takes one NAME"],
      [['create', 'grace', '--grace-hours', '1'], "'create' does not take --grace-hours"],
      [['create', 'unknown-option', '--frobnicate'], /Unknown option '--frobnicate'/],
      [[], 'expected a command: create, list, set, rotate, revoke or usage'],
      [['destroy', 'x'], "unknown command 'destroy'"],
    ];
    const runs = await Promise.all(cases.map(([args]) => keys(...args)));
    runs.forEach((run, i) => expectRefused(run, 2, cases[i]![1]));
    expect((await db.pool.query('SELECT 1 FROM auth.consumer_keys')).rowCount).toBe(before);
  });

  it('refuses a name already taken, a revoked key\'s too, with exit status 2', async () => {
    await createKey(db.pool, { name: 'dup' });
    await createKey(db.pool, { name: 'dup-revoked' });
    await revokeKey(db.pool, 'dup-revoked');
    const [dup, revoked] = await Promise.all([keys('create', 'dup', '--json'), keys('create', 'dup-revoked')]);
    expectRefused(dup, 2, 'a key named "dup" exists already');
    expectRefused(revoked, 2, 'a key named "dup-revoked" exists already');
  });
});

describe('catalog keys list, set, rotate, revoke', () => {
  it('list shows every key with its status, the start of its secret and its budgets; --json the same as data', async () => {
    const made = await createKey(db.pool, { name: 'listed', limits: { search: 40 } });
    const [text, data, named] = await Promise.all([keys('list'), keys('list', '--json'), keys('list', 'listed')]);
    expect(text.code).toBe(0);
    const header = text.stdout.split('\n')[0]!;
    expect(header.split(/\s{2,}/)).toEqual(['NAME', 'STATUS', 'KEY', 'SEARCH/MIN', 'OTHER/MIN', 'EXPORT/MIN', 'CHANGES/MIN', 'EXPIRES', 'LAST USED']);
    const line = text.stdout.split('\n').find((l) => l.startsWith('listed '))!;
    expect(line.split(/\s{2,}/)).toEqual(['listed', 'active', `${made.prefix}…`, '40', '1,200', '30', '1,200', '-', '-']);
    expect(text.stdout).not.toContain(made.key.slice(11));
    const listed = (json(data).keys as Array<Record<string, unknown>>).find((k) => k.name === 'listed');
    expect(listed).toEqual({
      name: 'listed',
      prefix: made.prefix,
      limits: { search: 40, other: 1200, export: 30, changes: 1200 },
      expires_at: null,
      status: 'active',
      created_at: expect.any(String),
      revoked_at: null,
      last_used_at: null,
      retiring: [],
    });
    expectRefused(named, 2, "'list' takes no NAME");
  });

  it('set changes the budgets given (and the expiry); a revoked key cannot be changed', async () => {
    await createKey(db.pool, { name: 'settable' });
    const text = await keys('set', 'settable', '--searches-per-min', '5');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe('The key "settable" now has 5 searches, 1,200 other calls, 30 exports, 1,200 change-feed requests a minute; no expiry.\n');
    const expires = utcDay(Date.now() + 3 * DAY);
    const data = json(await keys('set', 'settable', '--export-per-min', '2', '--expires', expires, '--json'));
    expect(data).toMatchObject({ name: 'settable', limits: { search: 5, other: 1200, export: 2, changes: 1200 }, expires_at: expires, status: 'active' });
    expect(json(await keys('set', 'settable', '--no-expiry', '--json')).expires_at).toBeNull();

    const [nothing, both, zero, missing, foreign] = await Promise.all([
      keys('set', 'settable'),
      keys('set', 'settable', '--expires', expires, '--no-expiry'),
      keys('set', 'settable', '--other-per-min', '0'),
      keys('set', 'no-such-key', '--searches-per-min', '5', '--json'),
      keys('set', 'settable', '--days', '3'),
    ]);
    expectRefused(nothing, 2, "'set' needs something to change");
    expectRefused(both, 2, 'give --expires or --no-expiry, not both');
    expectRefused(zero, 2, '--other-per-min must be from 1 to 10,000,000, not 0');
    expectRefused(missing, 1, 'no key is named "no-such-key"');
    expectRefused(foreign, 2, "'set' does not take --days");
    await revokeKey(db.pool, 'settable');
    expectRefused(await keys('set', 'settable', '--searches-per-min', '9'), 2, 'the key "settable" is revoked; make a new one');
  });

  it('rotate prints the new key alone; the previous one retires after the grace hours', async () => {
    const made = await createKey(db.pool, { name: 'rotating' });
    const text = await keys('rotate', 'rotating');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^ck_[0-9A-Za-z]{38}\n$/);
    expect(text.stderr).toMatch(/A new secret for the key "rotating"; the previous one works until \d{4}-\d\d-\d\dT[\d:.]+Z, then stops\./);
    expect((await keyHash('rotating'))!.equals(sha256(text.stdout.trim()))).toBe(true);
    const graced = await db.pool.query<{ s: number }>(
      `SELECT extract(epoch FROM s.retires_at - now())::float AS s FROM auth.consumer_key_secrets s WHERE s.hash = $1`,
      [sha256(made.key)],
    );
    // The default grace: 24 hours.
    expect(graced.rows[0]!.s).toBeGreaterThan(24 * 3600 - 60);
    expect(graced.rows[0]!.s).toBeLessThanOrEqual(24 * 3600);

    const data = json(await keys('rotate', 'rotating', '--grace-hours', '0', '--json'));
    expect(data).toEqual({
      name: 'rotating',
      key: expect.stringMatching(/^ck_[0-9A-Za-z]{38}$/),
      prefix: (data.key as string).slice(0, 11),
      limits: made.limits,
      expires_at: null,
      previous_retires_at: expect.stringMatching(/Z$/),
    });
    // With no grace, every secret still working stops now: the one just replaced, and the first, whose day of grace is cut short.
    const { rows } = await db.pool.query<{ hash: Buffer; retiring_in_s: number | null }>(
      `SELECT s.hash, extract(epoch FROM s.retires_at - now())::float AS retiring_in_s FROM auth.consumer_key_secrets s JOIN auth.consumer_keys k ON k.id = s.key_id WHERE k.name = 'rotating'`,
    );
    const of = (key: string) => rows.find((r) => r.hash.equals(sha256(key)))!.retiring_in_s;
    expect(of(made.key)).toBeLessThanOrEqual(0);
    expect(of(text.stdout.trim())).toBeLessThanOrEqual(0);
    expect(of(data.key as string)).toBeNull();

    const [bad, tooLong, missing] = await Promise.all([keys('rotate', 'rotating', '--grace-hours', 'soon'), keys('rotate', 'rotating', '--grace-hours', '721'), keys('rotate', 'nobody')]);
    expectRefused(bad, 2, 'the grace period must be a number of hours from 0 to 720, not "soon"');
    expectRefused(tooLong, 2, 'from 0 to 720');
    expectRefused(missing, 1, 'no key is named "nobody"');
  });

  it('revoke stops a key; revoking again changes nothing; an unknown name is status 1', async () => {
    await createKey(db.pool, { name: 'revocable' });
    await createKey(db.pool, { name: 'revocable-json' });
    const [text, data] = await Promise.all([keys('revoke', 'revocable'), keys('revoke', 'revocable-json', '--json').then(json)]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^The key "revocable" is revoked \(since \d{4}-\d\d-\d\dT[\d:.]+Z\): every API process refuses it within a second\.\n$/);
    expect(data).toMatchObject({ name: 'revocable-json', status: 'revoked', revoked_at: expect.stringMatching(/Z$/), retiring: [] });
    const again = json(await keys('revoke', 'revocable-json', '--json'));
    expect(again.revoked_at).toBe(data.revoked_at);
    const [missing, missingJson, noName] = await Promise.all([keys('revoke', 'nobody'), keys('revoke', 'nobody', '--json'), keys('revoke')]);
    expectRefused(missing, 1, 'catalog keys: no key is named "nobody"');
    expectRefused(missingJson, 1, 'no key is named "nobody"');
    expectRefused(noName, 2, "'revoke' needs the key's NAME");
  });
});

describe('catalog keys usage', () => {
  it('prints each day of the last N, oldest first, per family and refused; --json as {keys:[{name, days}]}', async () => {
    await createKey(db.pool, { name: 'used' });
    const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM auth.consumer_keys WHERE name = 'used'`);
    const id = rows[0]!.id;
    const today = utcDay(Date.now());
    const yesterday = utcDay(Date.now() - DAY);
    await addUsage(db.pool, newUsageBatchId(), [
      { keyId: id, day: today, column: 'search', count: 1234 },
      { keyId: id, day: today, column: 'other', count: 2 },
      { keyId: id, day: today, column: 'export', count: 3 },
      { keyId: id, day: today, column: 'changes', count: 4 },
      { keyId: id, day: today, column: 'refused', count: 5 },
      { keyId: id, day: yesterday, column: 'other', count: 9 },
    ]);
    const data = json(await keys('usage', 'used', '--days', '3', '--json'));
    expect(data).toEqual({
      keys: [
        {
          name: 'used',
          days: [
            { date: utcDay(Date.now() - 2 * DAY), search: 0, other: 0, export: 0, changes: 0, refused: 0 },
            { date: yesterday, search: 0, other: 9, export: 0, changes: 0, refused: 0 },
            { date: today, search: 1234, other: 2, export: 3, changes: 4, refused: 5 },
          ],
        },
      ],
    });
    const day = (data.keys as Array<{ days: object[] }>)[0]!.days[2]!;
    expect(Object.keys(day)).toEqual(['date', 'search', 'other', 'export', 'changes', 'refused']);

    const text = await keys('usage', 'used', '--days', '2');
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('used');
    expect(lines[1]!.split(/\s{2,}/)).toEqual(['DATE', 'SEARCH', 'OTHER', 'EXPORT', 'CHANGES', 'REFUSED']);
    expect(lines[2]!.split(/\s{2,}/)).toEqual([yesterday, '0', '9', '0', '0', '0']);
    expect(lines[3]!.split(/\s{2,}/)).toEqual([today, '1,234', '2', '3', '4', '5']);
    expect(lines).toHaveLength(4);

    // Every key, 30 days by default.
    const all = json(await keys('usage', '--json')).keys as Array<{ name: string; days: unknown[] }>;
    expect(all.map((k) => k.name)).toContain('used');
    for (const k of all) expect(k.days).toHaveLength(30);

    const [missing, zero, tooMany, text2] = await Promise.all([keys('usage', 'nobody', '--json'), keys('usage', '--days', '0'), keys('usage', '--days', '401'), keys('usage', '--days', 'week')]);
    expectRefused(missing, 1, 'no key is named "nobody"');
    expectRefused(zero, 2, '--days must be a whole number from 1 to 400, not "0"');
    expectRefused(tooMany, 2, 'from 1 to 400');
    expectRefused(text2, 2, 'not "week"');
  });
});

describe('catalog keys --help', () => {
  it('prints the usage with exit status 0', async () => {
    const run = await keys('--help');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('usage: catalog keys create NAME');
    expect(run.stdout).toContain('Exit status: 0 done; 1 no key has that name; 2 bad input');
  });
});
