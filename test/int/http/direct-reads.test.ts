/**
 * The direct read path (src/http/direct-reads.ts) answers products, categories, cached
 * searches and the directory pages the page cache keeps beneath Fastify. It must be invisible: the same request sent to a service with it and
 * to one without it (DIRECT_READS=false), both over real HTTP on one database, gets the same
 * status, the same headers in the same order, the same body byte for byte, spends the same
 * budget and is counted the same in the request metrics.
 */
import http from 'node:http';
import { randomInt } from 'node:crypto';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createKey, newKey } from '../../../src/auth/consumer-keys/consumer-keys.ts';
import { keysForTwins, rawRequest, startTwinWithoutDirectPaths, type RawAnswer } from '../../helpers/twin-service.ts';
import type { RunningService } from '../../../src/service.ts';
import { FIXTURE_CATEGORIES, LIVE_SLUGS_NEWEST_FIRST, NOT_LIVE_SLUGS } from '../../helpers/fixtures.ts';
import { skipWithoutRedisServer, startTestRedis, type RedisServer } from '../../helpers/redis.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
const send = (base: string, method: string, path: string, headers: Record<string, string>) => rawRequest(agent, base, method, path, headers);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECONDS_HEADERS = new Set(['x-ratelimit-reset', 'retry-after']);

/**
 * The headers of both answers, equal in names and order; values equal but for the date, a fresh
 * request id (both UUIDs) and the budget's clock, which may read a second apart.
 */
function expectSameAnswer(direct: RawAnswer, plain: RawAnswer, given: Record<string, string>, label: string): void {
  expect(direct.status, label).toBe(plain.status);
  expect(direct.headers.map(([n]) => n), label).toEqual(plain.headers.map(([n]) => n));
  for (let i = 0; i < direct.headers.length; i++) {
    const [name, a] = direct.headers[i]!;
    const b = plain.headers[i]![1];
    if (name === 'date') continue;
    if (name === 'x-request-id' && given['x-request-id'] === undefined) {
      expect(a, label).toMatch(UUID);
      expect(b, label).toMatch(UUID);
    } else if (name === 'x-request-id' && !/^[A-Za-z0-9._:-]{1,128}$/.test(given['x-request-id']!)) {
      expect(a, label).toMatch(UUID);
      expect(b, label).toMatch(UUID);
    } else if (SECONDS_HEADERS.has(name)) {
      expect(Math.abs(Number(a) - Number(b)), `${label}: ${name} ${a} vs ${b}`).toBeLessThanOrEqual(1);
    } else if (name === 'ratelimit') {
      const [restA, tA] = a.split(';t=');
      const [restB, tB] = b.split(';t=');
      expect(restA, label).toBe(restB);
      expect(Math.abs(Number(tA) - Number(tB)), label).toBeLessThanOrEqual(1);
    } else {
      expect(`${name}: ${a}`, label).toBe(`${name}: ${b}`);
    }
  }
  // A refusal's message names the seconds left, by the same clock as its Retry-After.
  const [bodyA, bodyB] = [direct.body.toString(), plain.body.toString()];
  const waits = direct.status === 429 ? [/in about (\d+) s/.exec(bodyA)?.[1], /in about (\d+) s/.exec(bodyB)?.[1]] : [];
  if (waits[0] !== undefined && waits[1] !== undefined) {
    expect(Math.abs(Number(waits[0]) - Number(waits[1])), `${label}: ${bodyA} vs ${bodyB}`).toBeLessThanOrEqual(1);
    expect(bodyA.replace(/in about \d+ s/, ''), label).toBe(bodyB.replace(/in about \d+ s/, ''));
    return;
  }
  expect(direct.body.equals(plain.body), `${label}: bodies differ: ${bodyA.slice(0, 300)} vs ${bodyB.slice(0, 300)}`).toBe(true);
}

/** `http_requests_total` and `http_request_duration_seconds_count` lines of the REST routes. */
async function restRequestCounts(base: string): Promise<string[]> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => /^http_requests_total\{|^http_request_duration_seconds_count\{/.test(l) && l.includes('route="/api/v1/'))
    .sort();
}

/** The same lines for the directory pages' routes. */
async function pageRequestCounts(base: string): Promise<string[]> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => /^http_requests_total\{|^http_request_duration_seconds_count\{/.test(l) && /route="\/(products\/:slug|categories\/:slug|search)?"/.test(l))
    .sort();
}

async function directAnswers(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('http_direct_answers_total{'))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}

