import { describe, expect, it } from 'vitest';
import type { CatalogSample } from '../../../bench/catalog-sample.ts';
import { mcpMessage, mcpProblem } from '../../../bench/preflight.ts';
import { buildScenarios, MCP_HEADERS, MODERN_META, mcpProductRead, mcpRequest, mcpToolCall, productSlugs, selectScenarios } from '../../../bench/scenarios.ts';

/** The bench's MCP requests in both eras, and how the preflight judges their answers. */

const sample: CatalogSample = {
  products: Array.from({ length: 30 }, (_, i) => ({ slug: `tool-${i}`, name: `Tool ${i}`, punchline: 'Plan sprints with your team', category: 'productivity', tags: ['planning'] })),
  categories: [{ slug: 'productivity', count: 30 }],
  words: [{ word: 'sprints', products: 30 }],
  vocabulary: new Set(['plan', 'sprints', 'with', 'your', 'team']),
  tags: [{ tag: 'planning', products: 30 }],
  searchPage: '{"products":[],"total":0,"page":1,"limit":20}',
};

describe('mcpRequest', () => {
  it('writes a 2025-11-25 request as a plain JSON-RPC POST', () => {
    const r = mcpToolCall('2025-11-25', 'get_product', { slug: 'tool-1' });
    expect(r).toMatchObject({ method: 'POST', path: '/api/mcp', headers: MCP_HEADERS });
    expect(JSON.parse(r.body!)).toEqual({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_product', arguments: { slug: 'tool-1' } } });
    expect(JSON.parse(mcpRequest('2025-11-25', 'tools/list').body!)).toEqual({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  });

  it('writes a 2026-07-28 request with its envelope and the headers that mirror it', () => {
    const r = mcpToolCall('2026-07-28', 'search_products', {});
    expect(r.headers).toEqual({ ...MCP_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'search_products' });
    expect(JSON.parse(r.body!)).toEqual({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_products', arguments: {}, _meta: MODERN_META } });

    const read = mcpProductRead('2026-07-28', 'tool-1');
    expect(read.headers?.['mcp-name']).toBe('catalog://products/tool-1');
    expect(JSON.parse(read.body!).params).toEqual({ uri: 'catalog://products/tool-1', _meta: MODERN_META });

    const list = mcpRequest('2026-07-28', 'tools/list');
    expect(list.headers).not.toHaveProperty('mcp-name');
    expect(JSON.parse(list.body!).params).toEqual({ _meta: MODERN_META });
  });
});

describe('the MCP scenarios', () => {
  const scenarios = buildScenarios(sample);
  const byId = new Map(scenarios.map((s) => [s.id, s]));

  it('has every MCP row in both eras, each 2026-07-28 twin right after its 2025-11-25 row', () => {
    const ids = scenarios.filter((s) => s.kind === 'mcp').map((s) => s.id);
    expect(ids).toEqual([
      'mcp-search',
      'mcp-search-2026',
      'mcp-product',
      'mcp-product-2026',
      'mcp-categories',
      'mcp-categories-2026',
      'mcp-resource-product',
      'mcp-resource-product-2026',
    ]);
    for (const id of ids) {
      const s = byId.get(id)!;
      const era = id.endsWith('-2026') ? '2026-07-28' : '2025-11-25';
      expect(s.era).toBe(era);
      expect(s.title).toContain(era);
      for (const r of s.requests) expect(r.headers?.['mcp-protocol-version']).toBe(era === '2026-07-28' ? era : undefined);
    }
  });

  it('compares the read tools with their baselines and the resource reads with hello-world', () => {
    expect(byId.get('mcp-search')!.baseline).toBe('body');
    expect(byId.get('mcp-search-2026')!.baseline).toBe('body');
    for (const id of ['mcp-product', 'mcp-product-2026', 'mcp-categories', 'mcp-categories-2026', 'mcp-resource-product', 'mcp-resource-product-2026']) {
      expect(byId.get(id)!.baseline).toBe('hello');
    }
  });

  it('reads the resources of the very slugs get_product asks for, in the same order', () => {
    const slugs = productSlugs(sample);
    const argsOf = (id: string) => byId.get(id)!.requests.map((r) => JSON.parse(r.body!).params as { arguments?: { slug: string }; uri?: string });
    expect(argsOf('mcp-product').map((p) => p.arguments!.slug)).toEqual(slugs);
    expect(argsOf('mcp-product-2026').map((p) => p.arguments!.slug)).toEqual(slugs);
    expect(argsOf('mcp-resource-product').map((p) => p.uri)).toEqual(slugs.map((s) => `catalog://products/${s}`));
    expect(argsOf('mcp-resource-product-2026').map((p) => p.uri)).toEqual(slugs.map((s) => `catalog://products/${s}`));
    expect(byId.get('product')!.requests.map((r) => r.path)).toEqual(slugs.map((s) => `/api/v1/products/${s}`));
  });
});

describe('selectScenarios (--only)', () => {
  const scenarios = buildScenarios(sample);
  const chosen = (...only: string[]) => selectScenarios(scenarios, only).filter((s) => s.kind !== 'baseline').map((s) => s.id);

  it('takes an id alone, and a prefix for every id it begins', () => {
    expect(chosen('mcp-product')).toEqual(['mcp-product']);
    expect(chosen('mcp-product-2026')).toEqual(['mcp-product-2026']);
    expect(chosen('mcp-resource')).toEqual(['mcp-resource-product', 'mcp-resource-product-2026']);
    expect(chosen('mcp')).toHaveLength(8);
    expect(chosen('search-word')).toEqual(['search-word-cached', 'search-word-uncached']);
    expect(selectScenarios(scenarios, ['mcp-product']).filter((s) => s.kind === 'baseline').length).toBeGreaterThan(0);
  });

  it('runs no load when it names no scenario (a phase alone)', () => {
    expect(selectScenarios(scenarios, ['context'])).toEqual([]);
  });
});

describe('the preflight of MCP answers', () => {
  const call = mcpToolCall('2025-11-25', 'get_product', { slug: 'tool-1' }).body!;
  const modernCall = mcpToolCall('2026-07-28', 'get_product', { slug: 'tool-1' }).body!;
  const read = mcpProductRead('2026-07-28', 'tool-1').body!;
  const toolResult = { content: [{ type: 'text', text: 'Tool 1' }], structuredContent: { slug: 'tool-1' } };

  it('reads a JSON answer and an answer sent as a server-sent event', () => {
    const message = { jsonrpc: '2.0', id: 1, result: toolResult };
    expect(mcpMessage('application/json', JSON.stringify(message))).toEqual(message);
    expect(mcpMessage('text/event-stream', `event: message\ndata: ${JSON.stringify(message)}\n\n`)).toEqual(message);
  });

  it('takes real results', () => {
    expect(mcpProblem(call, { result: toolResult })).toBeUndefined();
    expect(mcpProblem(modernCall, { result: { ...toolResult, resultType: 'complete' } })).toBeUndefined();
    expect(mcpProblem(read, { result: { contents: [{ uri: 'catalog://products/tool-1', text: '{}' }], resultType: 'complete' } })).toBeUndefined();
    expect(mcpProblem(mcpRequest('2025-11-25', 'tools/list').body!, { result: { tools: [{ name: 'get_product' }] } })).toBeUndefined();
  });

  it('refuses errors, tool errors and empty results', () => {
    expect(mcpProblem(call, { error: { code: -32602, message: 'Invalid params' } })).toMatch(/JSON-RPC error/);
    expect(mcpProblem(call, {})).toMatch(/no result/);
    expect(mcpProblem(call, { result: { ...toolResult, isError: true } })).toMatch(/failed/);
    expect(mcpProblem(call, { result: { content: toolResult.content } })).toMatch(/structuredContent/);
    expect(mcpProblem(read, { result: { contents: [], resultType: 'complete' } })).toMatch(/no contents/);
    expect(mcpProblem(mcpRequest('2025-11-25', 'tools/list').body!, { result: { tools: [] } })).toMatch(/no tools/);
  });

  it('wants resultType "complete" in the answer to a 2026-07-28 request', () => {
    expect(mcpProblem(modernCall, { result: toolResult })).toMatch(/resultType/);
    expect(mcpProblem(read, { result: { contents: [{ uri: 'catalog://products/tool-1', text: '{}' }] } })).toMatch(/resultType/);
  });
});
