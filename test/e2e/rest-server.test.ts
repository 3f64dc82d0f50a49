import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ErrorBody } from '../../src/contract/schemas.ts';
import type { OpenApiDocument } from '../../src/http/openapi.ts';
import { LIVE_SLUGS_NEWEST_FIRST, NOT_LIVE_SLUGS } from '../helpers/fixtures.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';
import { ISO_UTC, PRODUCT_FIELDS, documentedResponseSchema, responseValidators, uniqueIp, type SchemaName } from '../int/http/rest-support.ts';

/**
 * The REST API over a real socket with fetch, as a browser script or another service sees it.
 * The service trusts X-Forwarded-For here (TRUST_PROXY=true), so each test is its own client.
 */
let stack: TestStack;
let base: string;
let doc: OpenApiDocument;
let validate: (name: SchemaName, body: unknown) => void;

beforeAll(async () => {
  stack = await startTestStack({ env: { TRUST_PROXY: 'true' } });
  base = `${stack.baseUrl}/api/v1`;
  doc = (await (await fetch(`${base}/openapi.json`, { headers: { 'x-forwarded-for': uniqueIp() } })).json()) as OpenApiDocument;
  const validators = responseValidators(doc);
  validate = (name, body) => {
    const fn = validators(name);
    expect(fn(body), JSON.stringify(fn.errors)).toBe(true);
  };
});
afterAll(async () => {
  await stack?.stop();
});

const errorOf = async (res: Response) => (await res.json()) as ErrorBody;

function client(ip = uniqueIp()) {
  return (path: string, init: RequestInit = {}) =>
    fetch(path.startsWith('http') ? path : `${base}${path}`, { ...init, headers: { 'x-forwarded-for': ip, ...(init.headers as Record<string, string>) } });
}