// Query values: plain words, spaces in both spellings, escapes, non-ASCII, bounds and garbage.
const words = ['pixel', 'forge', 'ai', 'notes', 'query', 'typo', 'piksel', 'PIXEL', 'caf%C3%A9', 'a', '', '+', '%09ai', '%20ai', 'ai+notes', 'ai%2Bnotes', '%E2%9C%93', '%ZZ', 'x'.repeat(201)];
const searchParam = fc.oneof(
  fc.constantFrom(...words).map((w) => `q=${w}`),
  fc.constantFrom(...FIXTURE_CATEGORIES.map((c) => c.slug), 'nope', 'Design', '').map((c) => `category=${c}`),
  fc.constantFrom('ai', 'notes', 'editor', 'none', 'AI').map((t) => `tag=${t}`),
  fc.constantFrom('new', 'trending', 'editors-pick', 'x').map((l) => `label=${l}`),
  fc.constantFrom('1', '2', '0', '-1', '01', '1.5', 'x', '100000').map((p) => `page=${p}`),
  fc.constantFrom('1', '2', '20', '50', '51', '0', 'ten').map((l) => `limit=${l}`),
  fc.constantFrom('sort=name', 'q', '=x', '&', 'unknown=1'),
);
const searchPath = fc.array(searchParam, { maxLength: 4 }).map((params) => (params.length === 0 ? '/api/v1/search' : `/api/v1/search?${params.join('&')}`));
const slug = fc.constantFrom(...LIVE_SLUGS_NEWEST_FIRST, ...NOT_LIVE_SLUGS, 'no-such-listing', 'Pixel-Forge', 'pixel--forge', 'pixel_forge', 'x'.repeat(201));
const productPath = fc.tuple(slug, fc.constantFrom('', '/', '?', '?x=1', '%2D')).map(([s, tail]) => `/api/v1/products/${s}${tail}`);
// The directory pages: each kept once Fastify has rendered it, then answered beneath it.
const pagePath = fc.oneof(
  fc.tuple(slug, fc.constantFrom('', '', '/', '?x=1', '%2D')).map(([s, tail]) => `/products/${s}${tail}`),
  fc.array(searchParam, { maxLength: 3 }).map((params) => (params.length === 0 ? '/search' : `/search?${params.join('&')}`)),
  fc.tuple(fc.constantFrom(...FIXTURE_CATEGORIES.map((c) => c.slug), 'nope'), fc.constantFrom('', '', '?page=2', '?page=0', '?page=x')).map(([c, q]) => `/categories/${c}${q}`),
  fc.constantFrom('/', '/?x=1', '//', '/search/', '/Products/pixel-forge'),
);
const otherPath = fc.constantFrom('/api/v1/categories', '/api/v1/categories/', '/api/v1/categories?x=1', '/api/v1/products', '/api/v1/products/', '/api/v1/products/%70ixel-forge', '/api/v1//categories', '/API/v1/categories');

interface Case {
  method: 'GET' | 'HEAD';
  path: string;
  ip: number;
  requestId: string | undefined;
  origin: string | undefined;
  condition: 'none' | 'current' | 'weak' | 'list' | 'star' | 'other';
  repeat: boolean;
  /** No Authorization, a valid consumer key, an unknown one, or a malformed header. */
  key: 'none' | 'valid' | 'unknown' | 'malformed';
}

const aCase: fc.Arbitrary<Case> = fc.record({
  method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD'),
  path: fc.oneof({ weight: 4, arbitrary: searchPath }, { weight: 4, arbitrary: productPath }, { weight: 2, arbitrary: otherPath }, { weight: 3, arbitrary: pagePath }),
  ip: fc.integer({ min: 0, max: 9 }),
  requestId: fc.constantFrom(undefined, undefined, 'trace-123', 'bad id with spaces'),
  origin: fc.constantFrom(undefined, 'https://app.example'),
  condition: fc.constantFrom('none', 'none', 'current', 'weak', 'list', 'star', 'other'),
  repeat: fc.boolean(),
  key: fc.constantFrom('none', 'none', 'none', 'valid', 'valid', 'unknown', 'malformed'),
});

const skipRedis = skipWithoutRedisServer('the direct read path with budgets in Redis');

