import type { CatalogSample } from './catalog-sample.ts';
import { searchableWords } from './catalog-sample.ts';
import type { LoadRequest } from './load.ts';

/**
 * The scenarios of a run. A cached search repeats one identical request against `catalog
 * serve`; its uncached twin walks through up to VARIANTS requests of the same shape against a
 * second process, `catalog api` on the same database with its response cache off
 * (CACHE_MAX_ENTRIES=0), so every request is computed.
 */
export type Target = 'serve' | 'api' | 'redis' | 'hello' | 'body' | 'answer';
export type Kind = 'baseline' | 'search-cached' | 'search-uncached' | 'product' | 'product-budget' | 'categories' | 'mcp' | 'page';

export interface Scenario {
  id: string;
  title: string;
  kind: Kind;
  target: Target;
  /** For an MCP scenario: the protocol revision its requests are written in. */
  era?: McpEra;
  /** The baseline whose req/s this scenario is compared to. */
  baseline?: 'hello' | 'body';
  requests: LoadRequest[];
}

export const VARIANTS = 50;
/** The Authorization header of keyed requests until the run has made its key (withKey). */
const KEY_PLACEHOLDER = 'Bearer (made by the run)';

/**
 * The scenarios `--only` names, with the baselines, or none when it names no load scenario. An
 * entry that is a scenario's id selects that one alone (`mcp-product`, not its twin
 * `mcp-product-2026`); any other selects every id it begins (`mcp`, `search-word`).
 */
export function selectScenarios(scenarios: Scenario[], only: readonly string[]): Scenario[] {
  const ids = new Set(scenarios.map((s) => s.id));
  const chosen = scenarios.filter((s) => s.kind === 'baseline' || only.some((o) => s.id === o || (!ids.has(o) && s.id.startsWith(o))));
  return chosen.every((s) => s.kind === 'baseline') ? [] : chosen;
}

/** The scenarios with the run's consumer key in their keyed requests. */
export function withKey(scenarios: Scenario[], key: string): Scenario[] {
  return scenarios.map((s) => ({
    ...s,
    requests: s.requests.map((r) => (r.headers?.authorization === KEY_PLACEHOLDER ? { ...r, headers: { ...r.headers, authorization: `Bearer ${key}` } } : r)),
  }));
}
const SLUGS = 2000;

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
/** What a browser asks a page with (the pages answer HTML whatever it says: the header is there to be realistic). */
const PAGE_HEADERS = { accept: 'text/html' };

/**
 * The two protocol eras the endpoint serves (src/mcp/protocol.ts), each named by the revision a
 * request is written in: 2025-11-25 stands for the legacy era (plain JSON-RPC, no envelope),
 * 2026-07-28 for the modern one (an envelope in `params._meta`, mirrored in headers).
 */
export type McpEra = '2025-11-25' | '2026-07-28';
export const MCP_ERAS: readonly McpEra[] = ['2025-11-25', '2026-07-28'];
/** The envelope of a 2026-07-28 request: its revision and the client's capabilities (none). */
export const MODERN_META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

/**
 * One MCP request as a client of the era sends it. 2025-11-25: a plain POST of the JSON-RPC
 * message. 2026-07-28: `params._meta` carries the envelope, and the headers say the revision
 * (`MCP-Protocol-Version`), the method (`Mcp-Method`) and what it names (`Mcp-Name`: the tool's
 * name or the resource's URI, when the method has one).
 */
export function mcpRequest(era: McpEra, method: string, params?: Record<string, unknown>): LoadRequest {
  if (era === '2025-11-25') {
    return { method: 'POST', path: '/api/mcp', headers: MCP_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params && { params }) }) };
  }
  const name = typeof params?.name === 'string' ? params.name : typeof params?.uri === 'string' ? params.uri : undefined;
  return {
    method: 'POST',
    path: '/api/mcp',
    headers: { ...MCP_HEADERS, 'mcp-protocol-version': era, 'mcp-method': method, ...(name !== undefined && { 'mcp-name': name }) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: MODERN_META } }),
  };
}

/** A read tool's call in the era. */
export function mcpToolCall(era: McpEra, name: string, args: Record<string, string>): LoadRequest {
  return mcpRequest(era, 'tools/call', { name, arguments: args });
}

/** A product's resource (catalog://products/{slug}, the Product JSON of /products/{slug}) read in the era. */
export function mcpProductRead(era: McpEra, slug: string): LoadRequest {
  return mcpRequest(era, 'resources/read', { uri: `catalog://products/${slug}` });
}

