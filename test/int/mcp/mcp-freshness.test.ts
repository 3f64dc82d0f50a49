import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * The read tools keep each serialized result with the answer it came from: a committed change
 * must still reach every MCP answer, through the fast path and the SDK alike, exactly as it
 * reaches REST, and a listing that stops being live is gone from them.
 */
let stack: TestStack;
let app: FastifyInstance;

beforeAll(async () => {
  stack = await startTestStack({ listen: false, env: { RATE_LIMIT_SEARCH_PER_MIN: '100000', RATE_LIMIT_OTHER_PER_MIN: '100000' } });
  app = stack.service.app;
});
afterAll(async () => {
  await stack?.stop();
});

/** A tools/call, plain (fast path) or with _meta (which only the SDK serves). */
async function call(name: string, args: Record<string, unknown>, sdk = false): Promise<{ text: string; structured: unknown; rest: string }> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, ...(sdk && { _meta: {} }) } }),
  });
  expect(res.statusCode).toBe(200);
  const { result } = res.json() as { result: { content: Array<{ text: string }>; structuredContent?: unknown; isError?: boolean } };
  // A success carries the REST body as its structured result; an error, the REST error object as text.
  return { text: result.content[0]!.text, structured: result.structuredContent, rest: result.isError ? result.content[0]!.text : JSON.stringify(result.structuredContent) };
}

async function rest(path: string): Promise<string> {
  return (await app.inject({ method: 'GET', url: `/api/v1${path}` })).body;
}

async function visible(check: () => Promise<boolean>): Promise<void> {
  await stack.settle();
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error('the change is not visible yet');
    },
    { timeout: 20_000, interval: 50 },
  );
}

const READS: Array<[tool: string, args: Record<string, unknown>, path: string]> = [
  ['get_product', { slug: 'pixel-forge' }, '/products/pixel-forge'],
  ['search_products', { category: 'design' }, '/search?category=design'],
  ['list_categories', {}, '/categories'],
];

test('an edited listing and a listing taken down show in every read tool, on both paths', async () => {
  for (const [tool, args, path] of READS) {
    // Served twice, so the second answer comes from the kept result.
    await call(tool, args);
    expect((await call(tool, args)).rest).toBe(await rest(path));
    expect((await call(tool, args, true)).rest).toBe(await rest(path));
  }
  expect((await call('get_product', { slug: 'pixel-forge' })).text).toContain('Pixel Forge');

  await stack.db.pool.query(`UPDATE catalog.listings SET name = 'Pixel Foundry', updated_at = now() WHERE slug = 'pixel-forge'`);
  await visible(async () => (await rest('/products/pixel-forge')).includes('Pixel Foundry'));
  for (const [tool, args, path] of READS.slice(0, 2)) {
    for (const sdk of [false, true]) {
      const answer = await call(tool, args, sdk);
      expect(answer.rest, `${tool} ${sdk ? 'SDK' : 'fast path'}`).toBe(await rest(path));
      expect(answer.text).toContain('Pixel Foundry');
    }
  }

  const designBefore = JSON.parse((await call('list_categories', {})).rest) as { categories: Array<{ slug: string; count: number }> };
  await stack.db.pool.query(`UPDATE catalog.listings SET status = 'hidden', updated_at = now() WHERE slug = 'pixel-forge'`);
  await visible(async () => (await rest('/products/pixel-forge')).includes('NOT_FOUND'));
  for (const sdk of [false, true]) {
    expect((await call('get_product', { slug: 'pixel-forge' }, sdk)).text).toContain('NOT_FOUND');
    expect((await call('search_products', { category: 'design' }, sdk)).rest).not.toContain('pixel-forge');
    expect((await call('search_products', { category: 'design' }, sdk)).text).not.toContain('pixel-forge');
    const after = JSON.parse((await call('list_categories', {}, sdk)).rest) as typeof designBefore;
    const count = (list: typeof designBefore) => list.categories.find((c) => c.slug === 'design')!.count;
    expect(count(after)).toBe(count(designBefore) - 1);
  }
});
