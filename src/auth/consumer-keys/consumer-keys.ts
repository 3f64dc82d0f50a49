import { randomBytes, randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Pool, Queryable } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import { hashToken } from '../secret-token.ts';

/**
 * Consumer keys: higher request budgets by arrangement with the operator (docs/keys.md). The
 * operator makes a key with `catalog keys create` or on /admin/keys and hands it over once; the
 * client sends it as `Authorization: Bearer ck_…` and spends the key's budgets instead of its
 * address's. Only the key's SHA-256 is stored (a key is 190 random bits, so a fast hash is the
 * right one); its first characters are kept to be shown, never the rest.
 *
 * A key is `ck_`, 32 random base62 characters, then 6 base62 characters of the CRC-32 of those
 * 32: a scanner (or this service, before any lookup) can tell a mistyped key from a real one.
 */
export const KEY_PREFIX = 'ck_';
const BODY_LENGTH = 32;
const CHECK_LENGTH = 6;
export const KEY_LENGTH = KEY_PREFIX.length + BODY_LENGTH + CHECK_LENGTH;
/** Characters of a key shown in lists and logs: the prefix and the first 8 of the body. */
const SHOWN_LENGTH = KEY_PREFIX.length + 8;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** A whole key. */
const KEY_SHAPE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECK_LENGTH}}$`);
/** An Authorization header whose bearer token is a key (`Bearer ck_…`), not an access token. */
const KEY_BEARER = new RegExp(`^\\s*bearer\\s+${KEY_PREFIX}`, 'i');
/** A key, or the start of one, anywhere in a text. */
const KEY_IN_TEXT = new RegExp(`${KEY_PREFIX}[0-9A-Za-z]{4,}`, 'g');

/** The budget families a key sets, each per minute. */
export const KEY_FAMILIES = ['search', 'other', 'export', 'changes'] as const;
export type KeyFamily = (typeof KEY_FAMILIES)[number];
export type KeyLimits = Readonly<Record<KeyFamily, number>>;

/**
 * Budgets of a key made without them: twenty times an address's searches and other calls, five
 * times its exports, ten times its change-feed requests (an address has 30, 60, 6 and 120).
 */
export const DEFAULT_KEY_LIMITS: KeyLimits = { search: 600, other: 1200, export: 30, changes: 1200 };
/** The largest budget a key may have per minute (the same bound as RATE_LIMIT_*_PER_MIN). */
export const MAX_KEY_LIMIT = 10_000_000;
/** How long a rotated key's previous secret keeps working by default, and at most. */
export const DEFAULT_GRACE_HOURS = 24;
export const MAX_GRACE_HOURS = 24 * 30;
/** Days of usage kept. */
export const USAGE_RETENTION_DAYS = 400;

const DAY_MS = 86_400_000;

/** A refusal of the operator's input (exit status 2 on the command line, a message on the page). */
export class KeyInputError extends Error {}
/** No key has the name given (exit status 1 on the command line). */
export class KeyNotFoundError extends Error {}

function base62(bytes: Buffer, length: number): string {
  // Rejection sampling keeps every character equally likely: bytes of 248 and above are skipped.
  let out = '';
  let pool = bytes;
  let i = 0;
  while (out.length < length) {
    if (i === pool.length) {
      pool = randomBytes(length);
      i = 0;
    }
    const b = pool[i++]!;
    if (b < 248) out += BASE62[b % 62];
  }
  return out;
}

function checkOf(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECK_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A new key (shown once, never stored). */
export function newKey(): string {
  const body = base62(randomBytes(BODY_LENGTH + 8), BODY_LENGTH);
  return `${KEY_PREFIX}${body}${checkOf(body)}`;
}

/** What is wrong with a string offered as a key, or undefined when it has a key's shape and check. */
export function keyShapeProblem(token: string): string | undefined {
  if (!token.startsWith(KEY_PREFIX)) return `a key of this service starts with "${KEY_PREFIX}"`;
  if (!KEY_SHAPE.test(token)) return `a key is "${KEY_PREFIX}" and ${BODY_LENGTH + CHECK_LENGTH} letters and digits`;
  const body = token.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LENGTH);
  if (token.slice(KEY_PREFIX.length + BODY_LENGTH) !== checkOf(body)) return 'the key is not whole or was mistyped (its check characters do not match)';
  return undefined;
}

/** Whether an Authorization header's bearer token is a key of this service rather than an access token. */
export function isKeyBearer(authorization: string): boolean {
  return KEY_BEARER.test(authorization);
}

/**
 * A text (a URL, say) with every key someone put in it shown as its prefix only: keys belong in
 * the Authorization header (docs/keys.md), and a log never holds one.
 */
export function withoutKeys(text: string): string {
  return text.includes(KEY_PREFIX) ? text.replace(KEY_IN_TEXT, `${KEY_PREFIX}…`) : text;
}

/** The start of a key as lists and logs show it. */
export function shownPrefix(key: string): string {
  return key.slice(0, SHOWN_LENGTH);
}

export const hashKey = hashToken;

// ---------------------------------------------------------------------------------------------
// The operator's input

/** A key's name: 1–64 of a-z, 0-9 and -. */
export function parseKeyName(value: string): string {
  if (!/^[a-z0-9-]{1,64}$/.test(value)) throw new KeyInputError(`the name ${JSON.stringify(value)} is not 1 to 64 of a-z, 0-9 and -`);
  return value;
}

/** A budget per minute: a whole number from 1 to MAX_KEY_LIMIT, written in digits. */
export function parseKeyLimit(label: string, value: string): number {
  const text = value.trim();
  if (!/^\d+$/.test(text)) throw new KeyInputError(`${label} must be a whole number from 1 to ${MAX_KEY_LIMIT.toLocaleString('en-US')}, not ${JSON.stringify(value)}`);
  const n = Number(text);
  if (n < 1 || n > MAX_KEY_LIMIT) throw new KeyInputError(`${label} must be from 1 to ${MAX_KEY_LIMIT.toLocaleString('en-US')}, not ${text}`);
  return n;
}

/** The UTC day of `ms` as YYYY-MM-DD. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A last valid day, YYYY-MM-DD, today (UTC) or later. */
export function parseExpiry(value: string, now = Date.now()): string {
  const text = value.trim();
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || Number.isNaN(ms) || utcDay(ms) !== text) throw new KeyInputError(`the expiry must be a date as YYYY-MM-DD, not ${JSON.stringify(value)}`);
  const today = utcDay(now);
  if (text < today) throw new KeyInputError(`the expiry ${text} is in the past (today is ${today} UTC); a key works through its last day`);
  return text;
}

/** Hours a rotated key's previous secret keeps working: 0 to MAX_GRACE_HOURS. */
export function parseGraceHours(value: string): number {
  const text = value.trim();
  if (!/^\d+(\.\d+)?$/.test(text) || Number(text) > MAX_GRACE_HOURS) {
    throw new KeyInputError(`the grace period must be a number of hours from 0 to ${MAX_GRACE_HOURS}, not ${JSON.stringify(value)}`);
  }
  return Number(text);
}

// ---------------------------------------------------------------------------------------------
// Keys as the operator sees them

export type KeyStatus = 'active' | 'revoked' | 'expired';

export interface KeyInfo {
  readonly name: string;
  /** The shown start of the current secret. */
  readonly prefix: string;
  readonly limits: KeyLimits;
  /** The last valid day (UTC), or null. */
  readonly expires_at: string | null;
  readonly status: KeyStatus;
  readonly created_at: string;
  readonly revoked_at: string | null;
  /** When a request last spent from the key (as recorded; see docs/keys.md), or null. */
  readonly last_used_at: string | null;
  /** Previous secrets still working after a rotation: their shown start and when they stop. */
  readonly retiring: ReadonlyArray<{ prefix: string; retires_at: string }>;
}

/** A key just made or rotated: the only time its secret is shown. */
export interface IssuedKey {
  readonly name: string;
  readonly key: string;
  readonly prefix: string;
  readonly limits: KeyLimits;
  readonly expires_at: string | null;
}

interface KeyRow {
  id: string;
  name: string;
  search_per_min: number;
  other_per_min: number;
  export_per_min: number;
  changes_per_min: number;
  expires_on: string | null;
  revoked_at: Date | null;
  created_at: Date;
}

const KEY_COLUMNS = `k.id, k.name, k.search_per_min, k.other_per_min, k.export_per_min, k.changes_per_min,
  to_char(k.expires_on, 'YYYY-MM-DD') AS expires_on, k.revoked_at, k.created_at`;

function limitsOf(row: KeyRow): KeyLimits {
  return { search: row.search_per_min, other: row.other_per_min, export: row.export_per_min, changes: row.changes_per_min };
}

/** The moment a key with this last valid day stops working (the end of that UTC day). */
export function expiryMs(expiresOn: string | null): number {
  return expiresOn === null ? Infinity : Date.parse(`${expiresOn}T00:00:00Z`) + DAY_MS;
}

function statusOf(row: KeyRow, now: number): KeyStatus {
  if (row.revoked_at) return 'revoked';
  return now >= expiryMs(row.expires_on) ? 'expired' : 'active';
}

async function keyByName(db: Queryable, name: string, forUpdate = false): Promise<KeyRow> {
  const { rows } = await db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM auth.consumer_keys k WHERE k.name = $1${forUpdate ? ' FOR UPDATE' : ''}`, [name]);
  if (!rows[0]) throw new KeyNotFoundError(`no key is named ${JSON.stringify(name)}`);
  return rows[0];
}

