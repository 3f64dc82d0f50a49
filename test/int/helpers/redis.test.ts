import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { skipWithoutRedisServer, startTestRedis, type RedisServer } from '../../helpers/redis.ts';

/**
 * The tests' Redis (test/helpers/redis.ts): each test that needs one gets a redis-server of its
 * own on a spare loopback port; without the binary, its tests are skipped with one line, or fail
 * under CI.
 */
const skip = skipWithoutRedisServer('the tests of the tests\' own redis-server');

const servers: RedisServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop();
});

async function ask(url: string, run: (redis: Redis) => Promise<unknown>): Promise<unknown> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await run(redis);
  } finally {
    redis.disconnect();
  }
}

/** The error connecting to a loopback port gives, or 'connected'. */
function connectTo(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

describe.skipIf(skip)('a redis-server of the test\'s own', () => {
  it('answers on a loopback port of its own, apart from any other', async () => {
    const [a, b] = await Promise.all([startTestRedis(), startTestRedis()]);
    servers.push(a, b);
    expect(a.port).not.toBe(b.port);
    expect(new URL(a.url).hostname).toBe('127.0.0.1');
    expect(new URL(a.url).port).toBe(String(a.port));
    await ask(a.url, (r) => r.set('only-in-a', '1'));
    expect(await ask(a.url, (r) => r.get('only-in-a'))).toBe('1');
    expect(await ask(b.url, (r) => r.get('only-in-a'))).toBeNull();
  });

  it('stops (its port refuses), and starts again on the same port, empty', async () => {
    const redis = await startTestRedis();
    servers.push(redis);
    await ask(redis.url, (r) => r.set('kept?', 'yes'));
    await redis.stop();
    expect(redis.running).toBe(false);
    expect(await connectTo(redis.port)).toBe('ECONNREFUSED');
    await redis.start();
    expect(redis.running).toBe(true);
    expect(await ask(redis.url, (r) => r.ping())).toBe('PONG');
    // No persistence: nothing of a run outlives its server.
    expect(await ask(redis.url, (r) => r.get('kept?'))).toBeNull();
  });
});

describe('without redis-server on the PATH', () => {
  let empty: string;
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  afterEach(() => log.mockClear());
  afterAll(async () => {
    log.mockRestore();
    if (empty) await rm(empty, { recursive: true, force: true });
  });

  it('skips, saying so in one line; under CI=true it does not skip, and starting fails saying what to install', async () => {
    empty = await mkdtemp(path.join(os.tmpdir(), 'catalog-no-redis-'));
    const env = { PATH: empty };
    expect(skipWithoutRedisServer('the example tests', env)).toBe(true);
    expect(log.mock.calls).toEqual([['redis-server not found (apt-get install redis-server): skipping the example tests']]);
    log.mockClear();
    expect(skipWithoutRedisServer('the example tests', { ...env, CI: 'true' })).toBe(false);
    await expect(startTestRedis(env)).rejects.toThrow('redis-server not found on the PATH: the Redis tests need it (apt-get install redis-server)');
    expect(log).not.toHaveBeenCalled();
  });

  it.skipIf(skip)('with it on the PATH, nothing is skipped or said', () => {
    expect(skipWithoutRedisServer('the example tests')).toBe(false);
    expect(log).not.toHaveBeenCalled();
  });
});
