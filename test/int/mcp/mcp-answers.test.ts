import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * The MCP endpoint's answers, byte for byte, over the fixture catalog, in both protocol eras:
 * status, headers and body of every exchange below are compared with the answers recorded in
 * mcp-answers.json, which are taken from a service with DIRECT_READS=false, where the SDK
 * answers every request, validating and serializing every result. The fast paths must answer
 * exactly the same bytes.
 *
 * Re-record (only when an answer is meant to change, and say why in the commit; the recording
 * runs the service with DIRECT_READS=false):
 *   RECORD_MCP_ANSWERS=1 npx vitest run test/int/mcp/mcp-answers.test.ts
 *
 * What varies with the clock is normalized before comparing, after checking it is plausible:
 * the end of the rate-limit window (X-RateLimit-Reset, `t=` of RateLimit, Retry-After, and the
 * seconds in a TOO_MANY_REQUESTS message). Date and connection headers are left out.
 */
const FIXTURE = new URL('../../fixtures/mcp-answers.json', import.meta.url);
const RECORD = process.env.RECORD_MCP_ANSWERS === '1';

interface Exchange {
  name: string;
  method?: string;
  /** Sent verbatim. */
  body?: string;
  headers?: Record<string, string>;
}

interface Answer {
  name: string;
  request: { method: string; headers: Record<string, string>; body: string | null };
  status: number;
  headers: Record<string, string>;
  body: string;
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function rpc(id: unknown, method: string, params?: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) });
}

function tool(name: string, args?: unknown, id: unknown = 1): string {
  return rpc(id, 'tools/call', { name, ...(args !== undefined && { arguments: args }) });
}

const INITIALIZE_PARAMS = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'recorder', version: '1.0.0' } };

/** A 2026-07-28 request: the envelope in `params._meta` and the standard headers. */
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'recorder', version: '1.0.0' } };

function modern(name: string, id: unknown, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}): Exchange {
  const mcpName = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  return {
    name: `2026: ${name}`,
    body: rpc(id, method, { ...params, _meta: ENVELOPE }),
    headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(mcpName !== undefined && { 'mcp-name': mcpName }), ...headers },
  };
}

function modernTool(name: string, tool: string, args?: unknown, id: unknown = 1): Exchange {
  return modern(name, id, 'tools/call', { name: tool, ...(args !== undefined && { arguments: args }) });
}

const PRODUCT_URI = 'catalog://products/pixel-forge';

