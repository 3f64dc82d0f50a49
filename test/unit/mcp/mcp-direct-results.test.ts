import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { serializeResult, successResult } from '../../../src/mcp/direct-read-calls.ts';
import { READ_TOOLS } from '../../../src/mcp/read-tools.ts';
import { bodyResult } from '../../../src/mcp/tool-result.ts';

/**
 * The fast path of the read tools builds a tool's result itself, once per answer. Whatever the
 * body, valid or not, its bytes must be the ones the SDK sends for a handler that returns that
 * body: the same output validation, the same normalization, the same serialization.
 */
async function sdkResultBytes(toolName: string, body: string): Promise<string> {
  const tool = READ_TOOLS.find((t) => t.name === toolName)!;
  const server = new McpServer({ name: 'test', version: '1.0.0' });
  server.registerTool(tool.name, tool.config, () => bodyResult(body));
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const answered = new Promise<JSONRPCMessage>((resolve) => {
    client.onmessage = resolve;
  });
  await client.start();
  await client.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: {} } });
  const message = (await answered) as { result: unknown };
  await server.close();
  return JSON.stringify(message.result);
}

const PRODUCT = {
  id: '0a4f5f4e-6f0e-4b8e-9b1a-000000000001',
  slug: 'pixel-forge',
  name: 'Pixel "Forge"',
  punchline: 'Crisp \u2028 illustrations',
  description: '<p>Vector <strong>art</strong> \\ more</p>',
  url: 'https://directory.test/products/pixel-forge',
  website: 'https://pixelforge.example.com',
  logo: null,
  cover: null,
  category: 'design',
  labels: ['new'],
  tags: ['ai'],
  product_type: 'software',
  pricing_model: 'paid',
  social: null,
  featured: true,
  listed_at: '2026-10-20T12:00:00.000Z',
  highlights: [],
  ideal_for: [],
  faq: [{ question: 'Free?', answer: 'Yes.' }],
  promo: null,
};

describe('read-tool results built by the fast path', () => {
  it.each([
    ['get_product', 'a valid product', JSON.stringify(PRODUCT)],
    ['get_product', 'a product with a field too many', JSON.stringify({ ...PRODUCT, secret: 1 })],
    ['get_product', 'a product with a bad id and url', JSON.stringify({ ...PRODUCT, id: 'nope', url: 'not a url' })],
    ['search_products', 'a valid page', JSON.stringify({ products: [PRODUCT, PRODUCT], total: 2, page: 1, limit: 20 })],
    ['search_products', 'an empty page', '{"products":[],"total":0,"page":1,"limit":20}'],
    ['search_products', 'a page with a negative total', '{"products":[],"total":-1,"page":1,"limit":20}'],
    ['list_categories', 'a category list', '{"categories":[{"slug":"design","name":"Design","noun":"tools","url":"https://d.test/categories/design","count":2}]}'],
    ['list_categories', 'a category list missing a count', '{"categories":[{"slug":"design","name":"Design","noun":"tools","url":"https://d.test/categories/design"}]}'],
  ])('%s, %s: the bytes the SDK sends', async (toolName, _what, body) => {
    const tool = READ_TOOLS.find((t) => t.name === toolName)!;
    expect(serializeResult(successResult(tool, body))).toBe(await sdkResultBytes(toolName, body));
  });

  it('a body that fails the output schema is a tool error, as from the SDK', () => {
    const tool = READ_TOOLS.find((t) => t.name === 'search_products')!;
    const result = successResult(tool, '{"products":[],"total":-1,"page":1,"limit":20}');
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(JSON.stringify(result.content)).toMatch(/Output validation error: Invalid structured content for tool search_products/);
  });
});
