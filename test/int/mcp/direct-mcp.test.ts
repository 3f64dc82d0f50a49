/**
 * The MCP read calls answered beneath Fastify (src/mcp/direct-mcp.ts) must be invisible: the same
 * POST to /api/mcp sent to a service with that path and to one without it (DIRECT_READS=false),
 * both over real HTTP on one database, gets the same status, the same headers in the same order,
 * the same body byte for byte, spends the same budget and is counted the same in the request
 * metrics, in both protocol eras. With DIRECT_READS=false the route's own fast path is off too,
 * so the other service answers every request through the SDK. Requests it does not answer
 * (other methods, bad bodies, maker tools, browsers, access tokens) reach the route with their
 * body whole.
 */
import http from 'node:http';
import { randomInt } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { newKey } from '../../../src/auth/consumer-keys/consumer-keys.ts';
import type { RunningService } from '../../../src/service.ts';
import { LIVE_SLUGS_NEWEST_FIRST, NOT_LIVE_SLUGS } from '../../helpers/fixtures.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { keysForTwins, rawRequest, startTwinWithoutDirectPaths, type RawAnswer } from '../../helpers/twin-service.ts';

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
const post = (base: string, headers: Record<string, string>, body: string) => rawRequest(agent, base, 'POST', '/api/mcp', headers, body);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CLOCK_HEADERS = new Set(['x-ratelimit-reset', 'retry-after']);

function expectSameAnswer(direct: RawAnswer, plain: RawAnswer, label: string): void {
  expect(direct.status, label).toBe(plain.status);
  expect(direct.headers.map(([n]) => n), label).toEqual(plain.headers.map(([n]) => n));
  for (let i = 0; i < direct.headers.length; i++) {
    const [name, a] = direct.headers[i]!;
    const b = plain.headers[i]![1];
    if (name === 'date') continue;
    if (name === 'x-request-id' && UUID.test(a)) expect(b, label).toMatch(UUID);
    else if (CLOCK_HEADERS.has(name)) expect(Math.abs(Number(a) - Number(b)), `${label}: ${name}`).toBeLessThanOrEqual(1);
    else if (name === 'ratelimit') expect(a.split(';t=')[0], label).toBe(b.split(';t=')[0]);
    else expect(`${name}: ${a}`, label).toBe(`${name}: ${b}`);
  }
  // The seconds of a refusal's message follow the clock too.
  const text = (x: RawAnswer) => x.body.toString('utf8').replace(/in about \d+ s/g, 'in about N s');
  expect(text(direct), label).toBe(text(plain));
}

const rpc = (id: unknown, method: string, params?: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) });
const call = (name: string, args?: unknown, id: unknown = 7) => rpc(id, 'tools/call', { name, ...(args !== undefined && { arguments: args }) });

const bodies = fc.constantFrom(
  call('get_product', { slug: LIVE_SLUGS_NEWEST_FIRST[0] }),
  call('get_product', { slug: LIVE_SLUGS_NEWEST_FIRST[1] }, 'str-id'),
  call('get_product', { slug: NOT_LIVE_SLUGS[0] }),
  call('get_product', { slug: 'Not A Slug' }),
  call('get_product', {}),
  call('list_categories', {}),
  call('list_categories'),
  call('list_categories', { x: 1 }),
  call('search_products', { q: 'notes' }),
  call('search_products', { q: 'notes', limit: 2 }),
  call('search_products', { q: 'a' }),
  call('search_products', {}),
  call('no_such_tool', {}),
  call('my_listings', {}),
  call('get_product', { slug: LIVE_SLUGS_NEWEST_FIRST[0] }, 1.5),
  rpc(1, 'tools/list'),
  rpc(2, 'ping'),
  rpc(3, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } }),
  JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  JSON.stringify([JSON.parse(call('list_categories', {}))]),
  JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'list_categories', arguments: {}, _meta: {} } }),
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_product","arguments":{"slug":"x","__proto__":{"a":1}}}}',
  '{"jsonrpc":"2.0",',
  '',
  rpc(11, 'resources/read', { uri: `catalog://products/${LIVE_SLUGS_NEWEST_FIRST[2]}` }),
  rpc(12, 'resources/read', { uri: `catalog://products/${NOT_LIVE_SLUGS[1]}` }),
  rpc(13, 'resources/read', { uri: 'catalog://categories/design' }),
  rpc(14, 'resources/read', { uri: 'catalog://categories/nope' }),
  rpc(15, 'resources/read', { uri: `catalog://products/${'z'.repeat(300)}` }),
  rpc(16, 'resources/read', { uri: 'https://example.com/x' }),
  rpc(17, 'completion/complete', { ref: { type: 'ref/resource', uri: 'catalog://products/{slug}' }, argument: { name: 'slug', value: 'p' } }),
);

/** The 2026-07-28 envelope, added to a body's params (a body that is not one request is sent as it is). */
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

function modernBody(body: string): { body: string; method?: string; name?: string } {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return { body };
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return { body };
  const m = message as { method?: unknown; params?: Record<string, unknown> };
  const params: Record<string, unknown> = { ...(typeof m.params === 'object' && m.params !== null ? m.params : {}), _meta: ENVELOPE };
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  return { body: JSON.stringify({ ...m, params }), ...(typeof m.method === 'string' && { method: m.method }), ...(name !== undefined && { name }) };
}

interface Case {
  body: string;
  ip: number;
  accept: 'both' | 'json';
  contentType: 'json' | 'charset' | 'text';
  version: 'none' | 'supported' | 'unknown';
  origin: 'none' | 'allowed' | 'foreign';
  key: 'none' | 'valid' | 'unknown' | 'token';
  requestId: boolean;
  /** The 2026-07-28 envelope and headers (their Mcp-Name sometimes another than the body's). */
  era: 'legacy' | 'modern' | 'modern, Mcp-Name differs';
}

