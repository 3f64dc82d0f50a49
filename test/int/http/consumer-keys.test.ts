/**
 * Consumer keys from outside, over real HTTP: `Authorization: Bearer ck_…` on /api/v1 and on
 * /api/mcp's read tools (the real MCP SDK client). API processes on one database: two sharing a
 * Redis of this file's own (budgets as leases, usage counted in Redis), one keeping its budgets
 * in memory, and one more in memory without the direct read path, to hold the two roads to the
 * same keyed answers. Every key's budget is met at its exact boundary; every kind of bad
 * Authorization is answered 401 INVALID_KEY (or 429 for a guesser) without spending anyone's
 * budget; revocations, rotations and new budgets reach the other processes within a second;
 * usage equals what the client saw answered, by family, refused included.
 */
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeKey, createKey, keyUsage, newKey, revokeKey, rotateKey, utcDay, type KeyLimits } from '../../../src/auth/consumer-keys/consumer-keys.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { startService, type RunningService } from '../../../src/service.ts';
import { LIVE_SLUGS_NEWEST_FIRST } from '../../helpers/fixtures.ts';
import { makerToken } from '../../helpers/oauth.ts';
import { skipWithoutRedisServer, startTestRedis, type RedisServer } from '../../helpers/redis.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { uniqueIp } from './rest-support.ts';

// Every part of the file runs beside the processes sharing Redis: all of it is skipped without redis-server.
const skip = skipWithoutRedisServer('the consumer key tests');

let redis: RedisServer | undefined;
/** Two API processes sharing Redis (`stack` also runs the projector and the OAuth flow), and one keeping budgets in memory. */
let stack: TestStack;
let second: RunningService;
let memory: RunningService;
/** Budgets in memory too, without the direct read path (DIRECT_READS=false): the same answers, by Fastify alone. */
let plain: RunningService;
let redisA: string;
let redisB: string;
let inMemory: string;

beforeAll(async () => {
  redis = await startTestRedis();
  const REDIS_URL = redis.url;
  stack = await startTestStack({ realPublicUrl: true, env: { REDIS_URL, TRUST_PROXY: 'true' } });
  const c = stack.service.config;
  // Every process has the first one's PUBLIC_URL, as behind one proxy: a maker's token is good on each.
  const env = { DATABASE_URL: stack.service.connectionString, HOST: '127.0.0.1', PORT: '0', PUBLIC_URL: c.publicUrl, SITE_URL: c.siteUrl, LOG_LEVEL: 'silent', TRUST_PROXY: 'true' };
  const start = (extra: Record<string, string>) => startService(loadConfig({}, { ...env, ...extra }), { projector: false, demo: false, listen: true, logger: pino({ level: 'silent' }) });
  [second, memory, plain] = await Promise.all([start({ REDIS_URL }), start({}), start({ DIRECT_READS: 'false' })]);
  redisA = stack.baseUrl;
  redisB = second.url;
  inMemory = memory.url;
}, 90_000);

afterAll(async () => {
  agent.destroy();
  await Promise.all([second?.close(), memory?.close(), plain?.close()]);
  await stack?.stop();
  await redis?.stop();
});

// ---------------------------------------------------------------------------------------------
// A client over real HTTP

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Header names (lower case) and values in the order they were sent. */
  raw: Array<[string, string]>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** A request as sent on the wire: header values may be lists (each its own line) or carry raw bytes (latin1 strings). */
