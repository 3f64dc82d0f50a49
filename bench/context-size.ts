import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import type { LoadRequest } from './load.ts';
import { mcpMessage, mcpProblem, type McpMessage } from './preflight.ts';
import { MCP_ERAS, mcpProductRead, mcpRequest, mcpToolCall, type McpEra } from './scenarios.ts';

/**
 * What the MCP answers cost a model's context, per protocol era, against the running service:
 * `tools/list` (what a client puts before the model once per conversation), `search_products`
 * with no arguments (a 20-result page), `get_product` over a sample of products, and a product's
 * resource read, each beside the REST body it carries. Bytes are the JSON-RPC answer as sent;
 * tokens are counted in o200k_base (gpt-tokenizer).
 *
 * What a model reads of a tool result: its text block (written for a model,
 * src/mcp/model-text.ts), or all its content blocks (the text and, for search, one
 * resource_link per hit) as JSON. The REST body is the reference: a text block that copied it
 * would cost its tokens. Two hundred and some requests, one at a time: a few seconds.
 */

/** Products get_product and the resource read are measured over (the first of the sample's random slugs). */
const CONTEXT_PRODUCTS = 50;
const TOKENIZER = `o200k_base (gpt-tokenizer ${(createRequire(import.meta.url)('gpt-tokenizer/package.json') as { version: string }).version})`;
/** Members a 2026-07-28 result carries that a 2025-11-25 one has not: compared apart from them. */
const MODERN_ONLY_MEMBERS = ['resultType', '_meta', 'ttlMs', 'cacheScope'] as const;

export interface Spread {
  median: number;
  worst: number;
  /** What gave the worst value (a slug). */
  worstOf: string;
}

interface SearchContext {
  hits: number;
  total: number;
  /** The JSON-RPC answer. */
  bytes: number;
  restBytes: number;
  /** bytes / restBytes. */
  ratio: number;
  textTokens: number;
  /** Every content block (the text and the links), as JSON. */
  contentTokens: number;
  restTokens: number;
  /** textTokens / restTokens. */
  textShare: number;
  /** contentTokens / restTokens. */
  contentShare: number;
  /** What the text does not name: the total, or a hit's slug, tagline, description, website or pricing model. */
  missing: string[];
}

export interface EraContext {
  era: McpEra;
  toolsList: { bytes: number; tokens: number; tools: number };
  search: SearchContext;
  /** get_product over the products: answer bytes / REST bytes, text tokens / REST tokens. */
  product: { products: number; ratio: Spread; textShare: Spread };
  /** resources/read of the same products: answer bytes / REST bytes. */
  resource: { products: number; ratio: Spread };
}

export interface ContextSizeResult {
  tokenizer: string;
  products: number;
  eras: EraContext[];
  /**
   * The same requests in both eras: their results compared, the 2026-07-28 one without the
   * members only that revision has (MODERN_ONLY_MEMBERS). `differing` names each pair that differs.
   */
  agreement: { compared: number; differing: string[] };
  /**
   * Each era's tool results and resource reads against the REST body they carry: a tool's
   * structuredContent equal to it (as JSON), a resource's text equal to it (byte for byte).
   * `differing` names each that is not, with its era.
   */
  rest: { compared: number; differing: string[] };
}

/** Tokens of a text in o200k_base; special-token markers in it count as the plain text they are. */
export function tokens(text: string): number {
  return encode(text, { disallowedSpecial: new Set() }).length;
}

/** Median (the mean of the middle two of an even count) and the highest value, with what gave it. */
export function spread(values: ReadonlyArray<{ of: string; value: number }>): Spread {
  if (values.length === 0) return { median: Number.NaN, worst: Number.NaN, worstOf: '' };
  const sorted = [...values].sort((a, b) => a.value - b.value);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]!.value : (sorted[mid - 1]!.value + sorted[mid]!.value) / 2;
  const worst = sorted[sorted.length - 1]!;
  return { median, worst: worst.value, worstOf: worst.of };
}

/** A result without the members only a 2026-07-28 result carries. */
export function withoutModernMembers(result: Record<string, unknown>): Record<string, unknown> {
  const out = { ...result };
  for (const member of MODERN_ONLY_MEMBERS) delete out[member];
  return out;
}

