import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * The MCP endpoint's answers, byte for byte, over the fixture catalog: status, headers and body
 * of every exchange below are compared with the answers recorded in mcp-answers.json, which were
 * taken from the implementation that built a fresh MCP server per request and let the SDK
 * validate and serialize every result. Any faster path must answer exactly the same bytes.
 *
 * Re-record (only when an answer is meant to change, and say why in the commit):
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

/**
 * Answers changed on purpose since they were recorded, each applied to the recording with the
 * reason. A q of 2 to 100 characters needs no letter or digit any more (a query of symbols
 * alone matches nothing), so tools/list no longer advertises the pattern that demanded one.
 */
const NO_LETTER_PATTERN = '"pattern":"[\\\\p{L}\\\\p{N}]",';
const INTENDED_CHANGES: Record<string, (answer: Answer) => Answer> = {
  'tools/list': withoutLetterPattern,
  'tools/list with a protocol header': withoutLetterPattern,
  'tools/list is free': withoutLetterPattern,
};

function withoutLetterPattern(answer: Answer): Answer {
  expect(answer.body).toContain(NO_LETTER_PATTERN);
  const body = answer.body.replace(NO_LETTER_PATTERN, '');
  return { ...answer, body, headers: { ...answer.headers, 'content-length': String(Buffer.byteLength(body)) } };
}

/**
 * What the makers' side added to the endpoint, taken back out of a live answer, so that
 * everything the read side answered is still compared byte for byte with the recording: the
 * five maker tools after the read tools in tools/list, the instructions' lines about them, the
 * prompt's last two steps (it now drives the real submit_product), and WWW-Authenticate among the
 * headers a browser client may read. The maker tools are tested on their own (maker-tools.test.ts).
 */
const OLD_INSTRUCTIONS = [
  'No sign-in is needed. Calls are limited per IP address (searches and other calls have separate per-minute budgets); a TOO_MANY_REQUESTS error means: slow down and retry shortly.',
  'The submit_to_directory prompt drafts a listing from a product website for the maker to approve.',
].join('\n');
const OLD_PROMPT_STEPS = [
  '4. Only after I have approved the draft, save it with the submit_product tool. Do not call submit_product before my approval. If this server does not offer submit_product, give me the approved draft as text instead, so I can submit it through the directory myself.',
  '5. Tell me what submit_product answered, and give me any link it returns (a claim link or a payment link) so I can open it in my browser.',
].join('\n');

const escaped = (text: string) => JSON.stringify(text).slice(1, -1);

function withoutMakerSide(answer: Answer): Answer {
  let body = answer.body;
  const makerTools = body.indexOf(',{"name":"submit_product"');
  if (makerTools !== -1) body = body.slice(0, makerTools) + body.slice(body.indexOf(']},"jsonrpc"', makerTools));
  const instructions = body.indexOf(escaped('No sign-in is needed to read.'));
  if (instructions !== -1) {
    const end = body.indexOf(escaped('then saves it with submit_product.'), instructions) + escaped('then saves it with submit_product.').length;
    body = body.slice(0, instructions) + escaped(OLD_INSTRUCTIONS) + body.slice(end);
  }
  const steps = body.indexOf('4. Only after I have approved the draft');
  if (steps !== -1) {
    const end = body.indexOf('"', body.indexOf('5. Tell me what submit_product answered', steps));
    body = body.slice(0, steps) + escaped(OLD_PROMPT_STEPS) + body.slice(end);
  }
  const headers = { ...answer.headers };
  if (headers['access-control-expose-headers']) headers['access-control-expose-headers'] = headers['access-control-expose-headers'].replace('www-authenticate, ', '');
  if (body !== answer.body && headers['content-length']) headers['content-length'] = String(Buffer.byteLength(body));
  return { ...answer, headers, body };
}

let answersStack: TestStack;
let budgetStack: TestStack;
let recorded: Record<string, Answer[]> | undefined;
const taken: Record<string, Answer[]> = {};

beforeAll(async () => {
  answersStack = await startTestStack({
    env: { RATE_LIMIT_SEARCH_PER_MIN: '1000', RATE_LIMIT_OTHER_PER_MIN: '1000', MCP_ALLOWED_ORIGINS: 'https://inspector.example' },
  });
  budgetStack = await startTestStack({ env: { RATE_LIMIT_SEARCH_PER_MIN: '3', RATE_LIMIT_OTHER_PER_MIN: '4' } });
  if (!RECORD) {
    expect(existsSync(FIXTURE), 'test/fixtures/mcp-answers.json is missing: record it (see the top of this file)').toBe(true);
    recorded = JSON.parse(await readFile(FIXTURE, 'utf8')) as Record<string, Answer[]>;
  }
});

afterAll(async () => {
  if (RECORD && taken.answers && taken.budgets) await writeFile(FIXTURE, `${JSON.stringify(taken, null, 2)}\n`);
  await answersStack?.stop();
  await budgetStack?.stop();
});

describe.each([
  ['answers', () => answersStack, ANSWERS],
  ['budgets', () => budgetStack, BUDGETS],
] as const)('MCP %s, byte for byte', (set, stackOf, exchanges) => {
  it('are what they were recorded as', async () => {
    const answers: Answer[] = [];
    // In order: the budgets depend on it.
    for (const [i, e] of exchanges.entries()) answers.push(withoutMakerSide(await exchange(stackOf(), e, i)));
    if (RECORD) {
      taken[set] = answers;
      return;
    }
    const expected = recorded![set]!.map((a) => INTENDED_CHANGES[a.name]?.(a) ?? a);
    expect(answers.map((a) => a.name)).toEqual(expected.map((a) => a.name));
    for (const [i, answer] of answers.entries()) {
      expect(answer.request, answer.name).toEqual(expected[i]!.request);
      expect({ status: answer.status, headers: answer.headers }, answer.name).toEqual({ status: expected[i]!.status, headers: expected[i]!.headers });
      // Plain string equality: the very same bytes, key order and escapes included.
      expect(answer.body === expected[i]!.body, `${answer.name}: body differs\n got: ${answer.body.slice(0, 400)}\nwant: ${expected[i]!.body.slice(0, 400)}`).toBe(true);
    }
  });
});
