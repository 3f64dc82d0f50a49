import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { registerErrorHandling } from '../../../src/http/errors.ts';
import { createMetrics } from '../../../src/http/metrics.ts';
import { createBudgets } from '../../../src/budgets/budgets.ts';
import { createLeaseStore, type LeaseStore } from '../../../src/budgets/lease-store.ts';
import { rateLimitHeaders } from '../../../src/budgets/rate-limit-headers.ts';
import type { Bucket, Counted } from '../../../src/budgets/verdict.ts';
import { registerRest } from '../../../src/http/rest.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { uniqueIp } from './rest-support.ts';

/**
 * Per-IP budgets of the REST API (spec section 8) in one process (no REDIS_URL: memory):
 * 30 searches and 60 other calls a minute, separate buckets, 429 until the window ends.
 */
let stack: TestStack;
let app: FastifyInstance;

beforeAll(async () => {
  stack = await startTestStack({ listen: false });
  app = stack.service.app;
});
afterAll(async () => {
  await stack?.stop();
});

const from = (ip: string, url: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url, remoteAddress: ip, headers });

function expectRateHeaders(res: LightMyRequestResponse, bucket: string, limit: number, remaining: number): void {
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe(String(remaining));
  const reset = Number(res.headers['x-ratelimit-reset']);
  const now = Math.floor(Date.now() / 1000);
  expect(reset).toBeGreaterThanOrEqual(now);
  expect(reset).toBeLessThanOrEqual(now + 61);
  expect(res.headers['ratelimit-policy']).toBe(`"${bucket}";q=${limit};w=60`);
  expect(res.headers.ratelimit).toMatch(new RegExp(`^"${bucket}";r=${remaining};t=([1-9]|[1-5]\\d|60)$`));
}

function expectRefusal(res: LightMyRequestResponse, bucket: string, limit: number): void {
  expect(res.statusCode).toBe(429);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(['code', 'message']);
  expect(body.code).toBe('TOO_MANY_REQUESTS');
  expect(body.message).toMatch(/slow down/i);
  expect(body.message).toMatch(/retry shortly/i);
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expectRateHeaders(res, bucket, limit, 0);
  expect(res.headers.ratelimit).toBe(`"${bucket}";r=0;t=${retryAfter}`);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['access-control-allow-origin']).toBe('*');
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
}

describe('search bucket: 30 a minute', () => {
  test('30 searches pass with the count going down; the 31st is 429; other calls are a separate budget', async () => {
    const ip = uniqueIp();
    for (let i = 1; i <= 30; i++) {
      const res = await from(ip, `/api/v1/search?page=${i}`);
      expect(res.statusCode, `search ${i}`).toBe(200);
      expectRateHeaders(res, 'search', 30, 30 - i);
      expect(res.headers['retry-after']).toBeUndefined();
    }
    const refused = await from(ip, '/api/v1/search');
    expectRefusal(refused, 'search', 30);

    // Still refused until the window ends, whatever the query.
    expectRefusal(await from(ip, '/api/v1/search?q=pixel'), 'search', 30);

    const other = await from(ip, '/api/v1/categories');
    expect(other.statusCode).toBe(200);
    expectRateHeaders(other, 'other', 60, 59);
    // Another address is not affected.
    expect((await from(uniqueIp(), '/api/v1/search')).statusCode).toBe(200);
  });

  test('invalid searches spend the budget too: limiting happens before validation', async () => {
    const ip = uniqueIp();
    for (let i = 0; i < 30; i++) expect((await from(ip, '/api/v1/search?page=0')).statusCode).toBe(400);
    expectRefusal(await from(ip, '/api/v1/search'), 'search', 30);
  });

  test('304 answers count and carry the headers', async () => {
    const ip = uniqueIp();
    const first = await from(ip, '/api/v1/search');
    const again = await from(ip, '/api/v1/search', { 'if-none-match': first.headers.etag as string });
    expect(again.statusCode).toBe(304);
    expectRateHeaders(again, 'search', 30, 28);
  });
});

