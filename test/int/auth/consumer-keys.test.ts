import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyTable, type KeyCheck, type KeyTable } from '../../../src/auth/consumer-keys/consumer-key-table.ts';
import {
  addUsage,
  changeKey,
  createKey,
  DEFAULT_KEY_LIMITS,
  KeyInputError,
  KeyNotFoundError,
  keysVersion,
  keyUsage,
  listKeys,
  loadKeySecrets,
  newKey,
  newUsageBatchId,
  revokeKey,
  rotateKey,
  utcDay,
  type UsageCount,
} from '../../../src/auth/consumer-keys/consumer-keys.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

/**
 * The consumer keys' commands against a real database: made, listed, changed, rotated and
 * revoked; usage added once per batch and read back per UTC day; and the table every API process
 * holds, reloaded when a key changes (NOTIFY, and the poll behind it).
 */
let db: TestDatabase;
const tables: KeyTable[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const t of tables) await t.stop();
  await db?.drop();
});

const DAY = 86_400_000;
const today = () => utcDay(Date.now());
const yesterday = () => utcDay(Date.now() - DAY);
const sha256 = (text: string) => createHash('sha256').update(text).digest();

async function expectRefused<T>(promise: Promise<T>, type: typeof KeyInputError | typeof KeyNotFoundError, message: RegExp): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(type);
  expect((err as Error).message).toMatch(message);
}

async function startTable(pollMs: number): Promise<KeyTable> {
  const table = createKeyTable({ pool: db.pool, connectionString: db.url, pollMs });
  await table.start();
  tables.push(table);
  return table;
}