// Budgets kept in the process (decided at once) and in Redis (asked for, of a redis-server of the
// file's own): two roads to a decision.
describe.each(skipRedis ? (['memory'] as const) : (['memory', 'Redis'] as const))('direct read path, budgets in %s', (budgets) => {
  let redis: RedisServer | undefined;
  let stack: TestStack;
  let plain: RunningService;
  /**
   * A fresh range of client addresses per run, so budgets start full; one per service, as the
   * two share Redis's budgets when they live there.
   */
  const octet = randomInt(128);
  const prefix = `10.${2 * octet}.${randomInt(256)}`;
  const plainPrefix = `10.${2 * octet + 1}.${prefix.split('.')[2]}`;
  // A consumer key per service too (with the same budgets), for the same reason.
  let directKey = '';
  let plainKey = '';
  const forPlain = (headers: Record<string, string>): Record<string, string> => ({
    ...headers,
    'x-forwarded-for': headers['x-forwarded-for']!.replace(prefix, plainPrefix),
    ...(headers.authorization !== undefined && { authorization: headers.authorization.replace(directKey, plainKey) }),
  });

  beforeAll(async () => {
    if (budgets === 'Redis') redis = await startTestRedis();
    const env = { TRUST_PROXY: 'true', RATE_LIMIT_OTHER_PER_MIN: '40', RATE_LIMIT_SEARCH_PER_MIN: '40', RATE_LIMIT_PAGES_PER_MIN: '40', ...(redis && { REDIS_URL: redis.url }) };
    stack = await startTestStack({ env });
    plain = await startTwinWithoutDirectPaths(stack, env);
    ({ directKey, plainKey } = await keysForTwins(stack, plain, budgets.toLowerCase(), { search: 40, other: 40 }));
  }, 60_000);

  afterAll(async () => {
    await plain?.close();
    await stack?.stop();
    await redis?.stop();
    agent.destroy();
  });

  test('every answer is the same with and without it: status, headers in order, body, budget', async () => {
    // The ETag each path last gave for a path, to send back as If-None-Match.
    const etags = new Map<string, string>();
    const unknownKey = newKey();
    const ipOf = (n: number) => `${prefix}.${n + 1}`;
    await fc.assert(
      fc.asyncProperty(aCase, async (c) => {
        const headers: Record<string, string> = { 'x-forwarded-for': ipOf(c.ip) };
        if (c.requestId !== undefined) headers['x-request-id'] = c.requestId;
        if (c.origin !== undefined) headers.origin = c.origin;
        const etag = etags.get(c.path) ?? '"none"';
        const condition = { none: undefined, current: etag, weak: `W/${etag}`, list: `"x", ${etag}`, star: '*', other: '"other"' }[c.condition];
        if (condition !== undefined) headers['if-none-match'] = condition;
        if (c.key !== 'none') headers.authorization = { valid: `Bearer ${directKey}`, unknown: `Bearer ${unknownKey}`, malformed: 'Basic dXNlcjpwYXNz' }[c.key];
        for (let i = 0; i < (c.repeat ? 2 : 1); i++) {
          const a = await send(stack.baseUrl, c.method, c.path, headers);
          const b = await send(plain.url, c.method, c.path, forPlain(headers));
          expectSameAnswer(a, b, headers, `${c.method} ${c.path} ${JSON.stringify(headers)}`);
          const tag = a.headers.find(([n]) => n === 'etag')?.[1];
          if (tag) etags.set(c.path, tag);
        }
      }),
      { numRuns: 250 },
    );
    // The direct path did answer some of them (cached searches, products, categories, kept pages, 304s), the other none.
    expect(await directAnswers(stack.baseUrl)).toBeGreaterThan(0);
    expect(await directAnswers(plain.url)).toBe(0);
    // Both counted the same requests under the same routes and statuses.
    expect(await restRequestCounts(stack.baseUrl)).toEqual(await restRequestCounts(plain.url));
    expect(await pageRequestCounts(stack.baseUrl)).toEqual(await pageRequestCounts(plain.url));
  }, 120_000);

  test('it answers live products, the categories and searches already cached; Fastify the rest', async () => {
    const headers = { 'x-forwarded-for': `${prefix}.199` };
    const before = await directAnswers(stack.baseUrl);
    const answered = async (path: string) => {
      const n = await directAnswers(stack.baseUrl);
      const res = await send(stack.baseUrl, 'GET', path, headers);
      return { status: res.status, direct: (await directAnswers(stack.baseUrl)) - n };
    };
    expect(await answered(`/api/v1/products/${LIVE_SLUGS_NEWEST_FIRST[2]}`)).toEqual({ status: 200, direct: 1 });
    expect(await answered(`/api/v1/products/${NOT_LIVE_SLUGS[0]}`)).toEqual({ status: 404, direct: 0 });
    expect(await answered('/api/v1/categories')).toEqual({ status: 200, direct: 1 });
    // A limit the property above never asks for, so this search is not cached yet.
    const search = `/api/v1/search?q=notes&limit=${randomInt(3, 20)}`;
    expect(await answered(search)).toEqual({ status: 200, direct: 0 });
    expect(await answered(search)).toEqual({ status: 200, direct: 1 });
    expect(await answered('/api/v1/search?q=notes&q=ai')).toEqual({ status: 400, direct: 0 });
    // A page once Fastify has rendered and kept it; never one it did not keep (a 404, a 400).
    const page = `/search?q=notes&limit=${randomInt(3, 20)}`;
    expect(await answered(page)).toEqual({ status: 200, direct: 0 });
    expect(await answered(page)).toEqual({ status: 200, direct: 1 });
    expect(await answered(`/products/${NOT_LIVE_SLUGS[0]}`)).toEqual({ status: 404, direct: 0 });
    expect(await answered(`/products/${NOT_LIVE_SLUGS[0]}`)).toEqual({ status: 404, direct: 0 });
    expect(await answered('/search?page=0')).toEqual({ status: 400, direct: 0 });
    expect(await answered('/search?page=0')).toEqual({ status: 400, direct: 0 });
    expect((await directAnswers(stack.baseUrl)) - before).toBe(4);
  });

  test.each([
    { bucket: 'other', path: `/api/v1/products/${LIVE_SLUGS_NEWEST_FIRST[0]}`, host: 200 },
    { bucket: 'pages', path: `/products/${LIVE_SLUGS_NEWEST_FIRST[0]}`, host: 203 },
  ])('a refused request is refused the same way, and spends nothing twice ($bucket)', async ({ bucket, path, host }) => {
    const ip = `${prefix}.${host}`;
    const statuses: number[] = [];
    for (let i = 0; i < 42; i++) {
      const a = await send(stack.baseUrl, 'GET', path, { 'x-forwarded-for': ip, 'x-request-id': `r${i}` });
      const b = await send(plain.url, 'GET', path, forPlain({ 'x-forwarded-for': ip, 'x-request-id': `r${i}` }));
      expectSameAnswer(a, b, { 'x-request-id': `r${i}` }, `request ${i}`);
      statuses.push(a.status);
    }
    // Forty a minute: the fortieth is the last served, one unit each.
    expect(statuses).toEqual([...Array(40).fill(200), 429, 429]);
    if (budgets === 'Redis') {
      // Counted where the budgets live, one unit per request served (a refusal spends none).
      const client = new Redis(redis!.url);
      try {
        expect(await client.get(`catalog:rl:${bucket}:${ip}`)).toBe('40');
      } finally {
        client.disconnect();
      }
    }
  });

  test('a change to the catalog shows at once on both paths', async () => {
    const target = LIVE_SLUGS_NEWEST_FIRST[1];
    const before = await send(stack.baseUrl, 'GET', `/api/v1/products/${target}`, { 'x-forwarded-for': `${prefix}.201` });
    expect(before.status).toBe(200);
    await stack.db.pool.query(`UPDATE catalog.listings SET punchline = 'Changed for the direct path', updated_at = now() WHERE slug = $1`, [target]);
    await stack.settle();
    await plain.mirror.refresh();
    const a = await send(stack.baseUrl, 'GET', `/api/v1/products/${target}`, { 'x-forwarded-for': `${prefix}.202` });
    const b = await send(plain.url, 'GET', `/api/v1/products/${target}`, forPlain({ 'x-forwarded-for': `${prefix}.202` }));
    expectSameAnswer(a, b, {}, 'after the change');
    expect(a.body.toString()).toContain('Changed for the direct path');
    expect(a.headers.find(([n]) => n === 'etag')).not.toEqual(before.headers.find(([n]) => n === 'etag'));
  });
});

