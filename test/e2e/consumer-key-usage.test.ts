import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyUsage } from '../../src/auth/consumer-keys/consumer-keys.ts';
import { runCatalogCommand } from '../helpers/review.ts';
import { freePort, startTestStack, type TestStack } from '../helpers/stack.ts';
import { skipWithoutRedisServer, startTestRedis, type RedisServer } from '../helpers/redis.ts';

/**
 * A consumer key's usage, end to end: two `catalog api` processes (child processes of
 * bin/catalog.js) on one database and a redis-server of this test's own; a client spends one key
 * on both, by every family, past its limits, while one process is killed with SIGKILL right after
 * a burst of its answers, and started again. Afterwards `catalog keys usage NAME --json` equals
 * exactly what the client saw answered: each family, and the refusals (429).
 */
const CLI = path.resolve('bin/catalog.js');
// It kills processes next to a Redis of its own: skipped with one line without redis-server, except under CI, where it fails.
const skip = skipWithoutRedisServer('the consumer key usage run');

type Family = 'search' | 'other' | 'export' | 'changes';
type Counts = Record<Family | 'refused', number>;

interface ApiProcess {
  readonly name: string;
  readonly url: string;
  child: ChildProcess | undefined;
  output: string;
}

/** Starts `catalog api` on the process's own port; resolves once it answers /readyz 200. */
async function start(api: ApiProcess, env: Record<string, string>): Promise<void> {
  const port = new URL(api.url).port;
  const child = spawn(process.execPath, [CLI, 'api'], { env: { ...process.env, ...env, PORT: port }, stdio: ['ignore', 'pipe', 'pipe'] });
  api.child = child;
  child.stdout!.on('data', (d: Buffer) => (api.output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (api.output += d.toString()));
  child.once('exit', () => {
    if (api.child === child) api.child = undefined;
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    const status = await fetch(`${api.url}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    if (!api.child) throw new Error(`${api.name} exited while starting:\n${api.output.slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`${api.name} did not become ready:\n${api.output.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Signals the process this test started, by its pid; resolves once it has exited. */
async function signal(api: ApiProcess, sig: 'SIGKILL' | 'SIGTERM'): Promise<number | string | null> {
  const child = api.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, sigName) => resolve(code ?? sigName)));
  process.kill(child.pid!, sig);
  return exited;
}

function get(base: string, path: string, key: string): Promise<number> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    // A connection per request: none is left pooled to a process about to be killed.
    const req = http.request({ host: url.hostname, port: url.port, path, headers: { authorization: `Bearer ${key}` }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const PATHS: Record<Family, (i: number) => string> = {
  search: (i) => (i % 2 ? '/api/v1/search?q=pixel' : `/api/v1/search?q=note&limit=${(i % 5) + 1}`),
  other: (i) => (i % 2 ? '/api/v1/categories' : '/api/v1/products/pixel-forge'),
  export: () => '/api/v1/export',
  changes: () => '/api/v1/changes?limit=1',
};
const FAMILIES: Family[] = ['search', 'other', 'search', 'export', 'changes', 'other', 'search', 'changes'];

describe.skipIf(skip)('a consumer key\'s usage across API processes, one killed with SIGKILL', () => {
  let stack: TestStack;
  let redis: RedisServer;
  let env: Record<string, string>;
  const apis: ApiProcess[] = [];

  beforeAll(async () => {
    // The database, seeded and projected (the projector keeps running in this process).
    [stack, redis] = await Promise.all([startTestStack({ listen: false }), startTestRedis()]);
    const ports = [await freePort(), await freePort()];
    for (const [i, port] of ports.entries()) apis.push({ name: `api-${i + 1}`, url: `http://127.0.0.1:${port}`, child: undefined, output: '' });
    env = {
      DATABASE_URL: stack.db.url,
      REDIS_URL: redis.url,
      HOST: '127.0.0.1',
      PUBLIC_URL: apis[0]!.url,
      SITE_URL: apis[0]!.url,
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      MEILI_URL: '',
      SMTP_URL: '',
    };
  }, 120_000);

  afterAll(async () => {
    for (const api of apis) await signal(api, 'SIGKILL');
    await stack?.stop();
    await redis?.stop();
  });

  it('catalog keys usage equals what the client saw answered, by family and refused', async () => {
    const made = await runCatalogCommand(['keys', 'create', 'e2e-client', '--searches-per-min', '25', '--export-per-min', '3', '--changes-per-min', '1000', '--json'], env);
    expect(made.code, made.stderr).toBe(0);
    const { key } = JSON.parse(made.stdout) as { key: string };
    await Promise.all(apis.map((api) => start(api, env)));
    const [a, b] = apis as [ApiProcess, ApiProcess];

    const seen: Counts = { search: 0, other: 0, export: 0, changes: 0, refused: 0 };
    let n = 0;
    const request = async (api: ApiProcess) => {
      const family = FAMILIES[n % FAMILIES.length]!;
      const status = await get(api.url, PATHS[family](n), key);
      n++;
      expect(status, `${api.name} ${family}`).toBeLessThan(500);
      if (status === 429) seen.refused++;
      else seen[family]++;
    };

    for (let i = 0; i < 60; i++) await request(i % 2 ? a : b);
    // A burst on one process, then SIGKILL straight after its last answer: whatever it had not
    // moved to PostgreSQL yet must not be lost.
    for (let i = 0; i < 25; i++) await request(a);
    expect(await signal(a, 'SIGKILL')).toBe('SIGKILL');
    for (let i = 0; i < 30; i++) await request(b);
    await start(a, env);
    for (let i = 0; i < 40; i++) await request(i % 2 ? a : b);
    for (let i = 0; i < 15; i++) await request(b);
    expect(await signal(b, 'SIGKILL')).toBe('SIGKILL');
    for (let i = 0; i < 10; i++) await request(a);

    expect(seen.refused, JSON.stringify(seen)).toBeGreaterThan(0);
    expect(seen.search + seen.other + seen.export + seen.changes + seen.refused).toBe(n);

    // The survivor moves what is waiting in Redis to PostgreSQL within a second or so.
    const recorded = async (): Promise<Counts> => {
      const total: Counts = { search: 0, other: 0, export: 0, changes: 0, refused: 0 };
      for (const day of (await keyUsage(stack.db.pool, { name: 'e2e-client', days: 2 })).keys[0]!.days) {
        for (const column of Object.keys(total) as Array<keyof Counts>) total[column] += day[column];
      }
      return total;
    };
    const deadline = Date.now() + 15_000;
    while (JSON.stringify(await recorded()) !== JSON.stringify(seen) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await recorded()).toEqual(seen);

    // A clean stop writes nothing twice.
    expect(await signal(a, 'SIGTERM')).toBe(0);
    const usage = await runCatalogCommand(['keys', 'usage', 'e2e-client', '--days', '2', '--json'], env);
    expect(usage.code, usage.stderr).toBe(0);
    const { keys } = JSON.parse(usage.stdout) as { keys: Array<{ name: string; days: Array<Counts & { date: string }> }> };
    expect(keys.map((k) => k.name)).toEqual(['e2e-client']);
    const total: Counts = { search: 0, other: 0, export: 0, changes: 0, refused: 0 };
    for (const day of keys[0]!.days) for (const column of Object.keys(total) as Array<keyof Counts>) total[column] += day[column];
    expect(total).toEqual(seen);
  }, 240_000);
});
