import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * MCP servers are built once and reused across requests, and plain read-tool calls skip them
 * altogether; either way each call must be charged to its own caller and report that caller's
 * budget. Many callers at once, through both paths: every address gets exactly its budget,
 * and every answer carries its own address's count.
 */
let stack: TestStack;
const BUDGET = 5;

beforeAll(async () => {
  stack = await startTestStack({ env: { TRUST_PROXY: 'true', RATE_LIMIT_OTHER_PER_MIN: String(BUDGET), RATE_LIMIT_SEARCH_PER_MIN: String(BUDGET) } });
});

afterAll(async () => {
  await stack?.stop();
});

interface Sent {
  ip: string;
  status: number;
  remaining: string | null;
  limit: string | null;
  refused: boolean;
}

/** A call the fast path answers, and calls only an SDK server answers (with _meta, a prompt, a batch). */
const CALLS = [
  { path: 'direct', body: (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_product', arguments: { slug: 'pixel-forge' } } }) },
  {
    path: 'sdk',
    body: (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_categories', arguments: {}, _meta: { progressToken: id } } }),
  },
  { path: 'sdk', body: (id: number) => ({ jsonrpc: '2.0', id, method: 'prompts/get', params: { name: 'submit_to_directory', arguments: { website: 'https://acme.example.com' } } }) },
  { path: 'sdk', body: (id: number) => [{ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_product', arguments: { slug: 'no-such-listing' } } }] },
];

async function send(ip: string, i: number): Promise<Sent> {
  const call = CALLS[i % CALLS.length]!;
  const res = await fetch(new URL('/api/mcp', stack.baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-forwarded-for': ip },
    body: JSON.stringify(call.body(i + 1)),
  });
  const text = await res.text();
  return {
    ip,
    status: res.status,
    remaining: res.headers.get('x-ratelimit-remaining'),
    limit: res.headers.get('x-ratelimit-limit'),
    refused: text.includes('TOO_MANY_REQUESTS'),
  };
}

describe('the caller of each MCP request', () => {
  it('is charged and told its own budget, whichever path answers, many callers at once', async () => {
    const ips = ['192.0.2.1', '192.0.2.2', '192.0.2.3', '198.51.100.7'];
    const perIp = 12;
    const sent = await Promise.all(ips.flatMap((ip) => Array.from({ length: perIp }, (_, i) => send(ip, i))));
    for (const ip of ips) {
      const mine = sent.filter((s) => s.ip === ip);
      expect(mine.every((s) => s.status === 200 && s.limit === String(BUDGET)), ip).toBe(true);
      const served = mine.filter((s) => !s.refused);
      expect(served, ip).toHaveLength(BUDGET);
      expect(served.map((s) => Number(s.remaining)).sort()).toEqual([0, 1, 2, 3, 4]);
      expect(mine.filter((s) => s.refused).every((s) => s.remaining === '0'), ip).toBe(true);
    }
  });

  it('is the same for the search budget, read by the fast path and the SDK alike', async () => {
    const ip = '203.0.113.9';
    const search = (meta: boolean) =>
      fetch(new URL('/api/mcp', stack.baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-forwarded-for': ip },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_products', arguments: { q: 'pixel' }, ...(meta && { _meta: {} }) } }),
      });
    const remaining: string[] = [];
    for (let i = 0; i < BUDGET; i++) remaining.push((await search(i % 2 === 1)).headers.get('x-ratelimit-remaining')!);
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const refused = await search(false);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect(await refused.text()).toContain('TOO_MANY_REQUESTS');
  });
});
