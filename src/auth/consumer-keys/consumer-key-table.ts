import type { Pool } from '../../db/pool.ts';
import { createListener, type Subscriber } from '../../db/listen.ts';
import { createCoalescedRunner } from '../../util/coalesced-runner.ts';
import type { Log } from '../../util/log.ts';
import { hashKey, keyShapeProblem, keysVersion, loadKeySecrets, KEY_LENGTH, KEY_PREFIX, type KeyLimits, type KeySecretRecord } from './consumer-keys.ts';

/**
 * Every consumer key, held in the memory of each API process so that a request costs a map
 * lookup, not a query: loaded at start, loaded again whenever `consumer_keys_changed` is
 * notified (a key made, changed, rotated or revoked), with a poll of the change counter every
 * second as the backstop for a lost notification. Revoking, rotating or changing budgets so
 * reaches every process within a second; while the database is away the last table stays.
 */
export interface ConsumerKey {
  readonly id: string;
  readonly name: string;
  readonly limits: KeyLimits;
}

type KeyRefusal = 'malformed' | 'unknown' | 'revoked' | 'expired';

export type KeyCheck = { readonly ok: true; readonly key: ConsumerKey } | { readonly ok: false; readonly reason: KeyRefusal; readonly message: string };

export interface KeyTable {
  /** The key an Authorization header value names, or why it names none. */
  check(authorization: string, now?: number): KeyCheck;
  /** Called after every reload of the table (revocations, rotations, new budgets). */
  onChange(listener: () => void): () => void;
  /** Loads the table now. */
  refresh(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Longer than this, an Authorization value is not looked at further. */
const MAX_HEADER_LENGTH = 256;
/** Recently checked keys, kept so that a key seen again is not hashed again. */
const RECENT_MAX = 10_000;
const POLL_MS = 1000;

/** What is shown back of a scheme other than Bearer: a short name such as Basic, Digest or Token. */
const SCHEME_NAME = /^[A-Za-z][A-Za-z0-9-]{0,15}$/;

export const MALFORMED_HEADER = `The Authorization header must be "Bearer" followed by a key of this service ("Bearer ${KEY_PREFIX}…")`;

function malformed(detail: string): KeyCheck {
  return { ok: false, reason: 'malformed', message: `${MALFORMED_HEADER}: ${detail}.` };
}

/** The key in an Authorization header value, or the refusal of a value that holds none. */
export function keyOfHeader(value: string): string | KeyCheck {
  if (value.length > MAX_HEADER_LENGTH) return malformed(`this one is ${value.length} characters long, a key ${KEY_LENGTH}`);
  const text = value.trim();
  const scheme = /^(\S+)(?:\s+(.*))?$/.exec(text);
  if (!scheme) return malformed('it is empty');
  if (scheme[1]!.toLowerCase() !== 'bearer') {
    // A scheme's name is shown; anything else in its place (a key or another service's secret
    // sent without "Bearer") is never echoed back, not even its start.
    return malformed(SCHEME_NAME.test(scheme[1]!) ? `it uses the "${scheme[1]!}" scheme` : 'it does not start with "Bearer"');
  }
  const token = scheme[2];
  if (token === undefined || token === '') return malformed('no key follows "Bearer"');
  if (/\s/.test(token)) return malformed('the key may not contain spaces');
  // Non-ASCII (or control) characters: no key has them, and they are not echoed back.
  if (!/^[\x21-\x7e]+$/.test(token)) return malformed('a key has letters and digits only');
  const problem = keyShapeProblem(token);
  return problem === undefined ? token : malformed(problem);
}

export function createKeyTable(opts: { pool: Pool; connectionString: string; log?: Log; pollMs?: number }): KeyTable {
  let byHash = new Map<string, { record: KeySecretRecord; key: ConsumerKey }>();
  let recent = new Map<string, { record: KeySecretRecord; key: ConsumerKey } | null>();
  let version = -1;
  const listeners = new Set<() => void>();
  let subscriber: Subscriber | undefined;
  let timer: NodeJS.Timeout | undefined;
  let failing = false;

  const load = async () => {
    const { version: v, secrets } = await loadKeySecrets(opts.pool);
    const keys = new Map<string, ConsumerKey>();
    const next = new Map<string, { record: KeySecretRecord; key: ConsumerKey }>();
    for (const record of secrets) {
      let key = keys.get(record.keyId);
      if (!key) keys.set(record.keyId, (key = { id: record.keyId, name: record.name, limits: record.limits }));
      next.set(record.hash.toString('base64'), { record, key });
    }
    byHash = next;
    recent = new Map();
    version = v;
    for (const listener of listeners) listener();
  };

  /** One load at a time; a request for one during a load makes one more after it. */
  const loader = createCoalescedRunner(load);
  const refresh = () => loader.run();

  const refreshQuietly = () =>
    void refresh().then(
      () => {
        if (failing) opts.log?.info({}, 'consumer keys loaded again');
        failing = false;
      },
      (err: unknown) => {
        if (!failing) opts.log?.warn({ err }, 'could not load the consumer keys; the last loaded ones stay in use');
        failing = true;
      },
    );

  const poll = async () => {
    try {
      if ((await keysVersion(opts.pool)) !== version) refreshQuietly();
    } catch {
      // The database is away: the table stays as it is, and the next poll tries again.
    }
  };

  return {
    check(authorization, now = Date.now()) {
      let found = recent.get(authorization);
      if (found === undefined) {
        const token = keyOfHeader(authorization);
        if (typeof token !== 'string') return token;
        found = byHash.get(hashKey(token).toString('base64')) ?? null;
        if (recent.size >= RECENT_MAX) recent.clear();
        recent.set(authorization, found);
      }
      if (found === null) return { ok: false, reason: 'unknown', message: 'This key is not known here: check that it was copied whole, or ask the operator for a new one.' };
      const { record, key } = found;
      if (record.revoked) return { ok: false, reason: 'revoked', message: 'This key was revoked by the operator.' };
      if (now >= record.expiresAtMs) return { ok: false, reason: 'expired', message: `This key expired: its last day was ${record.expiresOn} (UTC).` };
      if (now >= record.retiresAtMs) {
        return { ok: false, reason: 'expired', message: `This key was replaced by a newer one; it stopped working at ${new Date(record.retiresAtMs).toISOString()}.` };
      }
      return { ok: true, key };
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    refresh,
    async start() {
      const listener = createListener(opts.connectionString);
      subscriber = listener;
      listener.events.on('error', (err: unknown) => opts.log?.warn({ err }, 'consumer_keys_changed listener failed'));
      listener.events.on('reconnect', () => refreshQuietly());
      listener.notifications.on('consumer_keys_changed', () => refreshQuietly());
      const listening = (async () => {
        await listener.connect();
        await listener.listenTo('consumer_keys_changed');
      })().catch((err: unknown) => opts.log?.warn({ err }, 'could not listen for consumer_keys_changed; polling only'));
      await refresh();
      await listening;
      timer = setInterval(() => void poll(), opts.pollMs ?? POLL_MS);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await subscriber?.close().catch(() => undefined);
      subscriber = undefined;
      await loader.current?.catch(() => undefined);
    },
  };
}