describe('other bucket: 60 a minute', () => {
  test('categories, products, 404s, the OpenAPI document and the reference page share 60; the 61st is 429', async () => {
    const ip = uniqueIp();
    const urls = ['/api/v1/categories', '/api/v1/products/pixel-forge', '/api/v1/products/draft-idea', '/api/v1/openapi.json', '/api/v1/docs', '/api/v1/no-such-route'];
    for (let i = 1; i <= 60; i++) {
      const url = urls[i % urls.length]!;
      const res = await from(ip, url);
      expect(res.statusCode, `${url} (${i})`).toBeLessThan(429);
      expectRateHeaders(res, 'other', 60, 60 - i);
    }
    for (const url of urls) expectRefusal(await from(ip, url), 'other', 60);
    const search = await from(ip, '/api/v1/search');
    expect(search.statusCode).toBe(200);
    expectRateHeaders(search, 'search', 30, 29);
  });

  test('operations endpoints are outside the budgets', async () => {
    const ip = uniqueIp();
    for (let i = 0; i < 70; i++) {
      const res = await from(ip, i % 2 ? '/healthz' : '/readyz');
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});

describe('client address', () => {
  test('without TRUST_PROXY, X-Forwarded-For cannot buy a fresh budget', async () => {
    const ip = uniqueIp();
    for (let i = 0; i < 30; i++) await from(ip, '/api/v1/search', { 'x-forwarded-for': uniqueIp() });
    expectRefusal(await from(ip, '/api/v1/search', { 'x-forwarded-for': uniqueIp() }), 'search', 30);
  });

  test('with TRUST_PROXY=true, the forwarded client address is the one limited', async () => {
    const proxied = await startTestStack({ listen: false, env: { TRUST_PROXY: 'true' } });
    try {
      const proxy = uniqueIp();
      const client = uniqueIp();
      const send = (forwardedFor: string) =>
        proxied.service.app.inject({ method: 'GET', url: '/api/v1/search', remoteAddress: proxy, headers: { 'x-forwarded-for': forwardedFor } });
      for (let i = 0; i < 30; i++) expect((await send(client)).statusCode).toBe(200);
      expectRefusal(await send(client), 'search', 30);
      // The same proxy forwarding another client: that client's own budget.
      const other = await send(uniqueIp());
      expect(other.statusCode).toBe(200);
      expect(other.headers['x-ratelimit-remaining']).toBe('29');
    } finally {
      await proxied.stop();
    }
  });
});

test('refusals are counted per bucket in /metrics', async () => {
  const ip = uniqueIp();
  for (let i = 0; i < 31; i++) await from(ip, '/api/v1/search?tag=ai');
  const metrics = await app.inject({ url: '/metrics' });
  const line = metrics.body.split('\n').find((l) => l.startsWith('catalog_rate_limit_rejections_total{bucket="search"}'));
  expect(Number(line?.split(' ')[1])).toBeGreaterThanOrEqual(1);
  expect(metrics.body).toMatch(/^catalog_rate_limit_rejections_total\{bucket="other"\} \d+$/m);
});

/** A unit spent in memory, which is decided at once. */
function spendNow(store: LeaseStore, bucket: Bucket, ip: string): Counted {
  const verdict = store.spend(bucket, ip, undefined);
  if (verdict instanceof Promise) throw new Error('a budget in memory was not decided at once');
  return verdict;
}

test('the budget comes back when the window ends (a 2-second window stands in for the minute)', async () => {
  // The service always uses the spec's minute; only the window length differs here.
  const store = createLeaseStore({ searchPerMinute: 30, otherPerMinute: 60, windowSeconds: 2 });
  const short = Fastify();
  registerErrorHandling(short);
  const { config, read, feed, mirror } = stack.service;
  const budgets = createBudgets({ store, keys: stack.service.budgets.keys, signedIn: config.rateLimits.signedIn });
  const metrics = createMetrics({ read, budgets: store, mirror, lag: async () => ({ unprojectedRows: 0, oldestUnprojectedAgeSeconds: 0 }) });
  await registerRest(short, { config, read, feed, budgets, metrics });
  try {
    const ip = uniqueIp();
    const send = () => short.inject({ method: 'GET', url: '/api/v1/search', remoteAddress: ip });
    for (let i = 0; i < 30; i++) expect((await send()).statusCode).toBe(200);
    const refused = await send();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['ratelimit-policy']).toBe('"search";q=30;w=2');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);
    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 200));
    const back = await send();
    expect(back.statusCode).toBe(200);
    expect(back.headers['x-ratelimit-remaining']).toBe('29');
  } finally {
    await short.close();
    await store.close();
  }
});