const aCase: fc.Arbitrary<Case> = fc.record({
  body: bodies,
  ip: fc.integer({ min: 0, max: 5 }),
  accept: fc.constantFrom('both', 'both', 'both', 'json'),
  contentType: fc.constantFrom('json', 'json', 'charset', 'text'),
  version: fc.constantFrom('none', 'supported', 'supported', 'unknown'),
  origin: fc.constantFrom('none', 'none', 'none', 'allowed', 'foreign'),
  key: fc.constantFrom('none', 'none', 'valid', 'valid', 'unknown', 'token'),
  requestId: fc.boolean(),
  era: fc.constantFrom('legacy', 'modern', 'modern', 'modern, Mcp-Name differs'),
});

let stack: TestStack;
let plain: RunningService;
const octet = randomInt(128);
const prefix = `10.${2 * octet}.${randomInt(256)}`;
const plainPrefix = `10.${2 * octet + 1}.${prefix.split('.')[2]}`;
let directKey = '';
let plainKey = '';

beforeAll(async () => {
  const env = { TRUST_PROXY: 'true', RATE_LIMIT_OTHER_PER_MIN: '40', RATE_LIMIT_SEARCH_PER_MIN: '40', MCP_ALLOWED_ORIGINS: 'https://app.example' };
  stack = await startTestStack({ env });
  plain = await startTwinWithoutDirectPaths(stack, env);
  ({ directKey, plainKey } = await keysForTwins(stack, plain, 'mcp', { search: 40, other: 40 }));
}, 60_000);

afterAll(async () => {
  await plain?.close();
  await stack?.stop();
  agent.destroy();
});

async function mcpCounts(base: string): Promise<{ requests: string[]; direct: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const lines = text.split('\n');
  return {
    requests: lines.filter((l) => /^http_requests_total\{|^http_request_duration_seconds_count\{/.test(l) && l.includes('route="/api/mcp"')).sort(),
    direct: lines.filter((l) => l.startsWith('http_direct_answers_total{') && l.includes('route="/api/mcp"')).reduce((n, l) => n + Number(l.split(' ').pop()), 0),
  };
}

test('every MCP answer is the same with and without the path beneath Fastify: status, headers in order, body, budget', async () => {
  const unknownKey = newKey();
  await fc.assert(
    fc.asyncProperty(aCase, async (c) => {
      const headers: Record<string, string> = {
        'x-forwarded-for': `${prefix}.${c.ip + 1}`,
        accept: c.accept === 'both' ? 'application/json, text/event-stream' : 'application/json',
        'content-type': { json: 'application/json', charset: 'application/json; charset=utf-8', text: 'text/plain' }[c.contentType],
      };
      let body = c.body;
      if (c.era === 'legacy') {
        if (c.version !== 'none') headers['mcp-protocol-version'] = c.version === 'supported' ? '2025-06-18' : '1999-01-01';
      } else {
        const modern = modernBody(c.body);
        body = modern.body;
        headers['mcp-protocol-version'] = c.version === 'unknown' ? '1999-01-01' : '2026-07-28';
        if (modern.method !== undefined) headers['mcp-method'] = modern.method;
        if (modern.name !== undefined) headers['mcp-name'] = c.era === 'modern' ? modern.name : 'list_categories';
      }
      if (c.origin !== 'none') headers.origin = c.origin === 'allowed' ? 'https://app.example' : 'https://evil.example';
      if (c.key !== 'none') headers.authorization = { valid: `Bearer ${directKey}`, unknown: `Bearer ${unknownKey}`, token: 'Bearer eyJhbGciOiJFUzI1NiJ9.e30.x' }[c.key];
      if (c.requestId) headers['x-request-id'] = 'trace-mcp-1';
      const forPlain: Record<string, string> = { ...headers, 'x-forwarded-for': headers['x-forwarded-for']!.replace(prefix, plainPrefix) };
      if (headers.authorization) forPlain.authorization = headers.authorization.replace(directKey, plainKey);
      const a = await post(stack.baseUrl, headers, body);
      const b = await post(plain.url, forPlain, body);
      expectSameAnswer(a, b, `${body.slice(0, 160)} ${JSON.stringify(headers)}`);
    }),
    { numRuns: 400 },
  );
  const direct = await mcpCounts(stack.baseUrl);
  const without = await mcpCounts(plain.url);
  // The path beneath Fastify did answer some, the other service none; both counted the same requests.
  expect(direct.direct).toBeGreaterThan(0);
  expect(without.direct).toBe(0);
  expect(direct.requests).toEqual(without.requests);
}, 120_000);

test('a request it reads and hands over reaches the route with its body whole', async () => {
  const headers = { 'x-forwarded-for': `${prefix}.100`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  const before = (await mcpCounts(stack.baseUrl)).direct;
  const listed = await post(stack.baseUrl, headers, rpc(41, 'tools/list'));
  expect(listed.status).toBe(200);
  const answer = JSON.parse(listed.body.toString('utf8')) as { id: number; result: { tools: Array<{ name: string }> } };
  expect(answer.id).toBe(41);
  expect(answer.result.tools.map((t) => t.name)).toContain('get_product');
  const product = await post(stack.baseUrl, headers, call('get_product', { slug: LIVE_SLUGS_NEWEST_FIRST[0] }, 42));
  expect(JSON.parse(product.body.toString('utf8')).result.structuredContent.slug).toBe(LIVE_SLUGS_NEWEST_FIRST[0]);
  // tools/list went to the route, get_product was answered beneath it.
  expect((await mcpCounts(stack.baseUrl)).direct - before).toBe(1);
});