function searchPath(params: Record<string, string | undefined>): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) qs.set(k, v);
  const s = qs.toString();
  return `/api/v1/search${s ? `?${s}` : ''}`;
}

/** One substituted letter in the middle: within the one typo a word of 5+ letters tolerates. */
function typoOf(word: string, vocabulary: Set<string>): string | undefined {
  const i = Math.floor(word.length / 2);
  for (const c of 'xqzjkvwy') {
    if (c === word[i]) continue;
    const typo = word.slice(0, i) + c + word.slice(i + 1);
    if (!vocabulary.has(typo)) return typo;
  }
  return undefined;
}

/** A fixed shuffle, so two runs on one catalog ask for the same slugs in the same order. */
function shuffled<T>(items: readonly T[], seed = 42): T[] {
  const out = [...items];
  let s = seed >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

interface SearchShape {
  id: string;
  title: string;
  variants: Array<Record<string, string | undefined>>;
}

function searchShapes(sample: CatalogSample): SearchShape[] {
  const top = sample.words.slice(0, 300);
  const rank = new Map(top.map((w, i) => [w.word, i]));

  const pairs = new Map<string, Record<string, string>>();
  for (const p of sample.products) {
    if (!p.category) continue;
    const words = [...new Set(searchableWords(p.punchline))].filter((w) => rank.has(w)).sort((a, b) => rank.get(a)! - rank.get(b)!);
    if (words.length < 2) continue;
    const q = `${words[0]} ${words[1]}`;
    pairs.set(`${q}|${p.category}`, { q, category: p.category });
  }
  const pairList = [...pairs.values()].sort((a, b) => {
    const score = (v: Record<string, string>) => v.q!.split(' ').reduce((s, w) => s + rank.get(w)!, 0);
    return score(a) - score(b);
  });

  const typos: string[] = [];
  for (const { word } of top) {
    if (word.length < 6) continue;
    const t = typoOf(word, sample.vocabulary);
    if (t) typos.push(t);
  }

  return [
    {
      id: 'search-all',
      title: '/search, no q',
      variants: Array.from({ length: 20 }, (_, i) => ({ page: i === 0 ? undefined : String(i + 1) })),
    },
    { id: 'search-word', title: '/search, one common word', variants: top.map((w) => ({ q: w.word })) },
    { id: 'search-two-words-category', title: '/search, two words + category', variants: pairList },
    { id: 'search-typo', title: '/search, a typo', variants: typos.map((q) => ({ q })) },
    { id: 'search-tag', title: '/search, tag filter', variants: sample.tags.map((t) => ({ tag: t.tag })) },
  ];
}

/** The product scenarios' slugs: up to SLUGS of the sample, in a fixed random order. */
export function productSlugs(sample: CatalogSample): string[] {
  return shuffled(sample.products.map((p) => p.slug)).slice(0, SLUGS);
}

export function buildScenarios(sample: CatalogSample): Scenario[] {
  const slugs = productSlugs(sample);
  const productRequests = slugs.map((slug) => ({ path: `/api/v1/products/${encodeURIComponent(slug)}` }));
  const scenarios: Scenario[] = [
    { id: 'baseline-hello', title: 'baseline: Fastify {"hello":"world"}', kind: 'baseline', target: 'hello', requests: [{ path: '/' }] },
    { id: 'baseline-body', title: 'baseline: Fastify precomputed 20-product page', kind: 'baseline', target: 'body', requests: [{ path: '/' }] },
    {
      id: 'baseline-node-product',
      title: "baseline: bare Node writing a product's answer (its headers and body)",
      kind: 'baseline',
      target: 'answer',
      // The product scenario's own requests (it answers every path alike): the same request
      // lines for the load generator to write and the server to parse.
      requests: productRequests,
    },
  ];
  const shapes = searchShapes(sample);
  for (const shape of shapes) {
    if (shape.variants.length === 0) continue;
    scenarios.push({
      id: `${shape.id}-cached`,
      title: `${shape.title}, cached`,
      kind: 'search-cached',
      target: 'serve',
      baseline: 'body',
      requests: [{ path: searchPath(shape.variants[0]!) }],
    });
  }
  for (const shape of shapes) {
    if (shape.variants.length === 0) continue;
    scenarios.push({
      id: `${shape.id}-uncached`,
      title: `${shape.title}, uncached`,
      kind: 'search-uncached',
      target: 'api',
      baseline: 'body',
      requests: shape.variants.slice(0, VARIANTS).map((v) => ({ path: searchPath(v) })),
    });
  }
  scenarios.push({
    id: 'product',
    title: '/products/{slug}, random slugs',
    kind: 'product',
    target: 'serve',
    baseline: 'hello',
    requests: productRequests,
  });
  // The same products from a process whose budgets live in Redis (REDIS_URL, a redis-server of
  // the run's own): as an address, and with a consumer key (its Authorization header is set
  // once the run has made the key).
  scenarios.push({
    id: 'product-redis',
    title: '/products/{slug}, budgets in Redis',
    kind: 'product-budget',
    target: 'redis',
    baseline: 'hello',
    requests: productRequests,
  });
  scenarios.push({
    id: 'product-key',
    title: '/products/{slug}, budgets in Redis, with a consumer key',
    kind: 'product-budget',
    target: 'redis',
    baseline: 'hello',
    requests: productRequests.map((r) => ({ ...r, headers: { authorization: KEY_PLACEHOLDER } })),
  });
  scenarios.push({ id: 'categories', title: '/categories', kind: 'categories', target: 'serve', baseline: 'hello', requests: [{ path: '/api/v1/categories' }] });
  const word = sample.words[0]?.word;
  // The MCP reads, each in both eras side by side (the 2026-07-28 twin right after its
  // 2025-11-25 row, so both meet the machine in the same state): the read tools, and a product's
  // resource over the same slugs as get_product.
  const twin = (id: string, era: McpEra) => (era === '2026-07-28' ? `${id}-2026` : id);
  for (const era of MCP_ERAS) {
    scenarios.push({
      id: twin('mcp-search', era),
      title: `MCP ${era} search_products${word ? ' (q: a common word)' : ''}, cached`,
      kind: 'mcp',
      era,
      target: 'serve',
      baseline: 'body',
      requests: [mcpToolCall(era, 'search_products', word ? { q: word } : {})],
    });
  }
  for (const era of MCP_ERAS) {
    scenarios.push({
      id: twin('mcp-product', era),
      title: `MCP ${era} get_product, random slugs`,
      kind: 'mcp',
      era,
      target: 'serve',
      baseline: 'hello',
      requests: slugs.map((slug) => mcpToolCall(era, 'get_product', { slug })),
    });
  }
  for (const era of MCP_ERAS) {
    scenarios.push({
      id: twin('mcp-categories', era),
      title: `MCP ${era} list_categories`,
      kind: 'mcp',
      era,
      target: 'serve',
      baseline: 'hello',
      requests: [mcpToolCall(era, 'list_categories', {})],
    });
  }
  for (const era of MCP_ERAS) {
    scenarios.push({
      id: twin('mcp-resource-product', era),
      title: `MCP ${era} resources/read catalog://products/{slug}, random slugs`,
      kind: 'mcp',
      era,
      target: 'serve',
      baseline: 'hello',
      requests: slugs.map((slug) => mcpProductRead(era, slug)),
    });
  }
  // The directory's pages (HTML, rendered once per projection version and kept: page-cache.ts):
  // the home page, the listing page over the product scenario's slugs, and one search page repeated.
  scenarios.push({ id: 'page-home', title: 'page /, cached', kind: 'page', target: 'serve', baseline: 'hello', requests: [{ path: '/', headers: PAGE_HEADERS }] });
  scenarios.push({
    id: 'page-listing',
    title: 'page /products/{slug}, random slugs',
    kind: 'page',
    target: 'serve',
    baseline: 'hello',
    requests: productRequests.map((r) => ({ path: r.path.slice('/api/v1'.length), headers: PAGE_HEADERS })),
  });
  scenarios.push({
    id: 'page-search',
    title: `page /search${word ? ' (q: a common word)' : ''}, cached`,
    kind: 'page',
    target: 'serve',
    baseline: 'hello',
    requests: [{ path: word ? `/search?q=${encodeURIComponent(word)}` : '/search', headers: PAGE_HEADERS }],
  });
  // The baselines again at the end: their mean is the reference, drift shows as a difference.
  scenarios.push(
    { ...scenarios[0]!, id: 'baseline-hello-end', title: `${scenarios[0]!.title}, again at the end` },
    { ...scenarios[1]!, id: 'baseline-body-end', title: `${scenarios[1]!.title}, again at the end` },
  );
  return scenarios;
}