test('an address seen again after more than 10,000 others keeps its count, and each limit has its own header texts', async () => {
  const store = createLeaseStore({ searchPerMinute: 3, otherPerMinute: 5 });
  const wider = createLeaseStore({ searchPerMinute: 30, otherPerMinute: 50 });
  try {
    const ip = uniqueIp();
    expect(spendNow(store, 'search', ip)).toMatchObject({ allowed: true, remaining: 2 });
    // More addresses than a bucket keeps the limiter keys of: they are all let go meanwhile.
    for (let i = 0; i < 10_001; i++) spendNow(store, 'search', `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    expect(spendNow(store, 'search', ip)).toMatchObject({ allowed: true, remaining: 1 });
    expect(spendNow(store, 'search', ip)).toMatchObject({ allowed: true, remaining: 0 });
    expect(spendNow(store, 'search', ip)).toMatchObject({ allowed: false, remaining: 0 });
    // The limit's own texts, for a bucket of the same name with another limit in the same process.
    const narrow = rateLimitHeaders(spendNow(store, 'other', ip));
    const wide = rateLimitHeaders(spendNow(wider, 'other', ip));
    expect([narrow['x-ratelimit-limit'], narrow['ratelimit-policy']]).toEqual(['5', '"other";q=5;w=60']);
    expect([wide['x-ratelimit-limit'], wide['ratelimit-policy']]).toEqual(['50', '"other";q=50;w=60']);
    expect(rateLimitHeaders(spendNow(store, 'other', ip))['ratelimit-policy']).toBe('"other";q=5;w=60');
  } finally {
    await store.close();
    await wider.close();
  }
});

test('a budget in memory is decided at once, by the store or the budgets\' one decision: one count, one window', async () => {
  const store = createLeaseStore({ searchPerMinute: 30, otherPerMinute: 5 });
  const budgets = createBudgets({ store, keys: stack.service.budgets.keys, signedIn: stack.service.config.rateLimits.signedIn });
  try {
    const ip = uniqueIp();
    const decisions = [];
    // Alternating doors on one client address and bucket: one count between them, never a promise.
    for (let i = 0; i < 7; i++) {
      const verdict = i % 2 === 0 ? store.spend('other', ip, undefined) : budgets.decide('other', ip, undefined);
      expect(verdict).not.toBeInstanceOf(Promise);
      decisions.push(verdict as Counted);
    }
    expect(decisions.map((d) => d && [d.allowed, d.remaining])).toEqual([
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
    ]);
    for (const d of decisions) expect(d).toMatchObject({ bucket: 'other', limit: 5, windowSeconds: 60 });
    expect(decisions.every((d) => d!.resetSeconds >= 59 && d!.resetSeconds <= 60)).toBe(true);
    expect(store.rejections.other).toBe(2);
    // Another bucket and another address have budgets of their own.
    expect(spendNow(store, 'search', ip)).toMatchObject({ allowed: true, remaining: 29 });
    expect(spendNow(store, 'other', uniqueIp())).toMatchObject({ allowed: true, remaining: 4 });
  } finally {
    await store.close();
  }
});
