import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SLUG_PATTERN } from '../../../src/contract/schemas.ts';
import type { OpenApiDocument } from '../../../src/http/openapi.ts';
import { projectPath } from '../../../src/util/project-file.ts';
import { LIVE_SLUGS_NEWEST_FIRST } from '../../helpers/fixtures.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { PRODUCT_FIELDS, documentedResponseSchema, responseValidators, uniqueIp, type SchemaName } from './rest-support.ts';

/**
 * The OpenAPI 3.1 document served at /api/v1/openapi.json: valid for a real OpenAPI validator,
 * complete (operations, parameters with constraints, responses), and true: the service's
 * actual answers validate against it, and its documented bounds are the ones enforced.
 */
let stack: TestStack;
let app: FastifyInstance;
let doc: OpenApiDocument;

beforeAll(async () => {
  stack = await startTestStack({ listen: false });
  app = stack.service.app;
  const res = await app.inject({ url: '/api/v1/openapi.json', remoteAddress: uniqueIp() });
  expect(res.statusCode).toBe(200);
  doc = res.json() as OpenApiDocument;
});
afterAll(async () => {
  await stack?.stop();
});

const get = (url: string, ip = uniqueIp()) => app.inject({ method: 'GET', url, remoteAddress: ip });

type Json = Record<string, unknown>;
function resolve(node: unknown): Json {
  let n = node as Json;
  while (typeof n.$ref === 'string') {
    n = (n.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((acc, part) => (acc as Json)[part], doc) as Json;
  }
  return n;
}
const operation = (path: string) => doc.paths[path]!.get as Json & { parameters: unknown[]; responses: Record<string, unknown> };
const parameter = (path: string, name: string) => operation(path).parameters.map(resolve).find((p) => p.name === name) as Json & { schema: Json };

describe('the document', () => {
  test('is served as JSON, cacheable, with an ETag', async () => {
    const res = await get('/api/v1/openapi.json');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    expect(res.headers['cache-control']).toBe('public, max-age=60, s-maxage=300');
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });

  test('is the committed openapi.json, servers aside (run npm run api-reference after a change to the API)', () => {
    const committed = JSON.parse(readFileSync(projectPath('openapi.json'), 'utf8')) as OpenApiDocument;
    const { servers: _served, ...served } = doc;
    const { servers: _committed, ...file } = committed;
    expect(served, 'the served document differs from openapi.json: run npm run api-reference').toEqual(file);
  });

  test('is a valid OpenAPI 3.1 document for a real validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('carries version 1.0.0, a title, a description and the /api/v1 server', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.description).toMatch(/live listings/);
    expect(doc.servers).toEqual([{ url: 'http://catalog.test/api/v1', description: 'This service' }]);
    expect(doc.servers[0]!.url.endsWith('/api/v1')).toBe(true);
  });

  test('names the five GET operations, each served by the application', () => {
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => [method, path, (op as Json).operationId]),
    );
    expect(ops).toEqual([
      ['get', '/search', 'searchProducts'],
      ['get', '/categories', 'listCategories'],
      ['get', '/products/{slug}', 'getProduct'],
      ['get', '/export', 'exportProducts'],
      ['get', '/changes', 'listChanges'],
    ]);
    for (const path of Object.keys(doc.paths)) {
      expect(app.hasRoute({ method: 'GET', url: `/api/v1${path.replace(/\{(\w+)\}/g, ':$1')}` }), path).toBe(true);
    }
  });

  test('documents every parameter with its constraints', () => {
    expect(operation('/search').parameters.map(resolve).map((p) => p.name)).toEqual(['q', 'category', 'label', 'tag', 'page', 'limit', 'If-None-Match']);
    expect(parameter('/search', 'q')).toMatchObject({ in: 'query', required: false, schema: { type: 'string', minLength: 2, maxLength: 100 } });
    expect(parameter('/search', 'page')).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 500, default: 1 } });
    expect(parameter('/search', 'limit')).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 50, default: 20 } });
    for (const name of ['category', 'label', 'tag']) {
      expect(parameter('/search', name)).toMatchObject({ in: 'query', required: false, schema: { type: 'string', pattern: SLUG_PATTERN.source, minLength: 1, maxLength: 200 } });
    }
    expect(parameter('/products/{slug}', 'slug')).toMatchObject({ in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 200 } });
    expect(operation('/categories').parameters.map(resolve).map((p) => p.in)).toEqual(['header']);
    expect(operation('/export').parameters.map(resolve).map((p) => [p.name, p.in])).toEqual([
      ['Accept-Encoding', 'header'],
      ['If-None-Match', 'header'],
    ]);
    expect(operation('/changes').parameters.map(resolve).map((p) => p.name)).toEqual(['since', 'limit', 'wait']);
    expect(parameter('/changes', 'since')).toMatchObject({ in: 'query', required: false, schema: { type: 'string', pattern: expect.any(String) } });
    expect(parameter('/changes', 'limit')).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } });
    expect(parameter('/changes', 'wait')).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: 30, default: 0 } });
  });

  test('documents every response with its schema and headers', () => {
    const statuses = (path: string) => Object.keys(operation(path).responses);
    expect(statuses('/search')).toEqual(['200', '304', '400', '401', '429']);
    expect(statuses('/categories')).toEqual(['200', '304', '400', '401', '429']);
    expect(statuses('/products/{slug}')).toEqual(['200', '304', '400', '401', '404', '429']);
    expect(documentedResponseSchema(doc, '/search', '200')).toBe('SearchResult');
    expect(documentedResponseSchema(doc, '/categories', '200')).toBe('CategoryList');
    expect(documentedResponseSchema(doc, '/products/{slug}', '200')).toBe('Product');
    for (const [path, status] of [['/search', '400'], ['/search', '429'], ['/products/{slug}', '400'], ['/products/{slug}', '404'], ['/categories', '400'], ['/categories', '429']] as const) {
      expect(documentedResponseSchema(doc, path, status), `${path} ${status}`).toBe('Error');
    }
    const okHeaders = Object.keys(resolve(operation('/search').responses['200']).headers as Json);
    expect(okHeaders).toEqual(expect.arrayContaining(['ETag', 'Cache-Control', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy']));
    const refusedHeaders = Object.keys(resolve(operation('/search').responses['429']).headers as Json);
    expect(refusedHeaders).toContain('Retry-After');
    expect(resolve(operation('/search').responses['304']).content).toBeUndefined();
    // The routes that hold requests open are refused past their caps too (docs/connections.md).
    expect(statuses('/export')).toEqual(['200', '304', '400', '401', '429', '503']);
    expect(statuses('/changes')).toEqual(['200', '400', '401', '410', '429', '503']);
    for (const path of ['/export', '/changes']) {
      for (const status of ['429', '503']) {
        expect(documentedResponseSchema(doc, path, status), `${path} ${status}`).toBe('Error');
        expect(Object.keys(resolve(operation(path).responses[status]).headers as Json)).toContain('Retry-After');
      }
    }
    expect(resolve(operation('/changes').responses['429']).description).toContain('20 long polls waiting');
    const exported = resolve(operation('/export').responses['200']);
    expect(Object.keys(exported.content as Json)).toEqual(['application/x-ndjson']);
    expect((exported.content as Record<string, Json>)['application/x-ndjson']!['x-item-schema']).toEqual({ $ref: '#/components/schemas/Product' });
    expect(Object.keys(exported.headers as Json)).toEqual(expect.arrayContaining(['ETag', 'Catalog-Cursor', 'Cache-Control', 'Content-Encoding', 'X-RateLimit-Limit']));
    expect(documentedResponseSchema(doc, '/changes', '200')).toBe('ChangePage');
    expect(documentedResponseSchema(doc, '/changes', '410')).toBe('Error');
  });

  test('the object schemas come from the contract: every field required, none beyond', () => {
    const { schemas } = doc.components;
    expect(Object.keys(schemas).sort()).toEqual(['Category', 'CategoryList', 'Change', 'ChangePage', 'Error', 'FaqItem', 'Product', 'Promo', 'SearchResult', 'ValidationIssue']);
    expect((schemas.Change.properties as Json).product).toEqual({
      anyOf: [{ $ref: '#/components/schemas/Product' }, { type: 'null' }],
      description: expect.any(String),
    });
    expect([...(schemas.Product.required as string[])].sort()).toEqual(PRODUCT_FIELDS);
    for (const name of ['Product', 'FaqItem', 'Promo', 'Category', 'SearchResult', 'CategoryList', 'Change', 'ChangePage', 'Error'] as const) {
      expect(schemas[name].additionalProperties, name).toBe(false);
    }
    expect((schemas.SearchResult.properties as Json).products).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Product' } });
    expect((schemas.CategoryList.properties as Json).categories).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Category' } });
    expect(schemas.Error.required).toEqual(['code', 'message']);
    expect(JSON.stringify(doc)).not.toContain('"$schema"');
  });
});

describe('actual answers validate against the document', () => {
  let schemaFor: (name: SchemaName) => ReturnType<ReturnType<typeof responseValidators>>;
  beforeAll(() => {
    schemaFor = responseValidators(doc);
  });

  function expectDocumented(path: string, status: number, body: unknown): void {
    const name = documentedResponseSchema(doc, path, String(status));
    expect(name, `${path} documents ${status}`).toBeDefined();
    const validate = schemaFor(name as SchemaName);
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  }

  test.each(['', 'limit=50', 'category=design', 'label=new&tag=ai', 'q=sketch', 'page=2&limit=3', 'page=500', 'limit=0', 'q=a&page=x&nope=1'])(
    'GET /search?%s',
    async (query) => {
      const res = await get(`/api/v1/search?${query}`);
      expectDocumented('/search', res.statusCode, res.json());
    },
  );

  test('GET /categories', async () => {
    const res = await get('/api/v1/categories');
    expectDocumented('/categories', res.statusCode, res.json());
  });

  test.each([...LIVE_SLUGS_NEWEST_FIRST, 'draft-idea', 'hidden-gem', 'missing', 'x'.repeat(201)])('GET /products/%s', async (slug) => {
    const res = await get(`/api/v1/products/${slug}`);
    expectDocumented('/products/{slug}', res.statusCode, res.json());
  });

  test.each(['', 'limit=1', 'since=nope', 'limit=5000&wait=x', 'since=ffffffff-1'])('GET /changes?%s', async (query) => {
    const res = await get(`/api/v1/changes?${query}`);
    expectDocumented('/changes', res.statusCode, res.json());
  });

  test('GET /export: every line a Product', async () => {
    const res = await get('/api/v1/export');
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    const validate = schemaFor('Product');
    for (const line of res.body.split('\n').filter(Boolean)) expect(validate(JSON.parse(line)), JSON.stringify(validate.errors)).toBe(true);
  });

  test('every operation takes an optional consumer key (bearer), and documents its 401', async () => {
    expect(doc.components.securitySchemes).toEqual({ consumerKey: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    for (const path of ['/search', '/categories', '/products/{slug}', '/export', '/changes']) {
      expect(operation(path).security, path).toEqual([{}, { consumerKey: [] }]);
      expect(documentedResponseSchema(doc, path, '401'), path).toBe('Error');
      expect(Object.keys(resolve(operation(path).responses['401']).headers as Json)).toContain('WWW-Authenticate');
    }
    const refused = await app.inject({ method: 'GET', url: '/api/v1/products/pixel-forge', remoteAddress: uniqueIp(), headers: { authorization: 'Bearer ck_not-a-key' } });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    expectDocumented('/products/{slug}', 401, refused.json());
    expect(refused.json().code).toBe('INVALID_KEY');
  });

  test('a 429 of each operation', async () => {
    const ip = uniqueIp();
    for (let i = 0; i < 30; i++) await get('/api/v1/search', ip);
    const search = await get('/api/v1/search', ip);
    expect(search.statusCode).toBe(429);
    expectDocumented('/search', 429, search.json());
    for (let i = 0; i < 60; i++) await get('/api/v1/categories', ip);
    const cats = await get('/api/v1/categories', ip);
    expect(cats.statusCode).toBe(429);
    expectDocumented('/categories', 429, cats.json());
    const product = await get('/api/v1/products/pixel-forge', ip);
    expectDocumented('/products/{slug}', 429, product.json());
  });

  test('the documented bounds of every search parameter are the enforced ones', async () => {
    for (const p of operation('/search').parameters.map(resolve).filter((x) => x.in === 'query')) {
      const s = p.schema as Json;
      const name = String(p.name);
      const cases: Array<[string, number]> = [];
      if (s.type === 'integer') {
        cases.push([String(s.minimum), 200], [String(s.maximum), 200], [String(Number(s.minimum) - 1), 400], [String(Number(s.maximum) + 1), 400], ['1.5', 400]);
      } else {
        const min = Number(s.minLength);
        const max = Number(s.maxLength);
        const word = (n: number) => 'a'.repeat(n);
        cases.push([word(min), 200], [word(max), 200], [word(max + 1), 400]);
        if (min > 1) cases.push([word(min - 1), 400]);
        if (typeof s.pattern === 'string') cases.push(['Not-A-Slug', 400], ['a--b', 400], ['ok-slug-2', 200]);
      }
      for (const [value, status] of cases) {
        const res = await get(`/api/v1/search?${name}=${encodeURIComponent(value)}`);
        expect(res.statusCode, `${name}=${value}`).toBe(status);
        if (status === 400) expect(res.json().data.issues).toEqual([{ path: [name], message: expect.any(String) }]);
      }
    }
  });
});

describe('the reference page at /api/v1/docs', () => {
  test('is one self-contained HTML page describing every operation, parameter and object', async () => {
    const res = await get('/api/v1/docs');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const html = res.body;
    for (const id of ['searchProducts', 'listCategories', 'getProduct', 'exportProducts', 'listChanges']) expect(html).toContain(`id="op-${id}"`);
    for (const name of ['q', 'category', 'label', 'tag', 'page', 'limit', 'slug', 'since', 'wait']) expect(html).toContain(`<code>${name}</code>`);
    for (const schema of ['Product', 'FaqItem', 'Promo', 'Category', 'SearchResult', 'CategoryList', 'Change', 'ChangePage', 'Error']) expect(html).toContain(`id="schema-${schema}"`);
    expect(html).toContain('<code>application/x-ndjson</code>: one <a href="#schema-Product">Product</a> per line');
    expect(html).toContain('1 to 1000');
    expect(html).toContain('<code>Catalog-Cursor</code>');
    expect(html).toContain('2 to 100 characters');
    expect(html).toContain('1 to 500');
    expect(html).toContain('1.0.0');
    // Nothing is loaded from anywhere else.
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href="(?!data:)/i);
    // An empty icon of its own, so browsers do not ask for /favicon.ico (a 404).
    expect(html).toContain('<link rel="icon" href="data:,"/>');
    expect(html).not.toMatch(/@import|url\(/i);
  });

  test("its Content-Security-Policy allows exactly the page's own inline script and style", async () => {
    const res = await get('/api/v1/docs');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    const hash = (s: string) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`;
    const script = /<script>([\s\S]*?)<\/script>/.exec(res.body)![1]!;
    const style = /<style>([\s\S]*?)<\/style>/.exec(res.body)![1]!;
    expect(csp).toContain(`script-src ${hash(script)}`);
    expect(csp).toContain(`style-src ${hash(style)}`);
  });
});
