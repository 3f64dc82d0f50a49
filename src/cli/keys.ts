import {
  changeKey,
  createKey,
  DEFAULT_GRACE_HOURS,
  DEFAULT_KEY_LIMITS,
  KEY_FAMILIES,
  KeyInputError,
  keyUsage,
  KeyNotFoundError,
  listKeys,
  MAX_GRACE_HOURS,
  parseExpiry,
  parseGraceHours,
  parseKeyLimit,
  parseKeyName,
  revokeKey,
  rotateKey,
  USAGE_RETENTION_DAYS,
  type KeyFamily,
  type KeyInfo,
  type KeyLimits,
} from '../auth/consumer-keys/consumer-keys.ts';
import { configFromArgs, parseCommandArgs } from './common.ts';
import { withWriteModel } from './with-write-model.ts';

const n = (v: number) => v.toLocaleString('en-US');

const HELP = `usage: catalog keys create NAME [--searches-per-min N] [--other-per-min N] [--export-per-min N]
                          [--changes-per-min N] [--expires YYYY-MM-DD]
       catalog keys list
       catalog keys set NAME [--searches-per-min N] [--other-per-min N] [--export-per-min N]
                          [--changes-per-min N] [--expires YYYY-MM-DD | --no-expiry]
       catalog keys rotate NAME [--grace-hours H]
       catalog keys revoke NAME
       catalog keys usage [NAME] [--days N]
       Every command also takes --json (one JSON object on stdout) and --data-dir DIR.

Consumer keys give a client budgets of its own instead of its address's (docs/keys.md). The
client sends its key as "Authorization: Bearer ck_…" on /api/v1 and /api/mcp.

create   makes a key and prints it, this once: only its hash is kept. NAME is 1 to 64 of a-z,
         0-9 and -, and unique. Budgets left out are ${n(DEFAULT_KEY_LIMITS.search)} searches, ${n(DEFAULT_KEY_LIMITS.other)} other calls, ${n(DEFAULT_KEY_LIMITS.export)} exports
         and ${n(DEFAULT_KEY_LIMITS.changes)} change-feed requests a minute (an address has 30, 60, 6 and 120).
         --expires names the key's last valid day (UTC).
list     every key: status, the start of its secret, budgets, expiry, last use.
set      changes a key's budgets (or expiry); every API process uses them within a second.
rotate   makes a new secret for the key and prints it; the old one keeps working for H hours
         (default ${DEFAULT_GRACE_HOURS}, 0 to ${MAX_GRACE_HOURS}), then stops. Budgets and usage stay the key's.
revoke   stops the key, every secret of it, on every API process within a second.
usage    requests answered per UTC day (search, other, export, changes) and refused (429), for
         every key or one, over the last N days (default 30, at most ${USAGE_RETENTION_DAYS}).

Exit status: 0 done; 1 no key has that name; 2 bad input (the reason on stderr).`;

const LIMIT_OPTIONS: Readonly<Record<string, KeyFamily>> = {
  'searches-per-min': 'search',
  'other-per-min': 'other',
  'export-per-min': 'export',
  'changes-per-min': 'changes',
};

const OPTIONS = {
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  'searches-per-min': { type: 'string' },
  'other-per-min': { type: 'string' },
  'export-per-min': { type: 'string' },
  'changes-per-min': { type: 'string' },
  expires: { type: 'string' },
  'no-expiry': { type: 'boolean' },
  'grace-hours': { type: 'string' },
  days: { type: 'string' },
} as const;

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** Which options each command takes (--json and --data-dir are everyone's). */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  create: [...Object.keys(LIMIT_OPTIONS), 'expires'],
  list: [],
  set: [...Object.keys(LIMIT_OPTIONS), 'expires', 'no-expiry'],
  rotate: ['grace-hours'],
  revoke: [],
  usage: ['days'],
};

function limitsFrom(values: Values): Partial<KeyLimits> {
  const limits: Partial<Record<KeyFamily, number>> = {};
  for (const [option, family] of Object.entries(LIMIT_OPTIONS)) {
    const value = values[option as keyof Values];
    if (typeof value === 'string') limits[family] = parseKeyLimit(`--${option}`, value);
  }
  return limits;
}

function limitsText(limits: KeyLimits): string {
  return `${n(limits.search)} searches, ${n(limits.other)} other calls, ${n(limits.export)} exports, ${n(limits.changes)} change-feed requests a minute`;
}

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

function listText(keys: KeyInfo[]): string {
  if (keys.length === 0) return 'No keys yet: catalog keys create NAME makes one.';
  return table(
    ['NAME', 'STATUS', 'KEY', ...KEY_FAMILIES.map((f) => `${f.toUpperCase()}/MIN`), 'EXPIRES', 'LAST USED'],
    keys.map((k) => [
      k.name,
      k.status,
      `${k.prefix}…${k.retiring.length ? ` (+${k.retiring.length} retiring)` : ''}`,
      ...KEY_FAMILIES.map((f) => n(k.limits[f])),
      k.expires_at ?? '-',
      k.last_used_at ?? '-',
    ]),
  );
}