/** The 2025-11-25 result and the 2026-07-28 one say the same, apart from the modern era's own members. */
export function sameAnswer(legacy: Record<string, unknown>, modern: Record<string, unknown>): boolean {
  return isDeepStrictEqual(legacy, withoutModernMembers(modern));
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/** The first `count` words of an HTML description as plain text. */
export function openingWords(html: string, count = 4): string {
  return html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, name: string) => ENTITIES[name]!)
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, count)
    .join(' ');
}

interface RestHit {
  slug: string;
  punchline: string;
  description: string;
  website: string;
  pricing_model: string | null;
}

/** A text as its words alone, lower case, one space apart: punctuation and markup's traces aside. */
function wordsOf(text: string): string {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
}

/** Where `slug` stands whole (not inside a longer slug or word) in `text`, from `from`; -1 when nowhere. */
function slugAt(text: string, slug: string, from: number): number {
  const part = /[A-Za-z0-9_-]/;
  for (let at = text.indexOf(slug, from); at >= 0; at = text.indexOf(slug, at + 1)) {
    if (!part.test(text[at - 1] ?? ' ') && !part.test(text[at + slug.length] ?? ' ')) return at;
  }
  return -1;
}

/**
 * What a search's text fails to name: the total, and for every hit, within its own part of the
 * text (from its slug to the next hit's slug; the hits in the answer's order), its slug,
 * tagline, the opening of its description, website and pricing model. The website is looked for as it is; the others by their words
 * (`open_source` reads "open source", a heading may end with a colon).
 */
export function searchTextMisses(text: string, rest: { products: readonly RestHit[]; total: number }): string[] {
  const missing: string[] = [];
  if (!text.includes(rest.total.toLocaleString('en-US')) && !text.includes(String(rest.total))) missing.push(`the total (${rest.total})`);
  // Each hit's slug, whole, after the one before it: the hits are in the answer's order.
  const starts: number[] = [];
  let from = 0;
  for (const p of rest.products) {
    const at = slugAt(text, p.slug, from);
    starts.push(at);
    if (at >= 0) from = at + p.slug.length;
  }
  rest.products.forEach((p, i) => {
    const start = starts[i]!;
    if (start < 0) {
      missing.push(`${p.slug}: the hit itself`);
      return;
    }
    const next = starts.slice(i + 1).find((s) => s > start);
    const part = text.slice(start, next ?? text.length);
    const words = ` ${wordsOf(part)} `;
    const wanted: Array<[string, string | null]> = [
      ['tagline', p.punchline],
      ['description', openingWords(p.description)],
      ['pricing model', p.pricing_model],
    ];
    for (const [what, value] of wanted) {
      if (value && wordsOf(value) && !words.includes(` ${wordsOf(value)} `)) missing.push(`${p.slug}: ${what}`);
    }
    if (!part.includes(p.website)) missing.push(`${p.slug}: website`);
  });
  return missing;
}

async function getText(url: string): Promise<string> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`context size: GET ${url} answered ${res.status}: ${text.slice(0, 200)}`);
  return text;
}

/** An MCP answer: its body as sent, its bytes, and its result (a failure of any kind throws). */
async function ask(baseUrl: string, r: LoadRequest): Promise<{ text: string; bytes: number; result: NonNullable<McpMessage['result']> }> {
  const res = await fetch(`${baseUrl}${r.path}`, { method: 'POST', headers: r.headers, body: r.body });
  const text = await res.text();
  const problem = res.status !== 200 ? `answered ${res.status}` : mcpProblem(r.body!, mcpMessage(res.headers.get('content-type'), text));
  if (problem) throw new Error(`context size: ${r.body}: ${problem}: ${text.slice(0, 300)}`);
  return { text, bytes: Buffer.byteLength(text), result: mcpMessage(res.headers.get('content-type'), text).result! };
}

interface ContentBlock {
  type: string;
  text?: string;
}

function textOf(result: NonNullable<McpMessage['result']>): string {
  const blocks = result.content as ContentBlock[];
  return blocks.filter((b) => b.type === 'text').map((b) => b.text ?? '').join('\n');
}