function send(base: string, path: string, headers: Record<string, string | string[]> = {}, init: { method?: string; body?: string } = {}): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method: init.method ?? 'GET', path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        const raw: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) raw.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
        resolve({ status: res.statusCode!, headers: res.headers, raw, text, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

const bearer = (key: string) => `Bearer ${key}`;
const as = (ip: string, key?: string): Record<string, string> => ({ 'x-forwarded-for': ip, ...(key !== undefined && { authorization: bearer(key) }) });
const SLUG = LIVE_SLUGS_NEWEST_FIRST[0];

type Family = 'search' | 'other' | 'export' | 'changes';
/** A path of each family; `i` varies the search and the product so both roads (Fastify, direct reads) are taken. */
function pathOf(family: Family, i = 0): string {
  switch (family) {
    case 'search':
      return i % 3 === 0 ? `/api/v1/search?q=note&limit=${(i % 7) + 1}` : '/api/v1/search?q=pixel';
    case 'other':
      return i % 2 === 0 ? '/api/v1/categories' : `/api/v1/products/${LIVE_SLUGS_NEWEST_FIRST[i % LIVE_SLUGS_NEWEST_FIRST.length]}`;
    case 'export':
      return '/api/v1/export';
    case 'changes':
      return '/api/v1/changes?limit=1';
  }
}

let keyCount = 0;
/** A key made as the operator makes it, known to every process before it is used. */
async function makeKey(limits: Partial<KeyLimits> = {}, expiresOn?: string): Promise<{ name: string; key: string }> {
  const name = `http-${++keyCount}-${Date.now().toString(36)}`;
  const issued = await createKey(stack.db.pool, { name, limits, ...(expiresOn !== undefined && { expiresOn }) });
  await untilTrue(() => [stack.service, second, memory, plain].every((s) => s.budgets.keys.check(bearer(issued.key)).ok), 5000, 'the new key reaching every process');
  return { name, key: issued.key };
}

async function untilTrue(what: () => boolean | Promise<boolean>, ms: number, label: string): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await what()) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`${label}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function expectKeyed(res: Answer, family: Family, limit: number, remaining?: number): void {
  expect(res.status, res.text.slice(0, 200)).toBeLessThan(300);
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  if (remaining !== undefined) {
    expect(res.headers['x-ratelimit-remaining']).toBe(String(remaining));
    expect(res.headers.ratelimit).toMatch(new RegExp(`^"${family}";r=${remaining};t=\\d+$`));
  }
  expect(res.headers['ratelimit-policy']).toBe(`"${family}";q=${limit};w=60`);
  expect(res.headers['retry-after']).toBeUndefined();
}

function expectKeyRefused(res: Answer, family: Family, limit: number): void {
  expect(res.status, res.text.slice(0, 200)).toBe(429);
  expect(res.body).toEqual({ code: 'TOO_MANY_REQUESTS', message: expect.stringMatching(/^Too many requests with this key: slow down and retry shortly \(in about \d+ s\)\.$/) });
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
  expect(res.headers['ratelimit-policy']).toBe(`"${family}";q=${limit};w=60`);
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(res.headers['cache-control']).toBe('no-store');
}

const CHALLENGE = /^Bearer error="invalid_token", error_description="[\x20\x21\x23-\x5b\x5d-\x7e]*"$/;

function expectInvalidKey(res: Answer, message: RegExp, label = '', opts: { budgetSpent?: boolean } = {}): void {
  expect(res.status, `${label} ${res.text.slice(0, 300)}`).toBe(401);
  expect(Object.keys(res.body as object).sort(), label).toEqual(['code', 'message']);
  expect(res.body.code, label).toBe('INVALID_KEY');
  expect(res.body.message, label).toMatch(message);
  expect(res.headers['www-authenticate'], label).toMatch(CHALLENGE);
  expect(res.headers['cache-control'], label).toBe('no-store');
  expect(res.headers['content-type'], label).toBe('application/json; charset=utf-8');
  // Refused before any budget was looked at (a long poll spent its unit when it arrived).
  if (!opts.budgetSpent) expect(res.headers['x-ratelimit-limit'], label).toBeUndefined();
}

// ---------------------------------------------------------------------------------------------
// MCP

interface McpSession {
  client: Client;
  /** The rate-limit headers of the last tool call's HTTP answer. */
  last: { status: number; limit: string | null; remaining: string | null };
}

async function mcpSession(base: string, headers: Record<string, string>): Promise<McpSession> {
  const session: McpSession = { client: new Client({ name: 'consumer-keys-test', version: '1.0.0' }), last: { status: 0, limit: null, remaining: null } };
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), {
    requestInit: { headers },
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      if (res.headers.get('x-ratelimit-limit') !== null) session.last = { status: res.status, limit: res.headers.get('x-ratelimit-limit'), remaining: res.headers.get('x-ratelimit-remaining') };
      return res;
    },
  });
  await session.client.connect(transport);
  return session;
}

/** A read tool's call: its structured result (the REST body), or the error object of a tool error. */
async function callTool(session: McpSession, name: string, args: Record<string, unknown> = {}): Promise<{ ok: boolean; body: Record<string, unknown> }> {
  const result = await session.client.callTool({ name, arguments: args });
  if (result.isError !== true) return { ok: true, body: result.structuredContent as Record<string, unknown> };
  const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
  return { ok: false, body: JSON.parse(text) as Record<string, unknown> };
}

function mcpPost(base: string, headers: Record<string, string | string[]>, tool = 'list_categories'): Promise<Answer> {
  return send(base, '/api/mcp', { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, {
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } }),
  });
}

// ---------------------------------------------------------------------------------------------

describe.skipIf(skip)('one process, budgets in memory', () => {
  it('a key spends its own search budget: 40 × 200 with its limit in the headers, then 429; the address keeps its own', async () => {
    const { key } = await makeKey({ search: 40 });
    const ip = uniqueIp();
    for (let i = 1; i <= 40; i++) {
      const res = await send(inMemory, pathOf('search', i), as(ip, key));
      expect(res.status, `search ${i}`).toBe(200);
      expectKeyed(res, 'search', 40, 40 - i);
    }
    // Refused on either road: a search not cached yet (Fastify) and one cached (direct reads).
    expectKeyRefused(await send(inMemory, '/api/v1/search?q=never-asked-before', as(ip, key)), 'search', 40);
    expectKeyRefused(await send(inMemory, pathOf('search', 1), as(ip, key)), 'search', 40);
    // The other families of the key are untouched, and so is the address's budget.
    expectKeyed(await send(inMemory, '/api/v1/categories', as(ip, key)), 'other', 1200, 1199);
    const anonymous = await send(inMemory, pathOf('search', 1), as(ip));
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers['x-ratelimit-limit']).toBe('30');
    expect(anonymous.headers['x-ratelimit-remaining']).toBe('29');
  });

  it('each other family to its exact boundary: other calls, exports, change-feed requests', async () => {
    const limits = { other: 7, export: 2, changes: 3 } as const;
    const { key } = await makeKey(limits);
    const ip = uniqueIp();
    for (const family of ['other', 'export', 'changes'] as const) {
      for (let i = 1; i <= limits[family]; i++) {
        const res = await send(inMemory, pathOf(family, i), as(ip, key));
        expect(res.status, `${family} ${i}`).toBe(200);
        expectKeyed(res, family, limits[family], limits[family] - i);
      }
      expectKeyRefused(await send(inMemory, pathOf(family, 0), as(ip, key)), family, limits[family]);
      expectKeyRefused(await send(inMemory, pathOf(family, 1), as(ip, key)), family, limits[family]);
    }
    // Anonymous from the same address: full budgets.
    expect((await send(inMemory, '/api/v1/export', as(ip))).headers['x-ratelimit-remaining']).toBe('5');
  });

  it('keyed answers are private to the client; every cacheable API answer varies by Authorization', async () => {
    const { key } = await makeKey();
    const ip = uniqueIp();
    const paths = [`/api/v1/products/${SLUG}`, '/api/v1/categories', '/api/v1/search?q=forge', '/api/v1/search?q=forge', '/api/v1/openapi.json', '/api/v1/export'];
    for (const path of paths) {
      // The export keeps its own max-age, as its anonymous answer does (docs/keys.md: "Caching").
      const keyedCacheControl = path === '/api/v1/export' ? 'private, max-age=300' : 'private, max-age=60';
      const keyed = await send(inMemory, path, as(ip, key));
      expect(keyed.status, path).toBe(200);
      expect(keyed.headers['cache-control'], path).toBe(keyedCacheControl);
      expect(keyed.headers.vary?.split(/,\s*/), path).toContain('Authorization');
      const anonymous = await send(inMemory, path, as(ip));
      expect(anonymous.headers['cache-control'], path).toMatch(/^public, /);
      expect(anonymous.headers.vary?.split(/,\s*/), path).toContain('Authorization');
      // A revalidation answers 304 with the same caching headers.
      const again = await send(inMemory, path, { ...as(ip, key), 'if-none-match': keyed.headers.etag! });
      expect(again.status, path).toBe(304);
      expect(again.headers['cache-control'], path).toBe(keyedCacheControl);
      expect(again.headers.vary?.split(/,\s*/), path).toContain('Authorization');
    }
  });

  it('a keyed request gets the same answer from the direct read path as from Fastify: headers in order, body, budget', async () => {
    const { key } = await makeKey({ other: 4, search: 3 });
    const ip = uniqueIp();
    const unstable = new Set(['date', 'x-request-id', 'x-ratelimit-reset', 'retry-after']);
    const expectSame = (direct: Answer, fastify: Answer, label: string) => {
      expect(direct.status, label).toBe(fastify.status);
      expect(direct.raw.map(([n]) => n), label).toEqual(fastify.raw.map(([n]) => n));
      direct.raw.forEach(([name, value], i) => {
        const other = fastify.raw[i]![1];
        if (unstable.has(name)) return;
        if (name === 'ratelimit') expect(value.replace(/;t=\d+$/, ''), label).toBe(other.replace(/;t=\d+$/, ''));
        else expect(`${name}: ${value}`, label).toBe(`${name}: ${other}`);
      });
      expect(direct.text, label).toBe(fastify.text);
    };
    const product = `/api/v1/products/${SLUG}`;
    const etag = (await send(plain.url, product, as(uniqueIp()))).headers.etag!;
    const steps: Array<[string, Record<string, string | string[]>]> = [
      [product, as(ip, key)],
      ['/api/v1/categories', as(ip, key)],
      [product, { ...as(ip, key), 'if-none-match': etag }],
      ['/api/v1/search?q=forge', as(ip, key)],
      ['/api/v1/search?q=forge', as(ip, key)],
      [product, as(ip, key)],
      // Spent: refused the same way on both roads.
      [product, as(ip, key)],
      ['/api/v1/categories', as(ip, key)],
      [product, as(ip, bearer(newKey()).slice(7))],
      [product, { 'x-forwarded-for': ip, authorization: [bearer(key), bearer(key)] }],
      ['/api/v1/search?q=forge', as(ip, key)],
      ['/api/v1/search?q=forge', as(ip, key)],
    ];
    for (const [i, [path, headers]] of steps.entries()) {
      const direct = await send(inMemory, path, headers);
      const fastify = await send(plain.url, path, headers);
      expectSame(direct, fastify, `step ${i + 1}: ${path}`);
    }
  });

  it('every malformed, unknown, revoked or expired key is 401 INVALID_KEY saying which, and spends nobody\'s budget', async () => {
    const victim = await makeKey({ other: 10, search: 10 });
    const revoked = await makeKey();
    await revokeKey(stack.db.pool, revoked.name);
    const expired = await createKey(stack.db.pool, { name: `http-expired-${Date.now().toString(36)}`, expiresOn: utcDay(Date.now() - 86_400_000) });
    await untilTrue(() => !memory.budgets.keys.check(bearer(revoked.key)).ok && memory.budgets.keys.check(bearer(expired.key)).ok === false, 5000, 'revocation');
    const valid = victim.key;
    const mistyped = `${valid.slice(0, 20)}${valid[20] === 'A' ? 'B' : 'A'}${valid.slice(21)}`;
    const utf8 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
    const jwt = 'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJtYWtlciIsImF1ZCI6Imh0dHA6Ly9jYXRhbG9nLnRlc3QifQ.c2lnbmF0dXJlLW5vdC1jaGVja2Vk';
    const cases: Array<[string, string | string[], RegExp]> = [
      ['Bearer with no token', 'Bearer', /^The Authorization header must be "Bearer" followed by a key of this service \("Bearer ck_…"\): no key follows "Bearer"\.$/],
      ['Bearer and spaces', 'Bearer    ', /no key follows "Bearer"/],
      ['a 10 kB token', `Bearer ck_${'a'.repeat(10_000)}`, /this one is 10010 characters long, a key 41/],
      ['Basic', 'Basic dXNlcjpwYXNzd29yZA==', /it uses the "Basic" scheme/],
      ['a key without its scheme', valid, /it does not start with "Bearer"/],
      ['non-ASCII', utf8(`Bearer ${valid.slice(0, 30)}é${valid.slice(32)}`), /a key has letters and digits only/],
      ['non-ASCII scheme', utf8(`Bëarer ${valid}`), /Authorization header must be "Bearer"/],
      ['two Authorization headers', [bearer(valid), bearer(valid)], /^Send one Authorization header: this request has several\.$/],
      ['two different Authorization headers', [bearer(valid), bearer(newKey())], /Send one Authorization header/],
      ['another service\'s key', `Bearer sk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}`, /a key of this service starts with "ck_"/],
      ['a JWT', `Bearer ${jwt}`, /a key of this service starts with "ck_"/],
      ['two tokens', `Bearer ${valid} ${valid}`, /the key may not contain spaces/],
      ['a mistyped key', bearer(mistyped), /check characters do not match/],
      ['a cut key', bearer(valid.slice(0, 30)), /a key is "ck_" and 38 letters and digits/],
      ['an unknown key', bearer(newKey()), /^This key is not known here/],
      ['a revoked key', bearer(revoked.key), /^This key was revoked by the operator\.$/],
      ['an expired key', bearer(expired.key), new RegExp(`^This key expired: its last day was ${utcDay(Date.now() - 86_400_000)} \\(UTC\\)\\.$`)],
    ];
    const paths = [`/api/v1/products/${SLUG}`, '/api/v1/search?q=pixel', '/api/v1/export'];
    for (const [label, authorization, message] of cases) {
      // An address of its own per case: fewer than 20 invalid keys each.
      const ip = uniqueIp();
      for (const path of paths) {
        const res = await send(inMemory, path, { 'x-forwarded-for': ip, authorization });
        expectInvalidKey(res, message, `${label} on ${path}`);
      }
      // The address's budgets are whole: the refused requests spent none of them.
      const anonymous = await send(inMemory, `/api/v1/products/${SLUG}`, as(ip));
      expect(anonymous.headers['x-ratelimit-remaining'], label).toBe('59');
      expect((await send(inMemory, '/api/v1/search?q=pixel', as(ip))).headers['x-ratelimit-remaining'], label).toBe('29');
    }
    // Nor the key named in them: its budgets are whole, and it has no usage.
    expectKeyed(await send(inMemory, '/api/v1/categories', as(uniqueIp(), valid)), 'other', 10, 9);
    expectKeyed(await send(inMemory, '/api/v1/search?q=pixel', as(uniqueIp(), valid)), 'search', 10, 9);
    await memory.usageRecorder.flush();
    const usage = await keyUsage(stack.db.pool, { name: victim.name, days: 1 });
    expect(usage.keys[0]!.days[0]).toMatchObject({ search: 1, other: 1, export: 0, changes: 0, refused: 0 });
  });

  it('a key with spaces around it is accepted', async () => {
    const { key } = await makeKey({ other: 11 });
    for (const authorization of [`   Bearer ${key}   `, `bearer ${key}`, `Bearer \t ${key}\t`]) {
      const res = await send(inMemory, '/api/v1/categories', { 'x-forwarded-for': uniqueIp(), authorization });
      expect(res.status, JSON.stringify(authorization)).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('11');
    }
  });

  it('more than 20 invalid keys from one address in a minute: 429; a valid key from it is still served', async () => {
    const { key } = await makeKey({ other: 50 });
    const ip = uniqueIp();
    for (let i = 1; i <= 20; i++) {
      const authorization = i % 2 ? bearer(newKey()) : 'Basic Zm9vOmJhcg==';
      expect((await send(inMemory, i % 3 ? '/api/v1/categories' : `/api/v1/products/${SLUG}`, { 'x-forwarded-for': ip, authorization })).status, `invalid key ${i}`).toBe(401);
    }
    for (const authorization of [bearer(newKey()), 'Bearer', bearer(key.slice(0, 20))]) {
      const res = await send(inMemory, '/api/v1/categories', { 'x-forwarded-for': ip, authorization });
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ code: 'TOO_MANY_REQUESTS', message: expect.stringMatching(/^Too many requests with an invalid key from this address: check the key, and retry in about \d+ s\.$/) });
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(res.headers['www-authenticate']).toBeUndefined();
    }
    // The MCP endpoint counts the same guesses.
    const mcp = await mcpPost(inMemory, { 'x-forwarded-for': ip, authorization: bearer(newKey()) });
    expect(mcp.status).toBe(429);
    expect(mcp.body.code).toBe('TOO_MANY_REQUESTS');
    // A valid key, and no key at all, are served from that address; another address is still told why.
    expectKeyed(await send(inMemory, '/api/v1/categories', as(ip, key)), 'other', 50, 49);
    expectKeyed(await send(inMemory, `/api/v1/products/${SLUG}`, as(ip, key)), 'other', 50, 48);
    expect((await send(inMemory, '/api/v1/categories', as(ip))).status).toBe(200);
    expectInvalidKey(await send(inMemory, '/api/v1/categories', { 'x-forwarded-for': uniqueIp(), authorization: bearer(newKey()) }), /not known here/);
  });
});

describe.skipIf(skip)('MCP', () => {
  it('a key\'s read-tool calls spend its budget, one budget with REST, with its limit in the headers', async () => {
    const { key } = await makeKey({ search: 6 });
    const ip = uniqueIp();
    const session = await mcpSession(inMemory, as(ip, key));
    try {
      for (let i = 1; i <= 3; i++) expectKeyed(await send(inMemory, pathOf('search', i), as(ip, key)), 'search', 6, 6 - i);
      for (let i = 4; i <= 6; i++) {
        const call = await callTool(session, 'search_products', { q: i % 2 ? 'pixel' : 'note' });
        expect(call.ok, JSON.stringify(call.body)).toBe(true);
        expect(session.last).toEqual({ status: 200, limit: '6', remaining: String(6 - i) });
      }
      const refused = await callTool(session, 'search_products', { q: 'pixel' });
      expect(refused).toEqual({ ok: false, body: { code: 'TOO_MANY_REQUESTS', message: expect.stringMatching(/^Too many requests with this key/) } });
      expect(session.last).toMatchObject({ limit: '6', remaining: '0' });
      expectKeyRefused(await send(inMemory, pathOf('search', 1), as(ip, key)), 'search', 6);
      // Its other budget is apart; the address's untouched.
      expect((await callTool(session, 'list_categories')).ok).toBe(true);
      expect(session.last).toMatchObject({ limit: '1200', remaining: '1199' });
      const anonymous = await mcpSession(inMemory, as(ip));
      try {
        expect((await callTool(anonymous, 'search_products', { q: 'pixel' })).ok).toBe(true);
        expect(anonymous.last).toMatchObject({ limit: '30', remaining: '29' });
      } finally {
        await anonymous.client.close();
      }
    } finally {
      await session.client.close();
    }
  });

  it('an invalid consumer key is 401 INVALID_KEY there too; any other token is an access token, checked as one', async () => {
    const revoked = await makeKey();
    await revokeKey(stack.db.pool, revoked.name);
    await untilTrue(() => !memory.budgets.keys.check(bearer(revoked.key)).ok, 5000, 'revocation');
    for (const [authorization, message] of [
      [bearer(newKey()), /not known here/],
      [bearer(revoked.key), /revoked/],
      ['Bearer ck_short', /a key is "ck_" and 38 letters and digits/],
      [[bearer(newKey()), bearer(newKey())], /Send one Authorization header/],
    ] as Array<[string | string[], RegExp]>) {
      const res = await mcpPost(inMemory, { 'x-forwarded-for': uniqueIp(), authorization });
      expectInvalidKey(res, message, String(authorization));
    }
    // Not a consumer key: refused as an access token (never served as anonymous).
    for (const token of ['sk_live_4eC39HqLyjWDarjtT1zdp7dc', 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln']) {
      const res = await mcpPost(inMemory, { 'x-forwarded-for': uniqueIp(), authorization: bearer(token) });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer resource_metadata="[^"]+", error="invalid_token"/);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });

  it('a signed-in maker\'s calls spend the grant\'s budget: two grants from one address get 60 each', async () => {
    const ip = uniqueIp();
    const [first, other] = [await makerToken(stack, 'grant-one@example.com'), await makerToken(stack, 'grant-two@example.com')];
    const sessions = await Promise.all([first, other].map((t) => mcpSession(inMemory, { 'x-forwarded-for': ip, authorization: bearer(t.accessToken) })));
    const anonymous = await mcpSession(inMemory, as(ip));
    try {
      for (const [n, session] of sessions.entries()) {
        for (let i = 1; i <= 60; i++) {
          const call = await callTool(session, i % 2 ? 'list_categories' : 'get_product', i % 2 ? {} : { slug: SLUG });
          expect(call.ok, `grant ${n + 1}, call ${i}: ${JSON.stringify(call.body)}`).toBe(true);
          expect(session.last).toEqual({ status: 200, limit: '60', remaining: String(60 - i) });
        }
        const refused = await callTool(session, 'list_categories');
        expect(refused).toEqual({ ok: false, body: { code: 'TOO_MANY_REQUESTS', message: expect.stringMatching(/^Too many requests through this sign-in/) } });
      }
      // The address's own budget is untouched by either.
      expect((await callTool(anonymous, 'list_categories')).ok).toBe(true);
      expect(anonymous.last).toMatchObject({ limit: '60', remaining: '59' });
    } finally {
      await Promise.all([...sessions, anonymous].map((s) => s.client.close()));
    }
  });
});

describe.skipIf(skip)('two processes sharing Redis', () => {
  it('a key\'s search budget of 40 is one, spent alternately on both: exact counts, then 429 on each', async () => {
    const { key } = await makeKey({ search: 40 });
    const ip = uniqueIp();
    for (let i = 1; i <= 40; i++) {
      const res = await send(i % 2 ? redisA : redisB, pathOf('search', i), as(ip, key));
      expect(res.status, `search ${i}`).toBe(200);
      expectKeyed(res, 'search', 40, 40 - i);
    }
    expectKeyRefused(await send(redisA, pathOf('search', 1), as(ip, key)), 'search', 40);
    expectKeyRefused(await send(redisB, pathOf('search', 2), as(ip, key)), 'search', 40);
    expect((await send(redisB, pathOf('search', 1), as(ip))).headers['x-ratelimit-remaining']).toBe('29');
  });

  it('a budget large enough to be leased (1,200 other calls) is met at its exact boundary through both', async () => {
    const { key } = await makeKey({ other: 1200 });
    const ip = uniqueIp();
    let served = 0;
    for (let i = 1; i <= 1200; i++) {
      const res = await send(i % 2 ? redisA : redisB, pathOf('other', i >> 1), as(ip, key));
      expect(res.status, `call ${i}`).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('1200');
      served++;
    }
    expect(served).toBe(1200);
    expectKeyRefused(await send(redisA, '/api/v1/categories', as(ip, key)), 'other', 1200);
    expectKeyRefused(await send(redisB, `/api/v1/products/${SLUG}`, as(ip, key)), 'other', 1200);
  });

  it('budgets raised after a refusal are served at once on both, to the new boundary', async () => {
    const { name, key } = await makeKey({ search: 3 });
    const ip = uniqueIp();
    for (let i = 1; i <= 3; i++) expect((await send(i % 2 ? redisA : redisB, pathOf('search', i), as(ip, key))).status).toBe(200);
    for (const base of [redisA, redisB, redisA, redisB]) expectKeyRefused(await send(base, pathOf('search', 1), as(ip, key)), 'search', 3);
    await changeKey(stack.db.pool, name, { limits: { search: 5 } });
    await untilTrue(() => [stack.service, second].every((s) => { const c = s.budgets.keys.check(bearer(key)); return c.ok && c.key.limits.search === 5; }), 1500, 'the new budget');
    expectKeyed(await send(redisB, pathOf('search', 1), as(ip, key)), 'search', 5, 1);
    expectKeyed(await send(redisA, pathOf('search', 2), as(ip, key)), 'search', 5, 0);
    expectKeyRefused(await send(redisB, pathOf('search', 1), as(ip, key)), 'search', 5);
    expectKeyRefused(await send(redisA, pathOf('search', 1), as(ip, key)), 'search', 5);
  });

  it('more than 20 invalid keys from one address, on either process: 429', async () => {
    const ip = uniqueIp();
    for (let i = 1; i <= 20; i++) expect((await send(i % 2 ? redisA : redisB, '/api/v1/categories', { 'x-forwarded-for': ip, authorization: bearer(newKey()) })).status).toBe(401);
    expect((await send(redisA, '/api/v1/categories', { 'x-forwarded-for': ip, authorization: bearer(newKey()) })).status).toBe(429);
    expect((await send(redisB, '/api/v1/categories', { 'x-forwarded-for': ip, authorization: bearer(newKey()) })).status).toBe(429);
  });

  it('a change of budgets, a rotation and a revocation reach every process within a second', async () => {
    const { name, key } = await makeKey({ other: 100 });
    const ip = uniqueIp();
    const processes = [redisA, redisB, inMemory];
    for (const base of processes) expect((await send(base, '/api/v1/categories', as(ip, key))).headers['x-ratelimit-limit']).toBe('100');
    const within = async (label: string, check: (base: string) => Promise<boolean>) => {
      const took = await untilTrue(async () => (await Promise.all(processes.map(check))).every(Boolean), 1500, label);
      expect(took, label).toBeLessThanOrEqual(1500);
    };

    await changeKey(stack.db.pool, name, { limits: { other: 250 } });
    await within('new budgets', async (base) => (await send(base, '/api/v1/categories', as(ip, key))).headers['x-ratelimit-limit'] === '250');

    // Rotated with the default grace: both secrets work, and spend one budget.
    const rotated = await rotateKey(stack.db.pool, name);
    await within('the new secret', async (base) => (await send(base, '/api/v1/categories', as(ip, rotated.key))).status === 200);
    const viaOld = await send(inMemory, '/api/v1/categories', as(ip, key));
    const viaNew = await send(inMemory, '/api/v1/categories', as(ip, rotated.key));
    expect(viaOld.status).toBe(200);
    expect(Number(viaNew.headers['x-ratelimit-remaining'])).toBe(Number(viaOld.headers['x-ratelimit-remaining']) - 1);

    // Rotated with no grace: the previous secrets stop at once, everywhere.
    const again = await rotateKey(stack.db.pool, name, 0);
    await within('no grace', async (base) => (await send(base, '/api/v1/categories', as(ip, key))).status === 401);
    for (const base of processes) {
      expectInvalidKey(await send(base, '/api/v1/categories', as(uniqueIp(), rotated.key)), /^This key was replaced by a newer one; it stopped working at \S+Z\.$/);
      expect((await send(base, '/api/v1/categories', as(ip, again.key))).status).toBe(200);
    }

    await revokeKey(stack.db.pool, name);
    await within('revocation', async (base) => (await send(base, `/api/v1/products/${SLUG}`, as(uniqueIp(), again.key))).status === 401);
    for (const base of processes) expectInvalidKey(await send(base, '/api/v1/search?q=pixel', as(uniqueIp(), again.key)), /revoked/);
  });

  it('a long poll of /changes whose key is revoked meanwhile ends at once with 401', async () => {
    const { name, key } = await makeKey();
    const ip = uniqueIp();
    const head = await send(redisB, '/api/v1/changes', as(ip, key));
    expect(head.status).toBe(200);
    const started = Date.now();
    const polling = send(redisB, `/api/v1/changes?since=${head.body.cursor as string}&wait=25`, as(ip, key));
    const polled = send(inMemory, `/api/v1/changes?since=${head.body.cursor as string}&wait=25`, as(ip, key));
    // A poll without a key, meanwhile, is not ended: it answers when its wait runs out.
    const anonymous = send(redisB, `/api/v1/changes?since=${head.body.cursor as string}&wait=2`, as(ip));
    await new Promise((r) => setTimeout(r, 300));
    await revokeKey(stack.db.pool, name);
    for (const res of await Promise.all([polling, polled])) {
      expectInvalidKey(res, /^This key was revoked by the operator\.$/, 'long poll', { budgetSpent: true });
      expect(res.headers['x-ratelimit-limit']).toBe('1200');
    }
    expect(Date.now() - started).toBeLessThan(10_000);
    const unkeyed = await anonymous;
    expect(unkeyed.status).toBe(200);
    expect(unkeyed.body).toEqual({ changes: [], cursor: head.body.cursor });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
  });
});

describe.skipIf(skip)('usage', () => {
  it('equals what the client saw answered, by family and refused, across the three processes and MCP', async () => {
    const { name, key } = await makeKey({ search: 4, other: 9, export: 1, changes: 2 });
    const seen = { search: 0, other: 0, export: 0, changes: 0, refused: 0 };
    const ip = uniqueIp();
    const bases = [redisA, redisB, inMemory];
    let n = 0;
    for (const family of ['search', 'other', 'export', 'changes'] as const) {
      for (let i = 0; i < 12; i++) {
        const res = await send(bases[n++ % 3]!, pathOf(family, i), as(ip, key));
        expect(res.status, `${family} ${i}`).toBeLessThan(500);
        if (res.status === 429) seen.refused++;
        else seen[family]++;
      }
    }
    // Answers that are not 200 are requests answered too: a 404, a 400, a 304.
    const etag = (await send(inMemory, `/api/v1/products/${SLUG}`, as(uniqueIp()))).headers.etag!;
    for (const [path, status, extra] of [
      ['/api/v1/products/no-such-product', 404, {}],
      ['/api/v1/search?page=0', 400, {}],
      ['/api/v1/categories?x=1', 400, {}],
      [`/api/v1/products/${SLUG}`, 304, { 'if-none-match': etag }],
    ] as const) {
      const res = await send(redisB, path, { ...as(ip, key), ...extra });
      if (res.status === 429) seen.refused++;
      else {
        expect(res.status, path).toBe(status);
        seen[path.includes('search') ? 'search' : 'other']++;
      }
    }
    // Bad Authorization carrying the key is not counted.
    await send(redisA, '/api/v1/categories', { 'x-forwarded-for': ip, authorization: [bearer(key), bearer(key)] });
    // MCP tool calls count as their family; initialize and the list of tools count as nothing.
    for (const base of [redisA, inMemory]) {
      const session = await mcpSession(base, as(ip, key));
      try {
        for (let i = 0; i < 3; i++) {
          const call = await callTool(session, 'search_products', { q: 'pixel' });
          if (call.ok) seen.search++;
          else {
            expect(call.body.code).toBe('TOO_MANY_REQUESTS');
            seen.refused++;
          }
        }
        await session.client.listTools();
      } finally {
        await session.client.close();
      }
    }
    expect(seen.refused).toBeGreaterThan(0);
    await Promise.all([stack.service.usageRecorder.flush(), second.usageRecorder.flush(), memory.usageRecorder.flush()]);
    const days = (await keyUsage(stack.db.pool, { name, days: 2 })).keys[0]!.days;
    const total = { search: 0, other: 0, export: 0, changes: 0, refused: 0 };
    for (const d of days) for (const column of Object.keys(total) as Array<keyof typeof total>) total[column] += d[column];
    expect(total).toEqual(seen);
    // Moved to PostgreSQL once: flushing again adds nothing.
    await Promise.all([stack.service.usageRecorder.flush(), second.usageRecorder.flush(), memory.usageRecorder.flush()]);
    const after = (await keyUsage(stack.db.pool, { name, days: 2 })).keys[0]!.days;
    expect(after).toEqual(days);
  });
});
