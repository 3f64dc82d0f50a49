import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Deprecations } from '../../../src/contract/deprecations.ts';
import type { OpenApiDocument } from '../../../src/http/openapi.ts';
import { projectPath } from '../../../src/util/project-file.ts';
import { LIVE_SLUGS_NEWEST_FIRST } from '../../helpers/fixtures.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { uniqueIp } from './rest-support.ts';

/**
 * Marking an operation or a parameter deprecated in one place (src/contract/deprecations.ts)
 * marks every answer that uses it, on every path that would answer it: a route of the test's
 * own, the REST routes, the reads the direct path answers beneath Fastify, the MCP read tools;
 * and the OpenAPI document says so. The service's own registry deprecates nothing.
 */
const OLD_ROUTE = { since: '2026-06-01T00:00:00Z', sunset: '2027-06-01T00:00:00Z', link: '/docs/compatibility#legacy' };
const PRODUCT = { since: '2026-09-01T00:00:00Z', sunset: '2027-09-01T00:00:00Z', link: 'https://example.test/changelog#product' };
const LABEL = { since: '2026-10-01T00:00:00Z', sunset: '2027-10-01T00:00:00Z', link: '/api/v1/docs#label' };
const deprecations: Deprecations = {
  operations: { legacyEcho: OLD_ROUTE, getProduct: PRODUCT },
  parameters: { searchProducts: { label: LABEL } },
};
const slug = LIVE_SLUGS_NEWEST_FIRST[0]!;

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({
    api: {
      deprecations,
      routes: (app) => {
        app.get('/api/v1/test-only/echo', { config: { operationId: 'legacyEcho' } }, async () => ({ echo: true }));
      },
    },
  });
});
afterAll(async () => {
  await stack?.stop();
});

const get = (path: string) => fetch(`${stack.baseUrl}${path}`, { headers: { 'x-forwarded-for': uniqueIp() } });
const marks = (res: Response) => ({ deprecation: res.headers.get('deprecation'), sunset: res.headers.get('sunset'), link: res.headers.get('link') });
const expected = (d: typeof OLD_ROUTE, link: string) => ({
  deprecation: `@${Date.parse(d.since) / 1000}`,
  sunset: new Date(d.sunset).toUTCString(),
  link: `<${link}>; rel="deprecation"; type="text/html"`,
});

describe('a deprecated operation', () => {
  test('a test-only route: Deprecation (RFC 9745), Sunset (RFC 8594) and Link rel="deprecation", the link resolved against PUBLIC_URL', async () => {
    const res = await get('/api/v1/test-only/echo');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ echo: true });
    expect(marks(res)).toEqual(expected(OLD_ROUTE, 'http://catalog.test/docs/compatibility#legacy'));
    expect(marks(res).sunset).toBe('Tue, 01 Jun 2027 00:00:00 GMT');
  });

  test('a product by slug, asked twice (the second is the kind the direct path answers), and its 404', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await get(`/api/v1/products/${slug}`);
      expect(res.status).toBe(200);
      expect(marks(res)).toEqual(expected(PRODUCT, PRODUCT.link));
      expect(res.headers.get('access-control-expose-headers')).toMatch(/Deprecation, Sunset, Link/);
    }
    const missing = await get('/api/v1/products/no-such-listing');
    expect(missing.status).toBe(404);
    expect(marks(missing)).toEqual(expected(PRODUCT, PRODUCT.link));
  });

  test('the MCP tool that reads it (get_product), and not a tool that reads something else', async () => {
    const call = (name: string, args: Record<string, unknown>) =>
      fetch(`${stack.baseUrl}/api/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-forwarded-for': uniqueIp() },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      });
    for (let i = 0; i < 2; i++) {
      const res = await call('get_product', { slug });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain(slug);
      expect(marks(res)).toEqual(expected(PRODUCT, PRODUCT.link));
    }
    const other = await call('list_categories', {});
    expect(other.status).toBe(200);
    expect(marks(other)).toEqual({ deprecation: null, sunset: null, link: null });
  });
});

describe('a deprecated parameter', () => {
  test('marks a search that uses it, twice over (cached), and not one that does not', async () => {
    for (let i = 0; i < 2; i++) {
      const used = await get('/api/v1/search?label=new');
      expect(used.status).toBe(200);
      expect(marks(used)).toEqual(expected(LABEL, 'http://catalog.test/api/v1/docs#label'));
      const unused = await get('/api/v1/search?limit=5');
      expect(unused.status).toBe(200);
      expect(marks(unused)).toEqual({ deprecation: null, sunset: null, link: null });
    }
  });
});

describe('the OpenAPI document', () => {
  test('marks the operation and the parameter deprecated, with their sunset', async () => {
    const doc = (await (await get('/api/v1/openapi.json')).json()) as OpenApiDocument;
    const product = doc.paths['/products/{slug}']!.get!;
    expect(product.deprecated).toBe(true);
    expect(product.description).toMatch(/^Deprecated since 2026-09-01; works until 2027-09-01/);
    const search = doc.paths['/search']!.get! as { deprecated?: boolean; parameters: Array<Record<string, unknown>> };
    expect(search.deprecated).toBeUndefined();
    const label = search.parameters.find((p) => p.name === 'label')!;
    expect(label).toMatchObject({ name: 'label', in: 'query', deprecated: true });
    expect(search.parameters.filter((p) => p.deprecated === true)).toHaveLength(1);
    expect(search.parameters.some((p) => typeof p.$ref === 'string' && p.$ref.endsWith('/q'))).toBe(true);
  });

  test('the committed openapi.json (the service\'s own registry) deprecates nothing', () => {
    expect(readFileSync(projectPath('openapi.json'), 'utf8')).not.toContain('"deprecated"');
  });
});