export async function measureContextSize(opts: { baseUrl: string; slugs: readonly string[] }): Promise<ContextSizeResult> {
  const { baseUrl } = opts;
  const slugs = opts.slugs.slice(0, CONTEXT_PRODUCTS);
  const restSearchText = await getText(`${baseUrl}/api/v1/search`);
  const restSearch = JSON.parse(restSearchText) as { products: RestHit[]; total: number };
  const restProducts = new Map<string, { body: string; bytes: number; tokens: number }>();
  for (const slug of slugs) {
    const body = await getText(`${baseUrl}/api/v1/products/${encodeURIComponent(slug)}`);
    restProducts.set(slug, { body, bytes: Buffer.byteLength(body), tokens: tokens(body) });
  }
  // What the MCP answers carry, against the REST bodies.
  let restCompared = 0;
  const restDiffering: string[] = [];
  const carries = (what: string, equal: boolean) => {
    restCompared++;
    if (!equal) restDiffering.push(what);
  };
  const restSearchTokens = tokens(restSearchText);

  // Per era, every result by what was asked, to compare the eras afterwards.
  const results = new Map<McpEra, Map<string, Record<string, unknown>>>();
  const eras: EraContext[] = [];
  for (const era of MCP_ERAS) {
    const seen = new Map<string, Record<string, unknown>>();
    results.set(era, seen);

    const list = await ask(baseUrl, mcpRequest(era, 'tools/list'));
    seen.set('tools/list', list.result);

    const search = await ask(baseUrl, mcpToolCall(era, 'search_products', {}));
    seen.set('search_products {}', search.result);
    carries(`${era} search_products {}`, isDeepStrictEqual(search.result.structuredContent, restSearch));
    const searchText = textOf(search.result);
    const searchTextTokens = tokens(searchText);
    const searchContentTokens = tokens(JSON.stringify(search.result.content));
    const restSearchBytes = Buffer.byteLength(restSearchText);

    const productRatios: Array<{ of: string; value: number }> = [];
    const productShares: Array<{ of: string; value: number }> = [];
    const resourceRatios: Array<{ of: string; value: number }> = [];
    for (const slug of slugs) {
      const rest = restProducts.get(slug)!;
      const product = await ask(baseUrl, mcpToolCall(era, 'get_product', { slug }));
      seen.set(`get_product ${slug}`, product.result);
      carries(`${era} get_product ${slug}`, isDeepStrictEqual(product.result.structuredContent, JSON.parse(rest.body)));
      productRatios.push({ of: slug, value: product.bytes / rest.bytes });
      productShares.push({ of: slug, value: tokens(textOf(product.result)) / rest.tokens });
      const resource = await ask(baseUrl, mcpProductRead(era, slug));
      seen.set(`resources/read catalog://products/${slug}`, resource.result);
      carries(`${era} resources/read catalog://products/${slug}`, (resource.result.contents as Array<{ text?: string }>)[0]?.text === rest.body);
      resourceRatios.push({ of: slug, value: resource.bytes / rest.bytes });
    }

    eras.push({
      era,
      toolsList: { bytes: list.bytes, tokens: tokens(list.text), tools: (list.result.tools as unknown[]).length },
      search: {
        hits: restSearch.products.length,
        total: restSearch.total,
        bytes: search.bytes,
        restBytes: restSearchBytes,
        ratio: search.bytes / restSearchBytes,
        textTokens: searchTextTokens,
        contentTokens: searchContentTokens,
        restTokens: restSearchTokens,
        textShare: searchTextTokens / restSearchTokens,
        contentShare: searchContentTokens / restSearchTokens,
        missing: searchTextMisses(searchText, restSearch),
      },
      product: { products: slugs.length, ratio: spread(productRatios), textShare: spread(productShares) },
      resource: { products: slugs.length, ratio: spread(resourceRatios) },
    });
  }

  const legacy = results.get('2025-11-25')!;
  const modern = results.get('2026-07-28')!;
  const differing: string[] = [];
  for (const [what, result] of legacy) {
    const other = modern.get(what);
    if (!other || !sameAnswer(result, other)) differing.push(what);
  }
  return { tokenizer: TOKENIZER, products: slugs.length, eras, agreement: { compared: legacy.size, differing }, rest: { compared: restCompared, differing: restDiffering } };
}
