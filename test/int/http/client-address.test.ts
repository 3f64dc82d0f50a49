import http from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TRUST_ALL_WARNING } from '../../../src/http/client/client-address.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * Which address a request's budgets count, under every form of TRUST_PROXY, on every road that
 * answers: REST through Fastify and through the direct read path, MCP both ways, the pages, the
 * change feed's held places. Requests really arrive from several loopback addresses (127.0.0.x),
 * one of them the "proxy"; their X-Forwarded-For holds an address the client wrote itself
 * (leftmost, different every time) and the one the proxy appended.
 */
const BUDGET = 5;
const ENV = {
  RATE_LIMIT_SEARCH_PER_MIN: String(BUDGET),
  RATE_LIMIT_OTHER_PER_MIN: String(BUDGET),
  RATE_LIMIT_PAGES_PER_MIN: String(BUDGET),
  LONG_POLLS_PER_ADDRESS: '2',
  SITE_URL: '',
};

interface Answer {
  status: number;
  remaining: string | undefined;
  body: string;
}

const agents = new Map<string, http.Agent>();
/** A request sent from `from` (a loopback address), with X-Forwarded-For when given. */
function send(base: string, from: string, path: string, forwardedFor?: string, body?: unknown): Promise<Answer> {
  let agent = agents.get(from);
  if (!agent) agents.set(from, (agent = new http.Agent({ keepAlive: true, localAddress: from })));
  const url = new URL(path, base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: payload === undefined ? 'GET' : 'POST',
        agent,
        headers: {
          ...(forwardedFor !== undefined && { 'x-forwarded-for': forwardedFor }),
          ...(payload !== undefined && { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, remaining: res.headers['x-ratelimit-remaining'] as string | undefined, body: text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

let forged = 0;
/** What a client writes itself: a new address every time. */
const forgedAddress = () => `203.0.${113 + Math.floor(++forged / 250)}.${(forged % 250) + 1}`;

const mcpSearch = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'search_products', arguments: { q: 'pixel' } } });

/** The roads a budget is spent on, each with its own family or path; `n` makes each request distinct where the road needs it. */
const ROADS: { name: string; path: (n: number) => string; body?: (n: number) => unknown }[] = [
  { name: 'REST through Fastify (a search not cached)', path: (n) => `/api/v1/search?q=pixel${n}` },
  { name: 'REST on the direct read path (a product)', path: () => '/api/v1/products/pixel-forge' },
  { name: 'MCP on the direct path', path: () => '/api/mcp', body: mcpSearch },
  { name: 'MCP through Fastify (a query string)', path: () => '/api/mcp?through=fastify', body: mcpSearch },
  { name: 'a page', path: (n) => `/search?q=pixel${n}` },
];

/**
 * Sends BUDGET + 2 requests on a road; the statuses in order, an MCP refusal (a tool error
 * TOO_MANY_REQUESTS in a 200 answer) read as the 429 it is.
 */
async function spend(stack: TestStack, road: (typeof ROADS)[number], from: string, forwardedFor: () => string | undefined): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < BUDGET + 2; i++) {
    const answer = await send(stack.baseUrl, from, road.path(i), forwardedFor(), road.body?.(i + 1));
    statuses.push(road.body && answer.status === 200 && answer.body.includes('TOO_MANY_REQUESTS') ? 429 : answer.status);
  }
  return statuses;
}

const HELD = [...Array<number>(BUDGET).fill(200), 429, 429];
const FRESH = Array<number>(BUDGET + 2).fill(200);