export default async function keysCommand(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(args, OPTIONS, HELP, { allowPositionals: true });
  if ('exitCode' in parsed) return parsed.exitCode;
  const values = parsed.values as Values;
  const [command, name, ...extra] = parsed.positionals;
  const fail = (message: string, status = 2) => {
    console.error(`catalog keys: ${message}`);
    return status;
  };
  if (command === undefined) return fail(`expected a command: create, list, set, rotate, revoke or usage\n\n${HELP}`);
  const allowed = ALLOWED[command];
  if (!allowed) return fail(`unknown command '${command}': expected create, list, set, rotate, revoke or usage`);
  const given = Object.keys(values).filter((o) => o !== 'json' && o !== 'data-dir' && values[o as keyof Values] !== undefined);
  const misplaced = given.filter((o) => !allowed.includes(o));
  if (misplaced.length) return fail(`'${command}' does not take ${misplaced.map((o) => `--${o}`).join(', ')}`);
  const needsName = command !== 'list' && command !== 'usage';
  if (extra.length > 0 || (command === 'list' && name !== undefined)) return fail(`'${command}' takes ${needsName || command === 'usage' ? 'one NAME' : 'no NAME'}`);
  if (needsName && name === undefined) return fail(`'${command}' needs the key's NAME`);
  const json = values.json === true;

  try {
    // Every input is checked before the database is opened.
    const keyName = name === undefined ? undefined : parseKeyName(name);
    const limits = limitsFrom(values);
    if (values.expires !== undefined && values['no-expiry']) throw new KeyInputError('give --expires or --no-expiry, not both');
    const expiresOn = values.expires !== undefined ? parseExpiry(values.expires) : values['no-expiry'] ? null : undefined;
    const grace = values['grace-hours'] !== undefined ? parseGraceHours(values['grace-hours']) : DEFAULT_GRACE_HOURS;
    let days = 30;
    if (values.days !== undefined) {
      if (!/^\d+$/.test(values.days.trim()) || Number(values.days) < 1 || Number(values.days) > USAGE_RETENTION_DAYS) {
        throw new KeyInputError(`--days must be a whole number from 1 to ${USAGE_RETENTION_DAYS}, not ${JSON.stringify(values.days)}`);
      }
      days = Number(values.days);
    }
    if (command === 'set' && Object.keys(limits).length === 0 && expiresOn === undefined) {
      throw new KeyInputError("'set' needs something to change: a budget (--searches-per-min N, …), --expires or --no-expiry");
    }

    const config = configFromArgs(values);
    return await withWriteModel(config, 'keys', async (pool) => {
      switch (command) {
        case 'create': {
          const issued = await createKey(pool, { name: keyName!, limits, ...(expiresOn !== undefined && { expiresOn }) });
          if (json) printJson(issued);
          else {
            console.error(`Made the key "${issued.name}": ${limitsText(issued.limits)}; ${issued.expires_at ? `works through ${issued.expires_at} (UTC)` : 'no expiry'}.`);
            console.error('Here it is, this once (only its hash is kept): hand it to its client now.');
            process.stdout.write(`${issued.key}\n`);
          }
          return 0;
        }
        case 'list': {
          const keys = await listKeys(pool);
          if (json) printJson({ keys });
          else process.stdout.write(`${listText(keys)}\n`);
          return 0;
        }
        case 'set': {
          const key = await changeKey(pool, keyName!, { limits, ...(expiresOn !== undefined && { expiresOn }) });
          if (json) printJson(key);
          else process.stdout.write(`The key "${key.name}" now has ${limitsText(key.limits)}; ${key.expires_at ? `works through ${key.expires_at} (UTC)` : 'no expiry'}.\n`);
          return 0;
        }
        case 'rotate': {
          const issued = await rotateKey(pool, keyName!, grace);
          if (json) printJson(issued);
          else {
            console.error(`A new secret for the key "${issued.name}"; the previous one works until ${issued.previous_retires_at}, then stops.`);
            console.error('Here it is, this once (only its hash is kept):');
            process.stdout.write(`${issued.key}\n`);
          }
          return 0;
        }
        case 'revoke': {
          const key = await revokeKey(pool, keyName!);
          if (json) printJson(key);
          else process.stdout.write(`The key "${key.name}" is revoked (since ${key.revoked_at}): every API process refuses it within a second.\n`);
          return 0;
        }
        default: {
          const usage = await keyUsage(pool, { ...(keyName !== undefined && { name: keyName }), days });
          if (json) printJson(usage);
          else {
            const blocks = usage.keys.map(
              (k) =>
                `${k.name}\n${table(
                  ['DATE', 'SEARCH', 'OTHER', 'EXPORT', 'CHANGES', 'REFUSED'],
                  k.days.map((d) => [d.date, n(d.search), n(d.other), n(d.export), n(d.changes), n(d.refused)]),
                )}`,
            );
            process.stdout.write(`${blocks.length ? blocks.join('\n\n') : 'No keys yet.'}\n`);
          }
          return 0;
        }
      }
    });
  } catch (err) {
    if (err instanceof KeyInputError) return fail(err.message, 2);
    if (err instanceof KeyNotFoundError) return fail(err.message, 1);
    throw err;
  }
}