async function addSecret(db: Queryable, keyId: string): Promise<string> {
  const key = newKey();
  await db.query('INSERT INTO auth.consumer_key_secrets (hash, key_id, prefix) VALUES ($1, $2, $3)', [hashKey(key), keyId, shownPrefix(key)]);
  return key;
}

export interface CreateKeyInput {
  name: string;
  limits?: Partial<KeyLimits>;
  /** Last valid day, YYYY-MM-DD (checked with parseExpiry by the caller). */
  expiresOn?: string | null;
}

export async function createKey(pool: Pool, input: CreateKeyInput): Promise<IssuedKey> {
  const name = parseKeyName(input.name);
  const limits: KeyLimits = { ...DEFAULT_KEY_LIMITS, ...input.limits };
  try {
    return await withTransaction(pool, async (db) => {
      const { rows } = await db.query<KeyRow>(
        `INSERT INTO auth.consumer_keys AS k (name, search_per_min, other_per_min, export_per_min, changes_per_min, expires_on)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${KEY_COLUMNS}`,
        [name, limits.search, limits.other, limits.export, limits.changes, input.expiresOn ?? null],
      );
      const row = rows[0]!;
      const key = await addSecret(db, row.id);
      return { name, key, prefix: shownPrefix(key), limits: limitsOf(row), expires_at: row.expires_on };
    });
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new KeyInputError(`a key named ${JSON.stringify(name)} exists already (names are never reused, revoked keys' included)`);
    throw err;
  }
}

