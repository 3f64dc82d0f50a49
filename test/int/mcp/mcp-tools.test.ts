import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_CATEGORIES, LIVE_SLUGS_NEWEST_FIRST, NOT_LIVE_SLUGS } from '../../helpers/fixtures.ts';
import { connectMcp, ERAS, type McpTestClient } from '../../helpers/mcp-clients.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * The three read tools against the whole service on a real port, from the official client of
 * each protocol era (2025-11-25 and 2026-07-28): every structured result is compared with what
 * REST answers for the same input on the same service, successes and errors alike, and the text
 * a model reads names what the spec lists.
 */
let stack: TestStack;
const clients = new Map<string, McpTestClient>();

beforeAll(async () => {
  // Budgets out of the way: this file checks answers, mcp-rate-limit.test.ts checks budgets.
  stack = await startTestStack({ env: { RATE_LIMIT_SEARCH_PER_MIN: '100000', RATE_LIMIT_OTHER_PER_MIN: '100000' } });
  for (const era of ERAS) clients.set(era, await connectMcp(era, stack.baseUrl));
});

afterAll(async () => {
  for (const client of clients.values()) await client.close();
  await stack?.stop();
});

describe.each(ERAS)('%s era', (era) => {

async function rest(path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(new URL(`/api/v1${path}`, stack.baseUrl));
  return { status: res.status, text: await res.text() };
}

const client = { listTools: () => clients.get(era)!.listTools() };

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return await clients.get(era)!.callTool(name, args);
}

/** The text a model reads: the result's first block. */
function textOf(result: CallToolResult): string {
  const block = result.content[0];
  if (block?.type !== 'text') throw new Error('expected a text block first');
  return block.text;
}

/** An error's only block: the REST error object. */
function errorOf(result: CallToolResult): string {
  expect(result.content).toHaveLength(1);
  return textOf(result);
}

interface ProductFields {
  slug: string;
  name: string;
  punchline: string;
  website: string;
  url: string;
  pricing_model: string | null;
}

/** What the spec lists for a hit (slug, tagline, website, pricing model), and the description's opening, named in the text. */
function expectNamed(text: string, p: ProductFields & { description: string }): void {
  expect(text).toContain(`(${p.slug})`);
  expect(text).toContain(p.punchline);
  expect(text).toContain(p.website);
  if (p.pricing_model) expect(text).toContain(p.pricing_model.replace('_', ' '));
  const opening = p.description.replace(/<[^>]+>/g, ' ').trim().split(/\s+/).slice(0, 3).join(' ');
  expect(text).toContain(opening);
}

function queryString(args: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(args)) params.set(key, String(value));
  const s = params.toString();
  return s ? `?${s}` : '';
}

/**
 * The tool succeeds with the REST body as its structured result, and a text that names it: every
 * hit of a search (with its total and a link to its resource), the product, each category.
 */
async function expectSameAsRest(tool: string, args: Record<string, unknown>, restPath: string): Promise<unknown> {
  const [result, expected] = await Promise.all([call(tool, args), rest(restPath)]);
  expect(expected.status).toBe(200);
  expect(result.isError).toBeFalsy();
  const body = JSON.parse(expected.text) as Record<string, unknown>;
  expect(result.structuredContent).toEqual(body);
  const text = textOf(result);
  if (tool === 'search_products') {
    const { products, total } = body as { products: Array<ProductFields & { description: string }>; total: number };
    if (products.length > 0) expect(text).toContain(total === 1 ? '1 live listing matches' : `${total.toLocaleString('en-US')} live listings match`);
    for (const p of products) expectNamed(text, p);
    expect(result.content.slice(1)).toEqual(products.map((p) => ({ type: 'resource_link', uri: `catalog://products/${p.slug}`, name: p.slug, title: p.name, mimeType: 'application/json' })));
  } else if (tool === 'get_product') {
    const p = body as unknown as ProductFields & { description: string };
    expectNamed(text, p);
    expect(text).toContain(p.url);
  } else {
    for (const c of (body as { categories: Array<{ slug: string; name: string }> }).categories) expect(text).toContain(`- ${c.slug}: ${c.name}`);
  }
  return result.structuredContent;
}

