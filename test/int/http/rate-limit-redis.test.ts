import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { skipWithoutRedisServer, startTestRedis, type RedisServer } from '../../helpers/redis.ts';
import { freePort, startTestStack, type TestStack } from '../../helpers/stack.ts';
import { uniqueIp } from './rest-support.ts';

/**
 * Budgets shared through Redis (REDIS_URL): several API processes count one budget per IP, and
 * when Redis is unreachable, or goes away mid-run, requests are still served and limited in
 * memory. Each test uses client addresses of its own, and each describe a redis-server of its own.
 */
const skip = skipWithoutRedisServer('the tests of budgets shared through Redis');

const search = (app: FastifyInstance, ip: string) => app.inject({ method: 'GET', url: '/api/v1/search', remoteAddress: ip });
const categories = (app: FastifyInstance, ip: string) => app.inject({ method: 'GET', url: '/api/v1/categories', remoteAddress: ip });

describe.skipIf(skip)('two API processes on one Redis', () => {
  let redis: RedisServer | undefined;
  let a: TestStack;
  let b: TestStack;
  beforeAll(async () => {
    redis = await startTestRedis();
    const env = { REDIS_URL: redis.url };
    [a, b] = await Promise.all([startTestStack({ listen: false, env }), startTestStack({ listen: false, env })]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  test('searches spent on either count against one budget of 30', async () => {
    const ip = uniqueIp();
    for (let i = 1; i <= 30; i++) {
      const res = await search(i % 2 ? a.service.app : b.service.app, ip);
      expect(res.statusCode, `search ${i}`).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(30 - i));
    }
    for (const app of [a.service.app, b.service.app]) {
      const refused = await search(app, ip);
      expect(refused.statusCode).toBe(429);
      expect(refused.json().code).toBe('TOO_MANY_REQUESTS');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
  });

  test('other calls share one budget of 60 too, apart from searches', async () => {
    const ip = uniqueIp();
    for (let i = 1; i <= 60; i++) expect((await categories(i <= 40 ? a.service.app : b.service.app, ip)).statusCode).toBe(200);
    expect((await categories(a.service.app, ip)).statusCode).toBe(429);
    expect((await categories(b.service.app, ip)).statusCode).toBe(429);
    expect((await search(b.service.app, ip)).statusCode).toBe(200);
  });

  test('the budget lives in Redis under the service key prefix', async () => {
    const ip = uniqueIp();
    await search(a.service.app, ip);
    const client = new Redis(redis!.url);
    try {
      expect(await client.exists(`catalog:rl:search:${ip}`)).toBe(1);
      const ttl = await client.pttl(`catalog:rl:search:${ip}`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      client.disconnect();
    }
  });
});

describe('Redis unreachable from the start', () => {
  let stack: TestStack;
  beforeAll(async () => {
    // Nothing listens on this port: every Redis command fails at once.
    stack = await startTestStack({ listen: false, env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('requests are served and still limited in memory', async () => {
    const ip = uniqueIp();
    for (let i = 1; i <= 30; i++) {
      const res = await search(stack.service.app, ip);
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(30 - i));
    }
    const refused = await search(stack.service.app, ip);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect((await categories(stack.service.app, ip)).statusCode).toBe(200);
  });
});

describe.skipIf(skip)('Redis stopped mid-run', () => {
  /** A Redis server of this test's own, so stopping it disturbs nobody else. */
  let redis: RedisServer | undefined;
  let stack: TestStack;
  beforeAll(async () => {
    redis = await startTestRedis();
    stack = await startTestStack({ listen: false, env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await stack?.stop();
    await redis?.stop();
  });

  test('requests keep being served and limited after Redis goes away', async () => {
    const ip = uniqueIp();
    for (let i = 0; i < 5; i++) expect((await search(stack.service.app, ip)).statusCode).toBe(200);

    await redis!.stop();

    // Served from the in-memory insurance budget from now on.
    const fresh = uniqueIp();
    for (let i = 1; i <= 30; i++) {
      const res = await search(stack.service.app, fresh);
      expect(res.statusCode, `search ${i}`).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(30 - i));
    }
    expect((await search(stack.service.app, fresh)).statusCode).toBe(429);
    expect((await categories(stack.service.app, fresh)).statusCode).toBe(200);
    expect((await stack.service.app.inject({ url: '/api/v1/products/pixel-forge', remoteAddress: fresh })).statusCode).toBe(200);
  });
});