export async function listKeys(db: Queryable, now = Date.now()): Promise<KeyInfo[]> {
  const { rows } = await db.query<KeyRow & { prefix: string; last_used_at: Date | null; retiring: Array<{ prefix: string; retires_at: string }> | null }>(
    `SELECT ${KEY_COLUMNS},
       (SELECT s.prefix FROM auth.consumer_key_secrets s WHERE s.key_id = k.id AND s.retires_at IS NULL ORDER BY s.created_at DESC LIMIT 1) AS prefix,
       (SELECT max(u.last_used_at) FROM auth.consumer_key_usage u WHERE u.key_id = k.id) AS last_used_at,
       (SELECT json_agg(json_build_object('prefix', s.prefix, 'retires_at', to_char(s.retires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')) ORDER BY s.retires_at)
          FROM auth.consumer_key_secrets s WHERE s.key_id = k.id AND s.retires_at > now()) AS retiring
     FROM auth.consumer_keys k ORDER BY k.name`,
  );
  return rows.map((row) => ({
    name: row.name,
    prefix: row.prefix,
    limits: limitsOf(row),
    expires_at: row.expires_on,
    status: statusOf(row, now),
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    retiring: row.revoked_at ? [] : (row.retiring ?? []),
  }));
}

/** Revokes a key: every secret of it stops working at once. Revoking twice changes nothing. */
export async function revokeKey(pool: Pool, name: string): Promise<KeyInfo> {
  await withTransaction(pool, async (db) => {
    const row = await keyByName(db, name, true);
    if (!row.revoked_at) await db.query('UPDATE auth.consumer_keys SET revoked_at = now(), updated_at = now() WHERE id = $1', [row.id]);
  });
  return (await listKeys(pool)).find((k) => k.name === name)!;
}

export interface KeyChanges {
  limits?: Partial<KeyLimits>;
  /** A new last valid day; null removes the expiry. */
  expiresOn?: string | null;
}

/** Changes a key's budgets (and expiry); every API process uses them within a second. */
export async function changeKey(pool: Pool, name: string, changes: KeyChanges): Promise<KeyInfo> {
  await withTransaction(pool, async (db) => {
    const row = await keyByName(db, name, true);
    if (row.revoked_at) throw new KeyInputError(`the key ${JSON.stringify(name)} is revoked; make a new one`);
    const limits: KeyLimits = { ...limitsOf(row), ...changes.limits };
    const expiresOn = changes.expiresOn === undefined ? row.expires_on : changes.expiresOn;
    await db.query(
      `UPDATE auth.consumer_keys SET search_per_min = $2, other_per_min = $3, export_per_min = $4, changes_per_min = $5, expires_on = $6, updated_at = now()
       WHERE id = $1`,
      [row.id, limits.search, limits.other, limits.export, limits.changes, expiresOn],
    );
  });
  return (await listKeys(pool)).find((k) => k.name === name)!;
}