/** The tool fails with the REST error object (same code, message and issues) as its text. */
async function expectSameErrorAsRest(tool: string, args: Record<string, unknown>, restPath: string, status: number) {
  const [result, expected] = await Promise.all([call(tool, args), rest(restPath)]);
  expect(expected.status).toBe(status);
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const error = JSON.parse(errorOf(result)) as { code: string; message: string; data?: { issues: Array<{ path: unknown[] }> } };
  expect(error).toEqual(JSON.parse(expected.text));
  return error;
}

describe('tools/list', () => {
  it('lists the three read tools, read-only and idempotent, and the five maker tools', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'check_badge', 'get_product', 'list_categories', 'my_listings', 'search_products', 'submit_product', 'update_listing', 'upgrade_listing',
    ]);
    for (const tool of tools) {
      expect(tool.title).toBeTruthy();
      if (['get_product', 'list_categories', 'search_products'].includes(tool.name)) {
        expect(tool.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false });
      }
      expect((tool.annotations as { title?: string } | undefined)?.title).toBeTruthy();
      // The read tools' structured results are the REST objects, described; the maker tools answer JSON text and structure without a schema (docs/decisions.md).
      if (['get_product', 'list_categories', 'search_products'].includes(tool.name)) expect(tool.outputSchema?.type).toBe('object');
      else expect(tool.outputSchema).toBeUndefined();
      expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    }
    // A deterministic order (2026-07-28: clients may cache the list): read tools first, then the maker tools.
    expect(tools.map((t) => t.name)).toEqual([
      'search_products', 'list_categories', 'get_product', 'submit_product', 'my_listings', 'update_listing', 'check_badge', 'upgrade_listing',
    ]);
  });

  it('advertises the search constraints of GET /search', async () => {
    const { tools } = await client.listTools();
    const search = tools.find((t) => t.name === 'search_products');
    const props = search?.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(Object.keys(props).sort()).toEqual(['category', 'label', 'limit', 'page', 'q', 'tag']);
    expect((search?.inputSchema.required as unknown[] | undefined) ?? []).toEqual([]);
    expect(props.q).toMatchObject({ type: 'string', minLength: 2, maxLength: 100 });
    expect(props.page).toMatchObject({ type: 'integer', minimum: 1, maximum: 500, default: 1 });
    expect(props.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 50, default: 20 });
    for (const filter of ['category', 'label', 'tag']) {
      expect(props[filter]).toMatchObject({ type: 'string', minLength: 1, maxLength: 200, pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' });
    }
    for (const prop of Object.values(props)) expect(prop.description).toBeTruthy();
    expect(search?.description).toMatch(/newest first/);
    expect(search?.description).toMatch(/page/);
    expect(search?.description).toMatch(/total/);
    expect(search?.outputSchema?.required).toEqual(['products', 'total', 'page', 'limit']);
  });

  it('advertises get_product with a required slug of 1 to 200 characters and list_categories with none', async () => {
    const { tools } = await client.listTools();
    const product = tools.find((t) => t.name === 'get_product');
    expect(product?.inputSchema.required).toEqual(['slug']);
    expect((product?.inputSchema.properties as Record<string, unknown>).slug).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
    expect(product?.description).toMatch(/page/);
    const outputProps = (product?.outputSchema?.properties ?? {}) as Record<string, unknown>;
    expect(Object.keys(outputProps)).toEqual(expect.arrayContaining(['slug', 'url', 'highlights', 'ideal_for', 'faq', 'promo']));
    const categories = tools.find((t) => t.name === 'list_categories');
    expect(categories?.inputSchema.properties).toEqual({});
    expect(categories?.outputSchema?.required).toEqual(['categories']);
  });
});