describe('reads over HTTP', () => {
  test('search: JSON, every live listing newest first, documented shape and headers', async () => {
    const res = await client()('/search', { headers: { origin: 'https://widget.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toMatch(/X-RateLimit-Remaining/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60, s-maxage=300');
    expect(res.headers.get('etag')).toMatch(/^"[^"]+"$/);
    expect(res.headers.get('x-ratelimit-limit')).toBe('30');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('29');
    expect(res.headers.get('ratelimit-policy')).toBe('"search";q=30;w=60');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const body = (await res.json()) as { products: Array<Record<string, unknown>>; total: number; page: number; limit: number };
    validate('SearchResult', body);
    expect(body.products.map((p) => p.slug)).toEqual([...LIVE_SLUGS_NEWEST_FIRST]);
    expect(body.total).toBe(7);
    for (const p of body.products) {
      expect(Object.keys(p).sort()).toEqual(PRODUCT_FIELDS);
      expect(p.listed_at).toMatch(ISO_UTC);
    }
  });

  test('filters and paging over the wire', async () => {
    const get = client();
    const page2 = (await (await get('/search?tag=ai&limit=2&page=2')).json()) as { products: Array<{ slug: string }>; total: number };
    expect(page2.products.map((p) => p.slug)).toEqual(['note-garden']);
    expect(page2.total).toBe(3);
    const q = (await (await get(`/search?q=${encodeURIComponent('plain English')}`)).json()) as { products: Array<{ slug: string }> };
    expect(q.products.map((p) => p.slug)).toEqual(['query-pilot']);
  });

  test('products: 200 for live slugs, 404 NOT_FOUND for the others, 400 for a bad slug', async () => {
    const get = client();
    for (const slug of LIVE_SLUGS_NEWEST_FIRST) {
      const res = await get(`/products/${slug}`);
      expect(res.status).toBe(200);
      validate('Product', await res.json());
    }
    for (const slug of [...NOT_LIVE_SLUGS, 'never-existed']) {
      const res = await get(`/products/${slug}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json()).toEqual({ code: 'NOT_FOUND', message: `No live listing has the slug '${slug}'.` });
    }
    const long = await get(`/products/${'a'.repeat(201)}`);
    expect(long.status).toBe(400);
    const body = await errorOf(long);
    expect(body.data!.issues).toEqual([{ path: ['slug'], message: 'must be 1 to 200 characters' }]);
    expect(documentedResponseSchema(doc, '/products/{slug}', '400')).toBe('Error');
    validate('Error', body);
  });

  test('categories ordered by name with counts', async () => {
    const res = await client()('/categories');
    const body = (await res.json()) as { categories: Array<{ slug: string; count: number }> };
    validate('CategoryList', body);
    expect(body.categories.map((c) => [c.slug, c.count])).toEqual([
      ['design', 2],
      ['developer-tools', 3],
      ['empty-shelf', 0],
      ['productivity', 1],
    ]);
  });

  test('a 400 names every rejected parameter', async () => {
    const res = await client()('/search?q=x&limit=51&color=red');
    expect(res.status).toBe(400);
    const body = await errorOf(res);
    validate('Error', body);
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.data!.issues.map((i) => i.path[0])).toEqual(['q', 'limit', 'color']);
  });
});

describe('HTTP semantics', () => {
  test('If-None-Match gets a bodiless 304 with the same validators', async () => {
    const get = client();
    const first = await get('/products/pixel-forge');
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    const again = await get('/products/pixel-forge', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toBe('public, max-age=60, s-maxage=300');
    expect(await again.text()).toBe('');
  });

  test('HEAD answers the GET headers without a body', async () => {
    const res = await client()('/categories', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toMatch(/^"/);
    expect(await res.text()).toBe('');
  });

  test('a browser preflight is answered 204', async () => {
    const res = await client()('/search?q=pixel', {
      method: 'OPTIONS',
      headers: { origin: 'https://widget.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('GET');
    expect(res.headers.get('access-control-allow-headers')).toBe('if-none-match');
  });

  test('unknown routes and other methods answer the error object as JSON', async () => {
    const get = client();
    const missing = await get('/does-not-exist');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect((await errorOf(missing)).code).toBe('NOT_FOUND');
    const post = await get('/search', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(post.status).toBe(405);
    expect((await errorOf(post)).code).toBe('METHOD_NOT_ALLOWED');
    // the method is wrong whatever the body holds: still a 405, before the body is read
    const badJson = await get('/search', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"q": ' });
    expect(badJson.status).toBe(405);
    expect((await errorOf(badJson)).code).toBe('METHOD_NOT_ALLOWED');
  });

  test('the 31st search of a minute is 429 with Retry-After, CORS and rate-limit headers', async () => {
    const get = client();
    for (let i = 0; i < 30; i++) {
      const res = await get('/search?limit=1');
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const refused = await get('/search?limit=1', { headers: { origin: 'https://widget.example' } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(refused.headers.get('cache-control')).toBe('no-store');
    const body = await errorOf(refused);
    validate('Error', body);
    expect(body.code).toBe('TOO_MANY_REQUESTS');
    expect(body.message).toMatch(/slow down and retry shortly/);
  });
});

describe('documents and operations', () => {
  test('the reference page and the OpenAPI document are served', async () => {
    const get = client();
    const page = await get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('searchProducts');
    // The page's own script must at least be valid JavaScript.
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    expect(() => new Function(script)).not.toThrow();
    expect(doc.info.version).toBe('1.0.0');
  });

  test('/healthz, /readyz and /metrics answer at the root', async () => {
    const health = await fetch(`${stack.baseUrl}/healthz`);
    expect(await health.json()).toEqual({ status: 'ok', version: '1.0.0' });
    const ready = await fetch(`${stack.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { status: string }).status).toBe('ready');
    const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    expect(metrics).toContain('http_requests_total{method="GET",route="/api/v1/search",status_code="200"}');
  });
});

describe('requests the HTTP parser refuses', () => {
  async function raw(request: string): Promise<{ status: number; headers: string; body: string }> {
    const { port } = new URL(base);
    const net = await import('node:net');
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(request));
      let data = '';
      socket.on('data', (d) => (data += d.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => {
        const [head = '', body = ''] = data.split('\r\n\r\n');
        resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body });
      });
    });
  }

  test.each([
    ['an unknown method', 'FOO /api/v1/search HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['a raw space in the path', 'GET /api/v1/products/a b HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['a header line without a colon', 'GET /api/v1/search HTTP/1.1\r\nHost: x\r\nbroken\r\n\r\n', 400],
    ['a URL over the size limit', `GET /api/v1/search?q=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
  ])('%s gets the error object with CORS', async (_what, request, status) => {
    const res = await raw(request);
    expect(res.status).toBe(status);
    expect(res.headers).toContain('access-control-allow-origin: *');
    const body = JSON.parse(res.body) as ErrorBody;
    validate('Error', body);
    expect(body.code).toBe('BAD_REQUEST');
  });
});