/**
 * A new secret for a key; the secrets it had keep working for `graceHours` more (0: they stop
 * now), then stop. Budgets and usage stay the key's, whichever secret spends them.
 */
export async function rotateKey(pool: Pool, name: string, graceHours = DEFAULT_GRACE_HOURS): Promise<IssuedKey & { previous_retires_at: string }> {
  return withTransaction(pool, async (db) => {
    const row = await keyByName(db, name, true);
    if (row.revoked_at) throw new KeyInputError(`the key ${JSON.stringify(name)} is revoked; make a new one`);
    const { rows } = await db.query<{ retires_at: Date }>(
      `UPDATE auth.consumer_key_secrets SET retires_at = LEAST(coalesce(retires_at, 'infinity'), now() + make_interval(secs => $2::double precision * 3600))
       WHERE key_id = $1 AND (retires_at IS NULL OR retires_at > now()) RETURNING retires_at`,
      [row.id, graceHours],
    );
    const key = await addSecret(db, row.id);
    await db.query('UPDATE auth.consumer_keys SET updated_at = now() WHERE id = $1', [row.id]);
    const retiresAt = rows.reduce((latest, r) => Math.max(latest, r.retires_at.getTime()), Date.now());
    return { name, key, prefix: shownPrefix(key), limits: limitsOf(row), expires_at: row.expires_on, previous_retires_at: new Date(retiresAt).toISOString() };
  });
}

// ---------------------------------------------------------------------------------------------
// Usage

export const USAGE_COLUMNS = ['search', 'other', 'export', 'changes', 'refused'] as const;
export type UsageColumn = (typeof USAGE_COLUMNS)[number];

/** Requests of one key on one UTC day, as counted by the API processes. */
export interface UsageCount {
  readonly keyId: string;
  readonly day: string;
  readonly column: UsageColumn;
  readonly count: number;
}

export interface UsageDay {
  date: string;
  search: number;
  other: number;
  export: number;
  changes: number;
  refused: number;
}

/**
 * Adds a batch of counts to the keys' usage, once: a batch whose id was added before is skipped
 * (a process that wrote it and died before saying so hands it over again). Returns whether the
 * batch was added now. Counts of keys no longer in the table are dropped.
 */
export async function addUsage(pool: Pool, batch: string, counts: readonly UsageCount[], at = new Date()): Promise<boolean> {
  if (counts.length === 0) return false;
  return withTransaction(pool, async (db) => {
    const { rowCount } = await db.query('INSERT INTO auth.consumer_key_usage_batches (batch) VALUES ($1) ON CONFLICT DO NOTHING', [batch]);
    if (rowCount !== 1) return false;
    // One row per key and day, its columns summed.
    const rows = new Map<string, UsageDay & { keyId: string }>();
    for (const c of counts) {
      const id = `${c.keyId}|${c.day}`;
      let row = rows.get(id);
      if (!row) rows.set(id, (row = { keyId: c.keyId, date: c.day, search: 0, other: 0, export: 0, changes: 0, refused: 0 }));
      row[c.column] += c.count;
    }
    const list = [...rows.values()];
    await db.query(
      `INSERT INTO auth.consumer_key_usage AS u (key_id, day, search, other, export, changes, refused, last_used_at)
       SELECT t.key_id, t.day, t.search, t.other, t.export, t.changes, t.refused, $8
         FROM unnest($1::uuid[], $2::date[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
              AS t (key_id, day, search, other, export, changes, refused)
        WHERE EXISTS (SELECT 1 FROM auth.consumer_keys k WHERE k.id = t.key_id)
       ON CONFLICT (key_id, day) DO UPDATE SET
         search = u.search + EXCLUDED.search, other = u.other + EXCLUDED.other, export = u.export + EXCLUDED.export,
         changes = u.changes + EXCLUDED.changes, refused = u.refused + EXCLUDED.refused,
         last_used_at = GREATEST(u.last_used_at, EXCLUDED.last_used_at)`,
      [
        list.map((r) => r.keyId),
        list.map((r) => r.date),
        list.map((r) => r.search),
        list.map((r) => r.other),
        list.map((r) => r.export),
        list.map((r) => r.changes),
        list.map((r) => r.refused),
        at,
      ],
    );
    return true;
  });
}

/** A new batch id for addUsage. */
export function newUsageBatchId(): string {
  return randomUUID();
}

export interface KeyUsage {
  keys: Array<{ name: string; days: UsageDay[] }>;
}