describe('search_products', () => {
  it('returns the whole live catalog newest first, as GET /search does', async () => {
    const result = (await expectSameAsRest('search_products', {}, '/search')) as { products: Array<{ slug: string }>; total: number };
    expect(result.products.map((p) => p.slug)).toEqual([...LIVE_SLUGS_NEWEST_FIRST]);
    expect(result.total).toBe(LIVE_SLUGS_NEWEST_FIRST.length);
  });

  const cases: Array<Record<string, unknown>> = [
    { q: 'pixel' },
    { q: 'sql' },
    { q: 'Grow ideas' },
    { q: 'nothing-matches-this' },
    { category: 'design' },
    { category: 'developer-tools' },
    { category: 'empty-shelf' },
    { category: 'no-such-category' },
    { label: 'new' },
    { label: 'trending' },
    { tag: 'ai' },
    { tag: 'devops' },
    { category: 'developer-tools', tag: 'ai' },
    { category: 'design', label: 'new' },
    { q: 'code', category: 'developer-tools' },
    { label: 'new', tag: 'fonts', category: 'design' },
    { tag: 'ai', limit: 1, page: 2 },
    { limit: 50 },
    { limit: 1 },
    { limit: 2, page: 1 },
    { limit: 2, page: 2 },
    { limit: 2, page: 3 },
    { limit: 2, page: 4 },
    { limit: 2, page: 5 },
    { page: 500 },
    { q: '"\'' },
    { q: '!!', category: 'design' },
  ];
  it.each(cases)('%o answers the REST body', async (args) => {
    await expectSameAsRest('search_products', args, `/search${queryString(args)}`);
  });

  it('combines filters', async () => {
    const slugs = async (args: Record<string, unknown>) =>
      ((await call('search_products', args)).structuredContent as { products: Array<{ slug: string }> }).products.map((p) => p.slug);
    expect(await slugs({ category: 'developer-tools', tag: 'ai' })).toEqual(['query-pilot']);
    expect(await slugs({ tag: 'ai' })).toEqual(['pixel-forge', 'query-pilot', 'note-garden']);
    expect(await slugs({ category: 'design', label: 'new', tag: 'fonts' })).toEqual(['type-scale']);
    expect(await slugs({ q: 'pixel' })).toEqual(['pixel-forge']);
    expect(await slugs({ category: 'empty-shelf' })).toEqual([]);
  });

  it('answers a q with no letter or digit with no match, never an error', async () => {
    for (const q of ['"\'', '--', '😀😀', '<>', '!'.repeat(100)]) {
      const result = await call('search_products', { q });
      expect(result.isError, q).toBeFalsy();
      expect(result.structuredContent).toEqual({ products: [], total: 0, page: 1, limit: 20 });
    }
  });

  it('pages through every live listing exactly once', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const result = (await call('search_products', { limit: 2, page })).structuredContent as { products: Array<{ slug: string }>; total: number };
      expect(result.total).toBe(LIVE_SLUGS_NEWEST_FIRST.length);
      seen.push(...result.products.map((p) => p.slug));
    }
    expect(seen).toEqual([...LIVE_SLUGS_NEWEST_FIRST]);
  });

  const invalid: Array<{ args: Record<string, unknown>; query: string; rejected: string[] }> = [
    { args: { q: 'a' }, query: 'q=a', rejected: ['q'] },
    { args: { q: 'x'.repeat(101) }, query: `q=${'x'.repeat(101)}`, rejected: ['q'] },
    { args: { page: 0 }, query: 'page=0', rejected: ['page'] },
    { args: { page: 501 }, query: 'page=501', rejected: ['page'] },
    { args: { page: 1.5 }, query: 'page=1.5', rejected: ['page'] },
    { args: { limit: 0 }, query: 'limit=0', rejected: ['limit'] },
    { args: { limit: 51 }, query: 'limit=51', rejected: ['limit'] },
    { args: { category: 'Not A Slug' }, query: 'category=Not%20A%20Slug', rejected: ['category'] },
    { args: { label: 'bad--slug' }, query: 'label=bad--slug', rejected: ['label'] },
    { args: { tag: '-ai' }, query: 'tag=-ai', rejected: ['tag'] },
    { args: { color: 'blue' }, query: 'color=blue', rejected: ['color'] },
    { args: { q: 'a', limit: 51, color: 'blue' }, query: 'q=a&limit=51&color=blue', rejected: ['q', 'limit', 'color'] },
  ];
  it.each(invalid)('rejects $args as REST rejects ?$query', async ({ args, query, rejected }) => {
    const error = await expectSameErrorAsRest('search_products', args, `/search?${query}`, 400);
    expect(error.code).toBe('BAD_REQUEST');
    expect(error.data?.issues.map((i) => i.path[0]).sort()).toEqual([...rejected].sort());
  });

  it('rejects arguments of the wrong type, naming them', async () => {
    const result = await call('search_products', { q: 42, page: 'two', tag: ['ai'] });
    expect(result.isError).toBe(true);
    const error = JSON.parse(errorOf(result)) as { code: string; message: string; data: { issues: Array<{ path: string[] }> } };
    expect(error.code).toBe('BAD_REQUEST');
    expect(error.data.issues.map((i) => i.path[0]).sort()).toEqual(['page', 'q', 'tag']);
    expect(error.message).toMatch(/'q'/);
  });
});