describe('direct read path, switched off by the service', () => {
  test('with access logging at debug, Fastify answers and logs every request', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) });
    const stack = await startTestStack({ logger });
    try {
      const res = await fetch(`${stack.baseUrl}/api/v1/products/${LIVE_SLUGS_NEWEST_FIRST[0]}`);
      expect(res.status).toBe(200);
      expect(await directAnswers(stack.baseUrl)).toBe(0);
      expect(lines.some((l) => l.includes('request completed') && l.includes(`/api/v1/products/${LIVE_SLUGS_NEWEST_FIRST[0]}`))).toBe(true);
      // A consumer key is named by its name in the access line, never written itself (not even
      // when a client puts it in the URL as well).
      const { key } = await createKey(stack.db.pool, { name: 'logged-by-name' });
      while (!stack.service.budgets.keys.check(`Bearer ${key}`).ok) await new Promise((r) => setTimeout(r, 20));
      const keyed = await fetch(`${stack.baseUrl}/api/v1/products/${LIVE_SLUGS_NEWEST_FIRST[0]}`, { headers: { authorization: `Bearer ${key}` } });
      expect(keyed.status).toBe(200);
      expect((await fetch(`${stack.baseUrl}/api/v1/categories?key=${key}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(400);
      const keyedLines = lines.filter((l) => l.includes('"key":"logged-by-name"'));
      expect(keyedLines.map((l) => JSON.parse(l).status)).toEqual([200, 400]);
      expect(lines.filter((l) => l.includes(key))).toEqual([]);
    } finally {
      await stack.stop();
    }
  });
});