/**
 * Usage per key (or of one key) for the last `days` UTC days, today included, oldest first;
 * every day is listed, with zeros where nothing was counted.
 */
export async function keyUsage(db: Queryable, opts: { name?: string; days: number; now?: number }): Promise<KeyUsage> {
  const now = opts.now ?? Date.now();
  const first = utcDay(now - (opts.days - 1) * DAY_MS);
  const keys = await db.query<{ id: string; name: string }>(
    `SELECT id, name FROM auth.consumer_keys ${opts.name === undefined ? '' : 'WHERE name = $1'} ORDER BY name`,
    opts.name === undefined ? [] : [opts.name],
  );
  if (opts.name !== undefined && keys.rows.length === 0) throw new KeyNotFoundError(`no key is named ${JSON.stringify(opts.name)}`);
  const { rows } = await db.query<UsageDay & { key_id: string }>(
    `SELECT key_id, to_char(day, 'YYYY-MM-DD') AS date, search, other, export, changes, refused
       FROM auth.consumer_key_usage WHERE key_id = ANY($1::uuid[]) AND day >= $2::date`,
    [keys.rows.map((k) => k.id), first],
  );
  const byKey = new Map<string, Map<string, UsageDay>>();
  for (const { key_id, ...day } of rows) {
    let days = byKey.get(key_id);
    if (!days) byKey.set(key_id, (days = new Map()));
    days.set(day.date, day);
  }
  return {
    keys: keys.rows.map((k) => ({
      name: k.name,
      days: Array.from({ length: opts.days }, (_, i) => {
        const date = utcDay(now - (opts.days - 1 - i) * DAY_MS);
        return byKey.get(k.id)?.get(date) ?? { date, search: 0, other: 0, export: 0, changes: 0, refused: 0 };
      }),
    })),
  };
}

/** Forgets usage older than USAGE_RETENTION_DAYS and the ids of batches added days ago; returns the key-days forgotten. */
export async function pruneKeyUsage(pool: Pool): Promise<number> {
  const { rowCount } = await pool.query(`DELETE FROM auth.consumer_key_usage WHERE day < (now() AT TIME ZONE 'UTC')::date - $1::int`, [USAGE_RETENTION_DAYS]);
  await pool.query(`DELETE FROM auth.consumer_key_usage_batches WHERE applied_at < now() - interval '3 days'`);
  return rowCount ?? 0;
}

// ---------------------------------------------------------------------------------------------
// Every key, for the API processes' table

/** A secret of a key as an API process holds it. */
export interface KeySecretRecord {
  readonly hash: Buffer;
  readonly keyId: string;
  readonly name: string;
  readonly limits: KeyLimits;
  /** When the key stops: the end of its last valid day, Infinity without one. */
  readonly expiresAtMs: number;
  readonly expiresOn: string | null;
  readonly revoked: boolean;
  /** When this secret stops after a rotation, Infinity while it is the current one. */
  readonly retiresAtMs: number;
}

export async function loadKeySecrets(db: Queryable): Promise<{ version: number; secrets: KeySecretRecord[] }> {
  const { rows } = await db.query<KeyRow & { hash: Buffer; retires_at: Date | null; version: number }>(
    `SELECT ${KEY_COLUMNS}, s.hash, s.retires_at, (SELECT version FROM auth.consumer_keys_state) AS version
       FROM auth.consumer_key_secrets s JOIN auth.consumer_keys k ON k.id = s.key_id`,
  );
  const version = rows[0]?.version ?? Number((await db.query<{ version: number }>('SELECT version FROM auth.consumer_keys_state')).rows[0]?.version ?? 0);
  return {
    version,
    secrets: rows.map((row) => ({
      hash: row.hash,
      keyId: row.id,
      name: row.name,
      limits: limitsOf(row),
      expiresAtMs: expiryMs(row.expires_on),
      expiresOn: row.expires_on,
      revoked: row.revoked_at !== null,
      retiresAtMs: row.retires_at ? row.retires_at.getTime() : Infinity,
    })),
  };
}

/**
 * The name under which this catalog's usage waits in Redis: a Redis may serve several catalogs
 * (deployments, test databases cloned from one template), and each must take only its own
 * counts. A random id made with the table, and the database's name.
 */
export async function usageSpace(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ space: string }>(`SELECT substr(md5(usage_space || ':' || current_database()), 1, 16) AS space FROM auth.consumer_keys_state`);
  return rows[0]!.space;
}

export async function keysVersion(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ version: number }>('SELECT version FROM auth.consumer_keys_state');
  return Number(rows[0]?.version ?? 0);
}
