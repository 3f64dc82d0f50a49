import { createMcpHandler, McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { Era } from '../../../src/mcp/protocol.ts';
import { READ_TOOLS, successResult } from '../../../src/mcp/read-tools.ts';

/**
 * The fast path of the read tools builds a tool's result itself, once per answer, and writes
 * it as it is (direct-read-calls.ts). The SDK must send the very same bytes for a handler that
 * returns that result, in both eras: the results are shaped for their era by our own code
 * (`resultType` and the server's identity in the modern era), so the SDK's encoding leaves them
 * unchanged. Whatever the body, valid or not.
 */
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function serverFor(toolName: string, body: string, era: Era): McpServer {
  const tool = READ_TOOLS.find((t) => t.name === toolName)!;
  const server = new McpServer({ name: 'test', version: '1.0.0' });
  server.registerTool(tool.name, tool.config, () => successResult(tool, body, era, undefined));
  return server;
}

/** The `result` member of the SDK's answer, as bytes. */
async function sdkResultBytes(toolName: string, body: string, era: Era): Promise<string> {
  const message = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: toolName, arguments: {}, ...(era === 'modern' && { _meta: META }) } };
  let response: Response;
  if (era === 'modern') {
    const handler = createMcpHandler(() => serverFor(toolName, body, era), { legacy: 'reject' });
    const headers = { ...HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': toolName };
    response = await handler.fetch(new Request('http://mcp.invalid/api/mcp', { method: 'POST', headers, body: JSON.stringify(message) }));
  } else {
    const server = serverFor(toolName, body, era);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    response = await transport.handleRequest(new Request('http://mcp.invalid/api/mcp', { method: 'POST', headers: HEADERS, body: JSON.stringify(message) }));
    await server.close();
  }
  const text = await response.text();
  const start = text.indexOf('{"result":') + '{"result":'.length;
  const end = text.lastIndexOf(',"jsonrpc":"2.0","id":1}');
  expect(start, text).toBeGreaterThan(9);
  return text.slice(start, end);
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

describe.each(['legacy', 'modern'] as const)('read-tool results built by the fast path, %s era', (era) => {
  it.each([
    ['get_product', 'a valid product', JSON.stringify(PRODUCT)],
    ['get_product', 'a product with a field too many', JSON.stringify({ ...PRODUCT, secret: 1 })],
    ['get_product', 'a product with a bad id and url', JSON.stringify({ ...PRODUCT, id: 'nope', url: 'not a url' })],
    ['search_products', 'a valid page', JSON.stringify({ products: [PRODUCT, { ...PRODUCT, slug: 'other', url: 'https://directory.test/products/other' }], total: 2, page: 1, limit: 20 })],
    ['search_products', 'an empty page', '{"products":[],"total":0,"page":1,"limit":20}'],
    ['search_products', 'a page with a negative total', '{"products":[],"total":-1,"page":1,"limit":20}'],
    ['list_categories', 'a category list', '{"categories":[{"slug":"design","name":"Design","noun":"tools","url":"https://d.test/categories/design","count":2}]}'],
    ['list_categories', 'a category list missing a count', '{"categories":[{"slug":"design","name":"Design","noun":"tools","url":"https://d.test/categories/design"}]}'],
  ])('%s, %s: the bytes the SDK sends', async (toolName, _what, body) => {
    const tool = READ_TOOLS.find((t) => t.name === toolName)!;
    expect(JSON.stringify(successResult(tool, body, era, undefined))).toBe(await sdkResultBytes(toolName, body, era));
  });

  it('a body that fails the contract is an internal error, with no structured result', () => {
    const tool = READ_TOOLS.find((t) => t.name === 'search_products')!;
    const result = successResult(tool, '{"products":[],"total":-1,"page":1,"limit":20}', era, undefined);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({ code: 'INTERNAL_SERVER_ERROR' });
    expect('resultType' in result).toBe(era === 'modern');
  });
});