/** Answers of the read tools and the protocol, with budgets out of the way. */
const ANSWERS: Exchange[] = [
  // protocol
  { name: 'initialize', body: rpc(1, 'initialize', INITIALIZE_PARAMS) },
  { name: 'initialize, latest protocol', body: rpc(2, 'initialize', { ...INITIALIZE_PARAMS, protocolVersion: '2025-11-25' }) },
  { name: 'initialize, unknown protocol', body: rpc('init', 'initialize', { ...INITIALIZE_PARAMS, protocolVersion: '1999-01-01' }) },
  { name: 'notifications/initialized', body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) },
  { name: 'ping', body: rpc(3, 'ping') },
  { name: 'tools/list', body: rpc(4, 'tools/list') },
  { name: 'tools/list with a protocol header', body: rpc(4, 'tools/list'), headers: { 'mcp-protocol-version': '2025-06-18' } },
  { name: 'prompts/list', body: rpc(5, 'prompts/list') },
  { name: 'resources/list', body: rpc(6, 'resources/list') },
  { name: 'unknown method', body: rpc(7, 'no/such/method') },
  { name: 'prompts/get', body: rpc(8, 'prompts/get', { name: 'submit_to_directory', arguments: { website: 'https://acme.example.com/' } }) },
  { name: 'prompts/get, bad website', body: rpc(9, 'prompts/get', { name: 'submit_to_directory', arguments: { website: 'ftp://acme.example.com' } }) },
  { name: 'prompts/get, no website', body: rpc(10, 'prompts/get', { name: 'submit_to_directory', arguments: {} }) },
  { name: 'prompts/get, unknown prompt', body: rpc(11, 'prompts/get', { name: 'nope', arguments: {} }) },
  { name: 'batch', body: JSON.stringify([JSON.parse(rpc(1, 'ping')), JSON.parse(tool('list_categories', {}, 2))]) },
  { name: 'batch of one call', body: JSON.stringify([JSON.parse(tool('get_product', { slug: 'pixel-forge' }))]) },
  { name: 'not JSON', body: '{"jsonrpc": "2.0", "id": 1, ' },
  { name: 'not JSON-RPC', body: '{"hello":"world"}' },
  { name: 'JSON-RPC 1.0', body: JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'tools/call', params: { name: 'list_categories', arguments: {} } }) },
  { name: 'an extra member', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_categories', arguments: {} }, extra: 1 }) },
  { name: 'no accept', body: tool('list_categories', {}), headers: { accept: 'application/json' } },
  { name: 'accept */*', body: tool('list_categories', {}), headers: { accept: '*/*' } },
  { name: 'unsupported protocol header', body: tool('list_categories', {}), headers: { 'mcp-protocol-version': '2099-01-01' } },
  { name: 'supported protocol header', body: tool('list_categories', {}), headers: { 'mcp-protocol-version': '2025-11-25' } },
  { name: 'json with charset', body: tool('list_categories', {}), headers: { 'content-type': 'application/json; charset=utf-8' } },
  { name: 'text/plain', body: tool('list_categories', {}), headers: { 'content-type': 'text/plain' } },
  { name: 'GET', method: 'GET' },
  { name: 'DELETE', method: 'DELETE' },
  { name: 'allowed origin', body: tool('get_product', { slug: 'type-scale' }), headers: { origin: 'http://catalog.test' } },
  { name: 'configured origin', body: tool('search_products', { q: 'pixel' }), headers: { origin: 'https://inspector.example' } },
  { name: 'foreign origin', body: tool('get_product', { slug: 'type-scale' }), headers: { origin: 'https://evil.example' } },
  // tools/call envelopes
  { name: 'no params', body: rpc(1, 'tools/call') },
  { name: 'no name', body: rpc(1, 'tools/call', { arguments: {} }) },
  { name: 'name not a string', body: rpc(1, 'tools/call', { name: 5, arguments: {} }) },
  { name: 'arguments an array', body: tool('search_products', [1]) },
  { name: 'arguments null', body: tool('search_products', null) },
  { name: 'arguments a string', body: tool('get_product', 'pixel-forge') },
  { name: 'unknown tool', body: tool('delete_everything', {}) },
  { name: 'string id', body: tool('get_product', { slug: 'query-pilot' }, 'call-1') },
  { name: 'id 0', body: tool('get_product', { slug: 'query-pilot' }, 0) },
  { name: 'negative id', body: tool('get_product', { slug: 'query-pilot' }, -7) },
  { name: 'large id', body: tool('get_product', { slug: 'query-pilot' }, 9007199254740991) },
  { name: 'unsafe id', body: tool('get_product', { slug: 'query-pilot' }, 1).replace('"id":1', '"id":9007199254740993') },
  { name: 'fractional id', body: tool('get_product', { slug: 'query-pilot' }, 1.5) },
  { name: 'null id', body: tool('get_product', { slug: 'query-pilot' }, null) },
  { name: 'unicode id', body: tool('get_product', { slug: 'query-pilot' }, 'é"\\\u2028') },
  { name: 'no id (a notification)', body: JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'get_product', arguments: { slug: 'query-pilot' } } }) },
  { name: 'with _meta', body: rpc(1, 'tools/call', { name: 'get_product', arguments: { slug: 'query-pilot' }, _meta: { progressToken: 'p1' } }) },
  { name: 'with a bad _meta', body: rpc(1, 'tools/call', { name: 'get_product', arguments: { slug: 'query-pilot' }, _meta: { progressToken: [] } }) },
  { name: 'with task', body: rpc(1, 'tools/call', { name: 'list_categories', arguments: {}, task: { ttl: 1000 } }) },
  { name: 'extra params member', body: rpc(1, 'tools/call', { name: 'list_categories', arguments: {}, extra: true }) },
  { name: 'keys in another order', body: JSON.stringify({ params: { arguments: { slug: 'deploy-kite' }, name: 'get_product' }, method: 'tools/call', id: 12, jsonrpc: '2.0' }) },
  // search_products
  { name: 'search, no arguments member', body: tool('search_products') },
  { name: 'search, {}', body: tool('search_products', {}) },
  { name: 'search, q pixel', body: tool('search_products', { q: 'pixel' }) },
  { name: 'search, q sql', body: tool('search_products', { q: 'sql' }) },
  { name: 'search, q two words', body: tool('search_products', { q: 'Grow ideas' }) },
  { name: 'search, q typo', body: tool('search_products', { q: 'pixle' }) },
  { name: 'search, q prefix', body: tool('search_products', { q: 'illustr' }) },
  { name: 'search, q accents and spaces', body: tool('search_products', { q: '  Pîxel  ' }) },
  { name: 'search, q no match', body: tool('search_products', { q: 'nothing-matches-this' }) },
  { name: 'search, category', body: tool('search_products', { category: 'developer-tools' }) },
  { name: 'search, empty category', body: tool('search_products', { category: 'empty-shelf' }) },
  { name: 'search, label', body: tool('search_products', { label: 'new' }) },
  { name: 'search, tag + paging', body: tool('search_products', { tag: 'ai', limit: 1, page: 2 }) },
  { name: 'search, everything', body: tool('search_products', { q: 'code', category: 'developer-tools', label: 'x', tag: 'editor', page: 1, limit: 5 }) },
  { name: 'search, page as text', body: tool('search_products', { page: '2', limit: '3' }) },
  { name: 'search, limit 50', body: tool('search_products', { limit: 50 }) },
  { name: 'search, page 500', body: tool('search_products', { page: 500 }) },
  { name: 'search, q too short', body: tool('search_products', { q: 'a' }) },
  { name: 'search, q too long', body: tool('search_products', { q: 'x'.repeat(101) }) },
  { name: 'search, q blank', body: tool('search_products', { q: '   ' }) },
  { name: 'search, page 0', body: tool('search_products', { page: 0 }) },
  { name: 'search, page 1.5', body: tool('search_products', { page: 1.5 }) },
  { name: 'search, limit 51', body: tool('search_products', { limit: 51 }) },
  { name: 'search, bad category', body: tool('search_products', { category: 'Not A Slug' }) },
  { name: 'search, unknown argument', body: tool('search_products', { color: 'blue' }) },
  { name: 'search, several rejected', body: tool('search_products', { q: 'a', limit: 51, color: 'blue' }) },
  { name: 'search, wrong types', body: tool('search_products', { q: 42, page: 'two', tag: ['ai'] }) },
  { name: 'search, null values', body: tool('search_products', { q: null, page: null }) },
  // list_categories
  { name: 'categories, no arguments member', body: tool('list_categories') },
  { name: 'categories, {}', body: tool('list_categories', {}) },
  { name: 'categories, unknown argument', body: tool('list_categories', { sort: 'name' }) },
  { name: 'categories, two unknown arguments', body: tool('list_categories', { sort: 'name', limit: 2 }) },
  // get_product
  { name: 'product pixel-forge', body: tool('get_product', { slug: 'pixel-forge' }) },
  { name: 'product type-scale', body: tool('get_product', { slug: 'type-scale' }) },
  { name: 'product code-lantern', body: tool('get_product', { slug: 'code-lantern' }) },
  { name: 'product nullish-widget', body: tool('get_product', { slug: 'nullish-widget' }) },
  { name: 'product not live', body: tool('get_product', { slug: 'draft-idea' }) },
  { name: 'product unknown', body: tool('get_product', { slug: 'no-such-listing' }) },
  { name: 'product odd slug', body: tool('get_product', { slug: "Pixel Forge's \"best\"" }) },
  { name: 'product empty slug', body: tool('get_product', { slug: '' }) },
  { name: 'product no slug', body: tool('get_product', {}) },
  { name: 'product no arguments member', body: tool('get_product') },
  { name: 'product slug too long', body: tool('get_product', { slug: 'a'.repeat(201) }) },
  { name: 'product slug a number', body: tool('get_product', { slug: 5 }) },
  { name: 'product unknown argument', body: tool('get_product', { slug: 'pixel-forge', format: 'short' }) },
  // resources and completions, 2025 era
  { name: 'resources/templates/list', body: rpc(20, 'resources/templates/list') },
  { name: 'read a product', body: rpc(21, 'resources/read', { uri: PRODUCT_URI }) },
  { name: 'read a category', body: rpc(22, 'resources/read', { uri: 'catalog://categories/design' }) },
  { name: 'read a product not live', body: rpc(23, 'resources/read', { uri: 'catalog://products/draft-idea' }) },
  { name: 'read an unknown category', body: rpc(24, 'resources/read', { uri: 'catalog://categories/no-such' }) },
  { name: 'read a 10 KB slug', body: rpc(25, 'resources/read', { uri: `catalog://products/${'a'.repeat(10_000)}` }) },
  { name: 'read another scheme', body: rpc(26, 'resources/read', { uri: 'https://example.com/products/pixel-forge' }) },
  { name: 'read a percent-encoded slug', body: rpc(27, 'resources/read', { uri: 'catalog://products/pixel%2Dforge' }) },
  { name: 'complete a product slug', body: rpc(28, 'completion/complete', { ref: { type: 'ref/resource', uri: 'catalog://products/{slug}' }, argument: { name: 'slug', value: 'p' } }) },
  { name: 'complete every product slug', body: rpc(29, 'completion/complete', { ref: { type: 'ref/resource', uri: 'catalog://products/{slug}' }, argument: { name: 'slug', value: '' } }) },
  { name: 'complete a category', body: rpc(30, 'completion/complete', { ref: { type: 'ref/resource', uri: 'catalog://categories/{slug}' }, argument: { name: 'slug', value: 'de' } }) },
  { name: 'complete an unknown variable', body: rpc(31, 'completion/complete', { ref: { type: 'ref/resource', uri: 'catalog://products/{slug}' }, argument: { name: 'id', value: 'p' } }) },
  { name: 'complete an unknown reference', body: rpc(32, 'completion/complete', { ref: { type: 'ref/resource', uri: 'catalog://nothing/{x}' }, argument: { name: 'x', value: '' } }) },
  { name: 'complete the prompt\'s website', body: rpc(33, 'completion/complete', { ref: { type: 'ref/prompt', name: 'submit_to_directory' }, argument: { name: 'website', value: 'https://' } }) },
  // 2026-07-28
  modern('discover', 1, 'server/discover'),
  modern('tools/list', 2, 'tools/list'),
  modern('prompts/list', 3, 'prompts/list'),
  modern('resources/list', 4, 'resources/list'),
  modern('resources/templates/list', 5, 'resources/templates/list'),
  modernTool('search, {}', 'search_products', {}),
  modernTool('search, no arguments member', 'search_products'),
  modernTool('search, q pixel', 'search_products', { q: 'pixel' }, 'search-1'),
  modernTool('search, q too short', 'search_products', { q: 'a' }),
  modernTool('search, no match', 'search_products', { q: 'nothing-matches-this' }),
  modernTool('categories', 'list_categories', {}),
  modernTool('product pixel-forge', 'get_product', { slug: 'pixel-forge' }),
  modernTool('product nullish-widget', 'get_product', { slug: 'nullish-widget' }),
  modernTool('product not live', 'get_product', { slug: 'draft-idea' }),
  modernTool('product no slug', 'get_product', {}),
  modernTool('unknown tool', 'delete_everything', {}),
  modern('read a product', 6, 'resources/read', { uri: PRODUCT_URI }),
  modern('read a category', 7, 'resources/read', { uri: 'catalog://categories/developer-tools' }),
  modern('read a product not live', 8, 'resources/read', { uri: 'catalog://products/hidden-gem' }),
  modern('read a 10 KB slug', 9, 'resources/read', { uri: `catalog://products/${'b'.repeat(10_000)}` }),
  modern('read another scheme', 10, 'resources/read', { uri: 'file:///etc/passwd' }),
  modern('complete a product slug', 11, 'completion/complete', { ref: { type: 'ref/resource', uri: 'catalog://products/{slug}' }, argument: { name: 'slug', value: 'no' } }),
  modern('complete an unknown reference', 12, 'completion/complete', { ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'x', value: '' } }),
  modern('prompts/get', 13, 'prompts/get', { name: 'submit_to_directory', arguments: { website: 'https://acme.example.com/' } }),
  modern('subscriptions/listen', 14, 'subscriptions/listen', { notifications: { toolsListChanged: true, resourcesListChanged: true } }),
  modern('unknown method', 15, 'no/such/method'),
  modern('initialize', 16, 'initialize', INITIALIZE_PARAMS),
  modern('ping', 17, 'ping'),
  { ...modern('a notification', 18, 'notifications/initialized'), body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: ENVELOPE } }) },
  // 2026-07-28: what is refused before a method runs
  { ...modern('no Mcp-Method header', 19, 'tools/list'), headers: { 'mcp-protocol-version': '2026-07-28' } },
  modern('Mcp-Method differs', 20, 'tools/list', {}, { 'mcp-method': 'prompts/list' }),
  { ...modernTool('Mcp-Name differs', 'get_product', { slug: 'pixel-forge' }), headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'search_products' } },
  { ...modernTool('no Mcp-Name', 'get_product', { slug: 'pixel-forge' }), headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' } },
  { ...modernTool('Mcp-Name in base64', 'get_product', { slug: 'pixel-forge' }), headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': `=?base64?${Buffer.from('get_product').toString('base64')}?=` } },
  { ...modern('no version header', 21, 'tools/list'), headers: { 'mcp-method': 'tools/list' } },
  modern('version header differs from the envelope', 22, 'tools/list', {}, { 'mcp-protocol-version': '2025-11-25' }),
  modern('unsupported version header', 23, 'tools/list', {}, { 'mcp-protocol-version': '2099-01-01' }),
  { name: '2026: unsupported version header, a 2025 body', body: rpc(24, 'tools/list'), headers: { 'mcp-protocol-version': '1999-12-31' } },
  { name: '2026: envelope of another version', body: rpc(25, 'tools/list', { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }), headers: { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' } },
  { name: '2026: _meta a string', body: rpc(26, 'tools/list', { _meta: 'x' }), headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' } },
  { name: '2026: envelope without capabilities', body: rpc(27, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }), headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' } },
  { name: '2026: version header, no envelope', body: rpc(28, 'tools/list'), headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' } },
  { name: '2026: a batch', body: JSON.stringify([JSON.parse(modern('x', 29, 'tools/list').body!)]), headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' } },
  modern('Mcp-Session-Id ignored', 30, 'tools/list', {}, { 'mcp-session-id': 'abc' }),
];

/** Budgets spent and refused: search 3 a minute, other 4 a minute. */
const BUDGETS: Exchange[] = [
  ...[1, 2, 3, 4].map((i) => ({ name: `search ${i}`, body: tool('search_products', { q: 'pixel' }, i) })),
  { name: 'search refused, bad arguments too', body: tool('search_products', { q: 'a' }) },
  { name: 'tools/list is free', body: rpc(5, 'tools/list') },
  ...[1, 2, 3].map((i) => ({ name: `product ${i}`, body: tool('get_product', { slug: 'pixel-forge' }, i) })),
  { name: 'categories', body: tool('list_categories', {}) },
  { name: 'categories refused', body: tool('list_categories', {}) },
  { name: 'product refused', body: tool('get_product', { slug: 'no-such-listing' }) },
  { name: 'prompt refused', body: rpc(9, 'prompts/get', { name: 'submit_to_directory', arguments: { website: 'https://acme.example.com/' } }) },
  { name: 'batch refused', body: JSON.stringify([JSON.parse(tool('list_categories', {}, 1)), JSON.parse(tool('search_products', {}, 2))]) },
  { name: 'unknown tool, no budget needed', body: tool('delete_everything', {}) },
  { name: 'read refused', body: rpc(10, 'resources/read', { uri: PRODUCT_URI }) },
  { name: 'complete refused', body: rpc(11, 'completion/complete', { ref: { type: 'ref/resource', uri: 'catalog://products/{slug}' }, argument: { name: 'slug', value: 'p' } }) },
  modernTool('search refused', 'search_products', { q: 'pixel' }, 12),
  modernTool('product refused', 'get_product', { slug: 'pixel-forge' }, 13),
  modern('read refused', 14, 'resources/read', { uri: PRODUCT_URI }),
  modern('tools/list is free', 15, 'tools/list'),
];

/** A budget of its own (other: 2 a minute) for reads and completions in both eras, spent and refused. */
const READS: Exchange[] = [
  { name: 'read 1', body: rpc(1, 'resources/read', { uri: PRODUCT_URI }) },
  modern('read 2', 2, 'resources/read', { uri: 'catalog://categories/design' }),
  modern('complete refused', 3, 'completion/complete', { ref: { type: 'ref/resource', uri: 'catalog://categories/{slug}' }, argument: { name: 'slug', value: '' } }),
  modernTool('categories refused', 'list_categories', {}, 4),
];

async function exchange(stack: TestStack, e: Exchange, index: number): Promise<Answer> {
  const method = e.method ?? 'POST';
  const headers = { ...MCP_HEADERS, 'x-request-id': `answer-${index}`, ...e.headers };
  const res = await fetch(new URL('/api/mcp', stack.baseUrl), { method, headers, ...(e.body !== undefined && { body: e.body }) });
  const body = await res.text();
  const nowSeconds = Math.ceil(Date.now() / 1000);
  const answerHeaders: Record<string, string> = {};
  let windowSeconds: number | undefined;
  res.headers.forEach((value, name) => {
    if (name === 'date' || name === 'connection' || name === 'keep-alive') return;
    if (name === 'ratelimit') {
      const t = /;t=(\d+)$/.exec(value);
      windowSeconds = Number(t?.[1]);
      expect(windowSeconds, `${e.name}: ${value}`).toBeGreaterThanOrEqual(1);
      expect(windowSeconds).toBeLessThanOrEqual(60);
      answerHeaders[name] = value.replace(/;t=\d+$/, ';t=<t>');
      return;
    }
    answerHeaders[name] = value;
  });
  if (answerHeaders['x-ratelimit-reset'] !== undefined) {
    expect(Math.abs(Number(answerHeaders['x-ratelimit-reset']) - (nowSeconds + windowSeconds!)), e.name).toBeLessThanOrEqual(2);
    answerHeaders['x-ratelimit-reset'] = '<reset>';
  }
  if (answerHeaders['retry-after'] !== undefined) {
    expect(Number(answerHeaders['retry-after']), e.name).toBe(windowSeconds);
    answerHeaders['retry-after'] = '<t>';
  }
  return {
    name: e.name,
    request: { method, headers, body: e.body ?? null },
    status: res.status,
    headers: answerHeaders,
    body: body.replace(/in about \d+ s\)/g, 'in about <t> s)'),
  };
}

let answersStack: TestStack;
let budgetStack: TestStack;
let readsStack: TestStack;
let recorded: Record<string, Answer[]> | undefined;
const taken: Record<string, Answer[]> = {};

beforeAll(async () => {
  // Recorded from the SDK alone; compared on the service as it runs, fast paths included.
  const direct = { DIRECT_READS: RECORD ? 'false' : 'true' };
  answersStack = await startTestStack({
    env: { ...direct, RATE_LIMIT_SEARCH_PER_MIN: '1000', RATE_LIMIT_OTHER_PER_MIN: '1000', MCP_ALLOWED_ORIGINS: 'https://inspector.example' },
  });
  budgetStack = await startTestStack({ env: { ...direct, RATE_LIMIT_SEARCH_PER_MIN: '3', RATE_LIMIT_OTHER_PER_MIN: '4' } });
  readsStack = await startTestStack({ env: { ...direct, RATE_LIMIT_SEARCH_PER_MIN: '3', RATE_LIMIT_OTHER_PER_MIN: '2' } });
  if (!RECORD) {
    expect(existsSync(FIXTURE), 'test/fixtures/mcp-answers.json is missing: record it (see the top of this file)').toBe(true);
    recorded = JSON.parse(await readFile(FIXTURE, 'utf8')) as Record<string, Answer[]>;
  }
});

afterAll(async () => {
  if (RECORD && taken.answers && taken.budgets && taken.reads) await writeFile(FIXTURE, `${JSON.stringify(taken, null, 2)}\n`);
  await answersStack?.stop();
  await budgetStack?.stop();
  await readsStack?.stop();
});

describe.each([
  ['answers', () => answersStack, ANSWERS],
  ['budgets', () => budgetStack, BUDGETS],
  ['reads', () => readsStack, READS],
] as const)('MCP %s, byte for byte', (set, stackOf, exchanges) => {
  it('are what they were recorded as', async () => {
    const answers: Answer[] = [];
    // In order: the budgets depend on it.
    for (const [i, e] of exchanges.entries()) answers.push(await exchange(stackOf(), e, i));
    if (RECORD) {
      taken[set] = answers;
      return;
    }
    const expected = recorded![set]!;
    expect(answers.map((a) => a.name)).toEqual(expected.map((a) => a.name));
    for (const [i, answer] of answers.entries()) {
      expect(answer.request, answer.name).toEqual(expected[i]!.request);
      expect({ status: answer.status, headers: answer.headers }, answer.name).toEqual({ status: expected[i]!.status, headers: expected[i]!.headers });
      // Plain string equality: the very same bytes, key order and escapes included.
      expect(answer.body === expected[i]!.body, `${answer.name}: body differs\n got: ${answer.body.slice(0, 400)}\nwant: ${expected[i]!.body.slice(0, 400)}`).toBe(true);
    }
  });
});