describe('list_categories', () => {
  it('returns every category with its live count, as GET /categories does', async () => {
    const result = (await expectSameAsRest('list_categories', {}, '/categories')) as { categories: Array<{ slug: string; count: number }> };
    expect(result.categories.map((c) => c.slug).sort()).toEqual(FIXTURE_CATEGORIES.map((c) => c.slug).sort());
    expect(Object.fromEntries(result.categories.map((c) => [c.slug, c.count]))).toEqual({
      design: 2,
      'developer-tools': 3,
      productivity: 1,
      'empty-shelf': 0,
    });
  });

  it('rejects an unknown argument, naming it', async () => {
    const result = await call('list_categories', { sort: 'name' });
    expect(result.isError).toBe(true);
    const error = JSON.parse(errorOf(result)) as { code: string; data: { issues: Array<{ path: string[]; message: string }> } };
    expect(error.code).toBe('BAD_REQUEST');
    expect(error.data.issues).toEqual([{ path: ['sort'], message: 'is not a known parameter' }]);
  });
});

describe('get_product', () => {
  it.each([...LIVE_SLUGS_NEWEST_FIRST])('%s answers the REST body', async (slug) => {
    const product = (await expectSameAsRest('get_product', { slug }, `/products/${slug}`)) as { slug: string; url: string };
    expect(product.slug).toBe(slug);
  });

  it('includes the premium profile and the promo when present', async () => {
    const product = (await call('get_product', { slug: 'pixel-forge' })).structuredContent as Record<string, unknown>;
    expect(product.highlights).toEqual(['Sketch to vector in seconds', 'Exports SVG and PNG']);
    expect(product.promo).toMatchObject({ code: 'FORGE20' });
  });

  it.each([...NOT_LIVE_SLUGS, 'no-such-listing'])('%s is NOT_FOUND with the REST message', async (slug) => {
    const error = await expectSameErrorAsRest('get_product', { slug }, `/products/${slug}`, 404);
    expect(error).toEqual({ code: 'NOT_FOUND', message: `No live listing has the slug '${slug}'.` });
  });

  it('rejects a slug longer than 200 characters as REST does', async () => {
    const slug = 'a'.repeat(201);
    const error = await expectSameErrorAsRest('get_product', { slug }, `/products/${slug}`, 400);
    expect(error.data?.issues.map((i) => i.path[0])).toEqual(['slug']);
  });

  it('rejects an empty or missing slug and an unknown argument, naming them', async () => {
    for (const [args, rejected] of [
      [{ slug: '' }, ['slug']],
      [{}, ['slug']],
      [{ slug: 'pixel-forge', format: 'short' }, ['format']],
    ] as const) {
      const result = await call('get_product', args);
      expect(result.isError).toBe(true);
      const error = JSON.parse(errorOf(result)) as { code: string; data: { issues: Array<{ path: string[] }> } };
      expect(error.code).toBe('BAD_REQUEST');
      expect(error.data.issues.map((i) => i.path[0])).toEqual(rejected);
    }
  });

  it('says plainly that the slug is required', async () => {
    const error = JSON.parse(errorOf(await call('get_product', {}))) as { data: { issues: unknown[] } };
    expect(error.data.issues).toEqual([{ path: ['slug'], message: 'is required' }]);
  });
});
});