/** Whether `what` comes to hold within `ms`. */
async function until(what: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (what()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return what();
}

const refusedAs = (check: KeyCheck) => (check.ok ? 'ok' : check.reason);

describe('making and listing keys', () => {
  it('makes a key with the default budgets, shown once and stored only as its hash', async () => {
    const issued = await createKey(db.pool, { name: 'defaults' });
    expect(issued).toEqual({ name: 'defaults', key: expect.stringMatching(/^ck_[0-9A-Za-z]{38}$/), prefix: issued.key.slice(0, 11), limits: DEFAULT_KEY_LIMITS, expires_at: null });
    const { rows } = await db.pool.query<{ hash: Buffer; prefix: string }>(
      'SELECT s.hash, s.prefix FROM auth.consumer_key_secrets s JOIN auth.consumer_keys k ON k.id = s.key_id WHERE k.name = $1',
      ['defaults'],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.hash.equals(sha256(issued.key))).toBe(true);
    expect(rows[0]!.prefix).toBe(issued.prefix);
    // Nowhere in the key tables is the key itself.
    const dump = await db.pool.query<{ t: string }>(
      `SELECT row_to_json(k)::text || row_to_json(s)::text AS t FROM auth.consumer_keys k JOIN auth.consumer_key_secrets s ON s.key_id = k.id`,
    );
    for (const { t } of dump.rows) expect(t).not.toContain(issued.key.slice(11));
  });

  it('takes budgets and an expiry, and lists every key by name with its status', async () => {
    const until = utcDay(Date.now() + 30 * DAY);
    const made = await createKey(db.pool, { name: 'list-b', limits: { search: 1, export: 10_000_000 }, expiresOn: until });
    expect(made.limits).toEqual({ search: 1, other: 1200, export: 10_000_000, changes: 1200 });
    expect(made.expires_at).toBe(until);
    await createKey(db.pool, { name: 'list-a' });
    await createKey(db.pool, { name: 'list-c', expiresOn: yesterday() });
    const keys = await listKeys(db.pool);
    const names = keys.map((k) => k.name);
    expect(names).toEqual([...names].sort());
    const byName = new Map(keys.map((k) => [k.name, k]));
    expect(byName.get('list-b')).toEqual({
      name: 'list-b',
      prefix: made.prefix,
      limits: made.limits,
      expires_at: until,
      status: 'active',
      created_at: expect.stringMatching(/Z$/),
      revoked_at: null,
      last_used_at: null,
      retiring: [],
    });
    expect(byName.get('list-c')!.status).toBe('expired');
    expect(byName.get('list-a')!.status).toBe('active');
  });

  it('refuses a name already taken, a revoked key\'s included, and a bad name', async () => {
    await createKey(db.pool, { name: 'taken' });
    await expectRefused(createKey(db.pool, { name: 'taken' }), KeyInputError, /a key named "taken" exists already/);
    await revokeKey(db.pool, 'taken');
    await expectRefused(createKey(db.pool, { name: 'taken' }), KeyInputError, /exists already/);
    await expectRefused(createKey(db.pool, { name: 'Taken' }), KeyInputError, /not 1 to 64 of a-z, 0-9 and -/);
    await expectRefused(createKey(db.pool, { name: '' }), KeyInputError, /not 1 to 64/);
    const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM auth.consumer_keys WHERE name ILIKE 'taken'`);
    expect(rows[0]!.n).toBe(1);
  });

  it('the database itself holds budgets to 1 .. 10,000,000', async () => {
    for (const search of [0, 10_000_001, -1]) {
      await expect(createKey(db.pool, { name: `db-bound-${search < 0 ? 'neg' : search}`, limits: { search } })).rejects.toThrow(/check constraint/);
    }
  });
});

describe('revoking, changing and rotating', () => {
  it('revokes a key once: a second revocation changes nothing; an unknown name is not found', async () => {
    await createKey(db.pool, { name: 'revoke-me' });
    const first = await revokeKey(db.pool, 'revoke-me');
    expect(first.status).toBe('revoked');
    expect(first.revoked_at).toMatch(/Z$/);
    await new Promise((r) => setTimeout(r, 20));
    const second = await revokeKey(db.pool, 'revoke-me');
    expect(second.revoked_at).toBe(first.revoked_at);
    await expectRefused(revokeKey(db.pool, 'no-such-key'), KeyNotFoundError, /no key is named "no-such-key"/);
  });

  it('changes only the budgets given, and the expiry (null removes it)', async () => {
    await createKey(db.pool, { name: 'change-me', limits: { search: 40 }, expiresOn: utcDay(Date.now() + 5 * DAY) });
    const changed = await changeKey(db.pool, 'change-me', { limits: { other: 7 } });
    expect(changed.limits).toEqual({ search: 40, other: 7, export: 30, changes: 1200 });
    expect(changed.expires_at).toBe(utcDay(Date.now() + 5 * DAY));
    const noExpiry = await changeKey(db.pool, 'change-me', { expiresOn: null });
    expect(noExpiry.expires_at).toBeNull();
    expect(noExpiry.limits.other).toBe(7);
    await expectRefused(changeKey(db.pool, 'nobody', { limits: { search: 1 } }), KeyNotFoundError, /no key is named "nobody"/);
    await revokeKey(db.pool, 'change-me');
    await expectRefused(changeKey(db.pool, 'change-me', { limits: { search: 1 } }), KeyInputError, /is revoked; make a new one/);
  });

  it('rotates: a new secret, the old one retiring after the grace hours; the oldest never gets longer', async () => {
    const made = await createKey(db.pool, { name: 'rotate-me' });
    const before = Date.now();
    const rotated = await rotateKey(db.pool, 'rotate-me');
    expect(rotated.key).not.toBe(made.key);
    expect(rotated.key).toMatch(/^ck_[0-9A-Za-z]{38}$/);
    expect(rotated.prefix).toBe(rotated.key.slice(0, 11));
    expect(rotated.limits).toEqual(made.limits);
    const retires = Date.parse(rotated.previous_retires_at);
    expect(retires).toBeGreaterThanOrEqual(before + 24 * 3600_000 - 5_000);
    expect(retires).toBeLessThanOrEqual(Date.now() + 24 * 3600_000 + 5_000);

    const listed = (await listKeys(db.pool)).find((k) => k.name === 'rotate-me')!;
    expect(listed.prefix).toBe(rotated.prefix);
    expect(listed.retiring).toEqual([{ prefix: made.prefix, retires_at: expect.stringMatching(/Z$/) }]);

    // A second rotation with a longer grace does not lengthen the first secret's.
    const again = await rotateKey(db.pool, 'rotate-me', 48);
    const secrets = (await loadKeySecrets(db.pool)).secrets.filter((s) => s.name === 'rotate-me');
    const first = secrets.find((s) => s.hash.equals(sha256(made.key)))!;
    const second = secrets.find((s) => s.hash.equals(sha256(rotated.key)))!;
    const third = secrets.find((s) => s.hash.equals(sha256(again.key)))!;
    expect(Math.abs(first.retiresAtMs - retires)).toBeLessThan(1000);
    expect(second.retiresAtMs).toBeGreaterThan(Date.now() + 47 * 3600_000);
    expect(third.retiresAtMs).toBe(Infinity);

    await expectRefused(rotateKey(db.pool, 'nobody'), KeyNotFoundError, /no key is named/);
    await revokeKey(db.pool, 'rotate-me');
    await expectRefused(rotateKey(db.pool, 'rotate-me'), KeyInputError, /is revoked/);
    expect((await listKeys(db.pool)).find((k) => k.name === 'rotate-me')!.retiring).toEqual([]);
  });

  it('every command that changes a key moves the change counter the API processes poll', async () => {
    const v0 = await keysVersion(db.pool);
    await createKey(db.pool, { name: 'counted' });
    const v1 = await keysVersion(db.pool);
    expect(v1).toBeGreaterThan(v0);
    await changeKey(db.pool, 'counted', { limits: { search: 3 } });
    const v2 = await keysVersion(db.pool);
    expect(v2).toBeGreaterThan(v1);
    await rotateKey(db.pool, 'counted', 0);
    const v3 = await keysVersion(db.pool);
    expect(v3).toBeGreaterThan(v2);
    await revokeKey(db.pool, 'counted');
    expect(await keysVersion(db.pool)).toBeGreaterThan(v3);
  });
});

describe('usage', () => {
  it('adds a batch once, whoever hands it over again', async () => {
    await createKey(db.pool, { name: 'usage-once' });
    const id = (await db.pool.query<{ id: string }>(`SELECT id FROM auth.consumer_keys WHERE name = 'usage-once'`)).rows[0]!.id;
    const day = today();
    const counts: UsageCount[] = [
      { keyId: id, day, column: 'search', count: 5 },
      { keyId: id, day, column: 'search', count: 2 },
      { keyId: id, day, column: 'other', count: 3 },
      { keyId: id, day, column: 'export', count: 1 },
      { keyId: id, day, column: 'changes', count: 4 },
      { keyId: id, day, column: 'refused', count: 6 },
    ];
    const batch = newUsageBatchId();
    expect(await addUsage(db.pool, batch, counts)).toBe(true);
    expect(await addUsage(db.pool, batch, counts)).toBe(false);
    const once = await keyUsage(db.pool, { name: 'usage-once', days: 1 });
    expect(once).toEqual({ keys: [{ name: 'usage-once', days: [{ date: day, search: 7, other: 3, export: 1, changes: 4, refused: 6 }] }] });

    expect(await addUsage(db.pool, newUsageBatchId(), [{ keyId: id, day, column: 'other', count: 10 }])).toBe(true);
    expect((await keyUsage(db.pool, { name: 'usage-once', days: 1 })).keys[0]!.days[0]!.other).toBe(13);
    expect(await addUsage(db.pool, newUsageBatchId(), [])).toBe(false);
    expect((await listKeys(db.pool)).find((k) => k.name === 'usage-once')!.last_used_at).toMatch(/Z$/);
  });

  it('drops counts of a key that is no more, and adds the rest of the batch', async () => {
    await createKey(db.pool, { name: 'usage-mixed' });
    const id = (await db.pool.query<{ id: string }>(`SELECT id FROM auth.consumer_keys WHERE name = 'usage-mixed'`)).rows[0]!.id;
    const added = await addUsage(db.pool, newUsageBatchId(), [
      { keyId: randomUUID(), day: today(), column: 'search', count: 9 },
      { keyId: id, day: today(), column: 'search', count: 1 },
    ]);
    expect(added).toBe(true);
    expect((await keyUsage(db.pool, { name: 'usage-mixed', days: 1 })).keys[0]!.days[0]!.search).toBe(1);
  });

  it('lists every one of the last N UTC days, oldest first, zeros where nothing was counted', async () => {
    await createKey(db.pool, { name: 'usage-days' });
    await createKey(db.pool, { name: 'usage-days-other' });
    const ids = new Map((await db.pool.query<{ id: string; name: string }>(`SELECT id, name FROM auth.consumer_keys WHERE name LIKE 'usage-days%'`)).rows.map((r) => [r.name, r.id]));
    const now = Date.parse('2026-03-10T12:00:00Z');
    await addUsage(db.pool, newUsageBatchId(), [
      { keyId: ids.get('usage-days')!, day: '2026-03-10', column: 'search', count: 1 },
      { keyId: ids.get('usage-days')!, day: '2026-03-08', column: 'refused', count: 2 },
      // Outside a 3-day range ending on the 10th.
      { keyId: ids.get('usage-days')!, day: '2026-03-07', column: 'other', count: 50 },
      { keyId: ids.get('usage-days-other')!, day: '2026-03-09', column: 'export', count: 3 },
    ]);
    const zero = { search: 0, other: 0, export: 0, changes: 0, refused: 0 };
    const usage = await keyUsage(db.pool, { name: 'usage-days', days: 3, now });
    expect(usage).toEqual({
      keys: [
        {
          name: 'usage-days',
          days: [
            { date: '2026-03-08', ...zero, refused: 2 },
            { date: '2026-03-09', ...zero },
            { date: '2026-03-10', ...zero, search: 1 },
          ],
        },
      ],
    });
    const all = await keyUsage(db.pool, { days: 3, now });
    const names = all.keys.map((k) => k.name);
    expect(names).toEqual([...names].sort());
    expect(names).toContain('usage-days-other');
    expect(all.keys.find((k) => k.name === 'usage-days-other')!.days[1]).toEqual({ date: '2026-03-09', ...zero, export: 3 });
    // Every key is listed, with every day, even with nothing counted.
    for (const k of all.keys) expect(k.days.map((d) => d.date)).toEqual(['2026-03-08', '2026-03-09', '2026-03-10']);
    expect((await keyUsage(db.pool, { name: 'usage-days', days: 30, now })).keys[0]!.days).toHaveLength(30);
    await expectRefused(keyUsage(db.pool, { name: 'nobody', days: 3 }), KeyNotFoundError, /no key is named "nobody"/);
  });
});

describe('the table each API process holds', () => {
  it('tells a valid key from an unknown, revoked, expired or retired one, and reloads on NOTIFY', async () => {
    // No poll within the test: only the notification can tell this table of a change.
    const table = await startTable(3_600_000);
    const live = await createKey(db.pool, { name: 'table-live', limits: { search: 40 } });
    const old = await createKey(db.pool, { name: 'table-expired', expiresOn: yesterday() });
    expect(await until(() => table.check(`Bearer ${live.key}`).ok, 2000)).toBe(true);
    // Each key's creation is its own notification: the reload the first one started may have
    // read the table before the second key was committed, so wait for the table to know both.
    expect(await until(() => refusedAs(table.check(`Bearer ${old.key}`)) !== 'unknown', 2000)).toBe(true);
    const check = table.check(`Bearer ${live.key}`);
    expect(check.ok && check.key.name).toBe('table-live');
    expect(check.ok && check.key.limits).toEqual({ ...DEFAULT_KEY_LIMITS, search: 40 });

    const expired = table.check(`Bearer ${old.key}`);
    expect(expired).toEqual({ ok: false, reason: 'expired', message: `This key expired: its last day was ${yesterday()} (UTC).` });
    // A key whose last day is today works until the day is over.
    const todayKey = await createKey(db.pool, { name: 'table-today', expiresOn: today() });
    expect(await until(() => table.check(`Bearer ${todayKey.key}`).ok, 2000)).toBe(true);
    expect(refusedAs(table.check(`Bearer ${todayKey.key}`, Date.parse(`${today()}T00:00:00Z`) + DAY))).toBe('expired');

    // Unknown: a key of the right shape and check that was never made.
    expect(table.check(`Bearer ${newKey()}`)).toEqual({ ok: false, reason: 'unknown', message: expect.stringMatching(/not known here/) });

    const limitsChanged = await changeKey(db.pool, 'table-live', { limits: { search: 5 } });
    expect(limitsChanged.limits.search).toBe(5);
    expect(await until(() => {
      const c = table.check(`Bearer ${live.key}`);
      return c.ok && c.key.limits.search === 5;
    }, 2000)).toBe(true);

    const rotated = await rotateKey(db.pool, 'table-live', 0);
    expect(await until(() => table.check(`Bearer ${rotated.key}`).ok, 2000)).toBe(true);
    expect(table.check(`Bearer ${live.key}`)).toEqual({ ok: false, reason: 'expired', message: expect.stringMatching(/^This key was replaced by a newer one; it stopped working at .*Z\.$/) });

    await revokeKey(db.pool, 'table-live');
    expect(await until(() => refusedAs(table.check(`Bearer ${rotated.key}`)) === 'revoked', 2000)).toBe(true);
    expect(table.check(`Bearer ${rotated.key}`)).toEqual({ ok: false, reason: 'revoked', message: 'This key was revoked by the operator.' });
    expect(refusedAs(table.check(`Bearer ${live.key}`))).toBe('revoked');
  });

  it('a change whose notification is lost is picked up by the poll of the change counter', async () => {
    const polling = await startTable(100);
    const deaf = await startTable(3_600_000);
    const key = await createKey(db.pool, { name: 'table-silent' });
    expect(await until(() => polling.check(`Bearer ${key.key}`).ok && deaf.check(`Bearer ${key.key}`).ok, 2000)).toBe(true);
    // An operator's SQL with the triggers off: nothing is notified, only the counter moves.
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('ALTER TABLE auth.consumer_keys DISABLE TRIGGER consumer_keys_changed');
      await client.query(`UPDATE auth.consumer_keys SET revoked_at = now() WHERE name = 'table-silent'`);
      await client.query('ALTER TABLE auth.consumer_keys ENABLE TRIGGER consumer_keys_changed');
      await client.query('UPDATE auth.consumer_keys_state SET version = version + 1');
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect(await until(() => refusedAs(polling.check(`Bearer ${key.key}`)) === 'revoked', 2000)).toBe(true);
    // The table that only listens did not hear of it: the poll is what told the other.
    expect(deaf.check(`Bearer ${key.key}`).ok).toBe(true);
  });
});
