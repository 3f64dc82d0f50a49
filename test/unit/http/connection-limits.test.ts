import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CatalogError, isHeldRefusal } from '../../../src/contract/errors.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { connectionCap, DEFAULT_MAX_CONNECTIONS, DESCRIPTOR_RESERVE, fileDescriptorLimit, serverTimeouts } from '../../../src/http/connection-limits.ts';
import { createHeldRequests } from '../../../src/http/feed/held-requests.ts';

const address = (id: string) => ({ kind: 'address', id }) as const;
const key = (id: string) => ({ kind: 'key', id }) as const;

describe('held requests: caps per address, per key and in all', () => {
  it('refuses past an address\'s cap with 429, past the total with 503, and takes again once released', () => {
    const held = createHeldRequests('long polls', { perAddress: 2, perKey: 3, total: 4 });
    const a1 = held.take(address('10.0.0.1'));
    const a2 = held.take(address('10.0.0.1'));
    expect(a1.ok && a2.ok).toBe(true);
    const a3 = held.take(address('10.0.0.1'));
    expect(a3.ok).toBe(false);
    const refused = !a3.ok ? a3.error : undefined;
    expect(refused).toBeInstanceOf(CatalogError);
    expect(refused).toMatchObject({ status: 429, code: 'TOO_MANY_REQUESTS', retryAfterSeconds: 5 });
    expect(isHeldRefusal(refused)).toBe(true);
    // Another address, and a key, have caps of their own.
    expect(held.take(address('10.0.0.2')).ok).toBe(true);
    expect(held.take(key('k1')).ok).toBe(true);
    expect(held.open).toBe(4);
    const full = held.take(address('10.0.0.3'));
    expect(!full.ok && full.error).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: 5 });
    expect(held.refused).toEqual({ holder: 1, total: 1 });
    // Released twice counts once.
    if (a1.ok) {
      a1.release();
      a1.release();
    }
    expect(held.open).toBe(3);
    expect(held.take(address('10.0.0.1')).ok).toBe(true);
    expect(held.take(address('10.0.0.1')).ok).toBe(false);
  });

  it('counts a key apart from the address it comes from, with the key\'s cap', () => {
    const held = createHeldRequests('exports', { perAddress: 1, perKey: 2, total: 100 });
    expect(held.take(address('k1')).ok).toBe(true);
    expect(held.take(key('k1')).ok).toBe(true);
    expect(held.take(key('k1')).ok).toBe(true);
    const third = held.take(key('k1'));
    expect(!third.ok && third.error.message).toBe('Too many exports open with this key at once (at most 2): finish one before starting another, or retry in about 5 s.');
  });
});

describe('the server\'s deadlines', () => {
  it('are by default those docs/connections.md states', () => {
    expect(serverTimeouts(loadConfig({}))).toEqual({
      connectionTimeout: 30_000,
      keepAliveTimeout: 72_000,
      requestTimeout: 30_000,
      http: { headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1000 },
    });
  });

  it('follow HEADERS_TIMEOUT_SECONDS and REQUEST_TIMEOUT_SECONDS', () => {
    expect(serverTimeouts(loadConfig({ HEADERS_TIMEOUT_SECONDS: '2', REQUEST_TIMEOUT_SECONDS: '4' }))).toMatchObject({
      requestTimeout: 4000,
      http: { headersTimeout: 2000, requestTimeout: 4000 },
    });
  });
});

describe('the connection cap', () => {
  it('is the setting when given, else 16,384 or the descriptor limit less the reserve, the lower', () => {
    expect(connectionCap(500, 20_000)).toBe(500);
    expect(connectionCap(undefined, 20_000)).toBe(DEFAULT_MAX_CONNECTIONS);
    expect(DEFAULT_MAX_CONNECTIONS).toBe(16_384);
    expect(connectionCap(undefined, 1_048_576)).toBe(16_384);
    expect(connectionCap(undefined, 4096)).toBe(4096 - DESCRIPTOR_RESERVE);
    expect(connectionCap(undefined, 100)).toBe(16);
    expect(connectionCap(undefined, undefined)).toBe(16_384);
  });

  it('reads the soft open-file limit from a /proc limits file', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'limits-'));
    const file = path.join(dir, 'limits');
    await writeFile(file, 'Limit                     Soft Limit           Hard Limit           Units\nMax open files            4096                 524288               files\n');
    expect(fileDescriptorLimit(file)).toBe(4096);
    expect(fileDescriptorLimit(path.join(dir, 'missing'))).toBeUndefined();
    expect(typeof fileDescriptorLimit()).toBe('number');
  });
});
