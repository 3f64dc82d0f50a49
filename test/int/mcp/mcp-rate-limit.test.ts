import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * MCP calls spend from the same per-IP buckets as REST: search_products from the search budget;
 * list_categories, get_product and prompts/get from the other budget. Connecting and listing
 * are free. Each test runs its own service, so it starts with a full budget.
 */
let stack: TestStack | undefined;
const clients: Client[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await stack?.stop();
  stack = undefined;
});

async function start(env: { RATE_LIMIT_SEARCH_PER_MIN?: string; RATE_LIMIT_OTHER_PER_MIN?: string }): Promise<{ stack: TestStack; client: Client }> {
  stack = await startTestStack({ env });
  const client = new Client({ name: 'catalog-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/api/mcp', stack.baseUrl)));
  clients.push(client);
  return { stack, client };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function errorOf(result: CallToolResult): { code: string; message: string } {
  expect(result.isError).toBe(true);
  const block = result.content[0];
  if (block?.type !== 'text') throw new Error('expected a text block');
  return JSON.parse(block.text) as { code: string; message: string };
}

describe('MCP rate limits', () => {
  it('refuses the 31st search of a minute with TOO_MANY_REQUESTS, at the default budget', async () => {
    const { client } = await start({});
    for (let i = 0; i < 30; i++) {
      const result = await call(client, 'search_products', { page: 1 + (i % 3) });
      expect(result.isError, `search ${i + 1}`).toBeFalsy();
    }
    const error = errorOf(await call(client, 'search_products'));
    expect(error.code).toBe('TOO_MANY_REQUESTS');
    expect(error.message).toMatch(/slow down and retry shortly/);
    // Other calls have a budget of their own.
    expect((await call(client, 'list_categories')).isError).toBeFalsy();
  });

  it('shares the search budget with GET /search', async () => {
    const { stack, client } = await start({ RATE_LIMIT_SEARCH_PER_MIN: '4' });
    for (let i = 0; i < 2; i++) expect((await fetch(new URL('/api/v1/search', stack.baseUrl))).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await call(client, 'search_products', { q: 'pixel' })).isError).toBeFalsy();
    expect(errorOf(await call(client, 'search_products')).code).toBe('TOO_MANY_REQUESTS');
    const res = await fetch(new URL('/api/v1/search', stack.baseUrl));
    expect(res.status).toBe(429);
    expect(((await res.json()) as { code: string }).code).toBe('TOO_MANY_REQUESTS');
  });

  it('counts list_categories, get_product and prompts/get as other calls, shared with REST; listing and connecting are free', async () => {
    const { stack, client } = await start({ RATE_LIMIT_OTHER_PER_MIN: '5', RATE_LIMIT_SEARCH_PER_MIN: '1000' });
    // Free: initialize (each new client), tools/list, prompts/list, ping.
    for (let i = 0; i < 8; i++) {
      const extra = new Client({ name: 'catalog-test', version: '1.0.0' });
      await extra.connect(new StreamableHTTPClientTransport(new URL('/api/mcp', stack.baseUrl)));
      clients.push(extra);
      await extra.listTools();
      await extra.listPrompts();
      await extra.ping();
    }
    // Searches do not spend from the other budget.
    for (let i = 0; i < 6; i++) expect((await call(client, 'search_products')).isError).toBeFalsy();

    expect((await fetch(new URL('/api/v1/categories', stack.baseUrl))).status).toBe(200);
    expect((await call(client, 'list_categories')).isError).toBeFalsy();
    expect((await call(client, 'get_product', { slug: 'pixel-forge' })).isError).toBeFalsy();
    // A refused lookup counts too, as a REST 404 does.
    expect(errorOf(await call(client, 'get_product', { slug: 'no-such-listing' })).code).toBe('NOT_FOUND');
    await client.getPrompt({ name: 'submit_to_directory', arguments: { website: 'https://example.com' } });

    expect(errorOf(await call(client, 'get_product', { slug: 'pixel-forge' })).code).toBe('TOO_MANY_REQUESTS');
    expect(errorOf(await call(client, 'list_categories')).code).toBe('TOO_MANY_REQUESTS');
    await expect(client.getPrompt({ name: 'submit_to_directory', arguments: { website: 'https://example.com' } })).rejects.toThrow(
      /slow down and retry shortly/,
    );
    expect((await fetch(new URL('/api/v1/categories', stack.baseUrl))).status).toBe(429);
    // Still free once the budget is spent.
    expect((await client.listTools()).tools).toHaveLength(8);
  });

  it('reports the budget in the rate-limit headers of the HTTP answer', async () => {
    const { stack } = await start({ RATE_LIMIT_SEARCH_PER_MIN: '7' });
    const res = await fetch(new URL('/api/mcp', stack.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_products', arguments: {} } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('7');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('6');
    const body = (await res.json()) as { result: { isError?: boolean } };
    expect(body.result.isError).toBeFalsy();
  });
});