describe.each([
  // form, the client a forged request from the proxy is counted as
  { trust: '1', counted: 'appended' },
  { trust: '127.0.0.1', counted: 'appended' },
  { trust: 'true', counted: 'forged' },
  { trust: 'false', counted: 'socket' },
] as const)('TRUST_PROXY=$trust', ({ trust, counted }) => {
  let stack: TestStack;
  const lines: string[] = [];
  let appended = 0;
  /** The address a proxy appends: one per road and test, so budgets start full. */
  const nextClient = () => `198.51.100.${++appended}`;

  beforeAll(async () => {
    const out = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
    stack = await startTestStack({ env: { ...ENV, TRUST_PROXY: trust }, logger: pino({ level: 'warn' }, out) });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  test.each(ROADS)('a forged X-Forwarded-For from the proxy, on $name', async (road) => {
    const client = nextClient();
    // The proxy is 127.0.0.1; under "false" each road gets a socket of its own instead.
    const proxy = counted === 'socket' ? `127.0.1.${appended}` : '127.0.0.1';
    const statuses = await spend(stack, road, proxy, () => `${forgedAddress()}, ${client}`);
    expect(statuses).toEqual(counted === 'forged' ? FRESH : HELD);
  });

  test('a malformed or empty X-Forwarded-For counts as the socket', async () => {
    const socket = `127.0.2.${trust.length}`;
    const headers = ['', 'unknown', `${nextClient()}, not-an-address`, ` , ${nextClient()}`, 'x', '', 'garbage'];
    let i = 0;
    const statuses = await spend(stack, ROADS[1]!, socket, () => headers[i++]);
    expect(statuses).toEqual(HELD);
  });

  if (trust === 'true') {
    test('the start warns once that the leftmost entry is believed', () => {
      const warnings = lines.filter((l) => l.includes(TRUST_ALL_WARNING.slice(0, 60)));
      expect(warnings).toHaveLength(1);
    });
  } else {
    test('the start says nothing of trust', () => {
      expect(lines.join('')).not.toContain('TRUST_PROXY');
    });
  }

  if (trust === '127.0.0.1') {
    test('a client reaching the service past the proxy is counted as itself, whatever it forwards', async () => {
      const statuses = await spend(stack, ROADS[1]!, '127.0.0.9', () => `${forgedAddress()}, ${forgedAddress()}`);
      expect(statuses).toEqual(HELD);
    });

    test('an IPv6 client is counted by its /64: a new address in it is not a new budget', async () => {
      let host = 0;
      const statuses = await spend(stack, ROADS[0]!, '127.0.0.1', () => `${forgedAddress()}, 2001:db8:42:7::${(++host).toString(16)}`);
      expect(statuses).toEqual(HELD);
      // Another /64 of the same /48 is another client.
      expect((await send(stack.baseUrl, '127.0.0.1', '/api/v1/search?q=other', '2001:db8:42:8::1')).status).toBe(200);
      // The same /64 spelled another way is the same client.
      expect((await send(stack.baseUrl, '127.0.0.1', '/api/v1/search?q=again', '2001:0DB8:0042:0007:0:0:0:ffff')).status).toBe(429);
    });

    test('held long polls are capped per /64', async () => {
      const first = await send(stack.baseUrl, '127.0.0.1', '/api/v1/changes', '2001:db8:43:1::1');
      expect(first.status).toBe(200);
      const cursor = (JSON.parse(first.body) as { cursor: string }).cursor;
      const poll = (client: string) => send(stack.baseUrl, '127.0.0.1', `/api/v1/changes?since=${encodeURIComponent(cursor)}&wait=3`, client);
      const held = [poll('2001:db8:43:1::a'), poll('2001:db8:43:1::b')];
      // Give both time to take their places before the third asks.
      await new Promise((r) => setTimeout(r, 500));
      const third = await poll('2001:db8:43:1::c');
      expect(third.status).toBe(429);
      expect(third.body).toContain('TOO_MANY_REQUESTS');
      const elsewhere = poll('2001:db8:43:2::1');
      expect((await Promise.all([...held, elsewhere])).map((a) => a.status)).toEqual([200, 200, 200]);
    });
  }
});

afterAll(() => {
  for (const agent of agents.values()) agent.destroy();
});
