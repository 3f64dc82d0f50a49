import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { uniqueIp } from './rest-support.ts';

/**
 * A committed write-model change reaches the REST answers: the cached search answer is dropped
 * when the projection advances, ETags change, and a listing that stops being live is gone from
 * fetch, search and counts. (Edge caches may add up to Cache-Control's s-maxage on top.)
 *
 * settle() waits for what the projector may read; when another database of the same server
 * holds a transaction open, a fresh commit may wait a little longer (transaction ids are
 * server-wide), so each check also polls until the change shows.
 */
let stack: TestStack;
let app: FastifyInstance;

beforeAll(async () => {
  stack = await startTestStack({ listen: false });
  app = stack.service.app;
});
afterAll(async () => {
  await stack?.stop();
});

/** Waits until the write-model change is visible to reads. */
async function visible(check: () => Promise<boolean>): Promise<void> {
  await stack.settle();
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error('the change is not visible yet');
    },
    { timeout: 20_000, interval: 50 },
  );
}

const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers, remoteAddress: uniqueIp() });

test('an edited listing shows in search, fetch and a new ETag; the cached search answer is replaced', async () => {
  const before = await get('/api/v1/search?category=design');
  const cached = await get('/api/v1/search?category=design');
  expect(cached.body).toBe(before.body);
  const hitsBefore = stack.service.read.cacheStats.hits;
  await get('/api/v1/search?category=design');
  expect(stack.service.read.cacheStats.hits).toBe(hitsBefore + 1);
  expect(before.body).toContain('"name":"Pixel Forge"');
  const versionBefore = stack.service.read.version;

  await stack.db.pool.query(`UPDATE catalog.listings SET name = 'Pixel Foundry', updated_at = now() WHERE slug = 'pixel-forge'`);
  await visible(async () => stack.service.read.version > versionBefore);

  const after = await get('/api/v1/search?category=design');
  expect(after.statusCode).toBe(200);
  expect(after.body).toContain('"name":"Pixel Foundry"');
  expect(after.body).not.toContain('"name":"Pixel Forge"');
  expect(after.headers.etag).not.toBe(before.headers.etag);
  // A client revalidating its old copy gets the new body, not a 304.
  const revalidated = await get('/api/v1/search?category=design', { 'if-none-match': before.headers.etag as string });
  expect(revalidated.statusCode).toBe(200);
  expect(revalidated.body).toBe(after.body);

  const product = await get('/api/v1/products/pixel-forge');
  expect(product.json().name).toBe('Pixel Foundry');
  const found = await get('/api/v1/search?q=foundry');
  expect(found.json().products.map((p: { slug: string }) => p.slug)).toEqual(['pixel-forge']);
});

test('a listing that stops being live is gone from fetch, search and the category count', async () => {
  expect((await get('/api/v1/products/type-scale')).statusCode).toBe(200);
  const categoriesBefore = await get('/api/v1/categories');
  await stack.db.pool.query(`UPDATE catalog.listings SET status = 'hidden', updated_at = now() WHERE slug = 'type-scale'`);
  await visible(async () => (await get('/api/v1/products/type-scale')).statusCode === 404);

  const gone = await get('/api/v1/products/type-scale');
  expect(gone.statusCode).toBe(404);
  expect(gone.json()).toEqual({ code: 'NOT_FOUND', message: "No live listing has the slug 'type-scale'." });
  const design = (await get('/api/v1/search?category=design')).json();
  expect(design.products.map((p: { slug: string }) => p.slug)).toEqual(['pixel-forge']);
  expect(design.total).toBe(1);
  const categories = await get('/api/v1/categories');
  expect(categories.headers.etag).not.toBe(categoriesBefore.headers.etag);
  expect(categories.json().categories.find((c: { slug: string }) => c.slug === 'design').count).toBe(1);
});

test('a listing that goes live appears first in search and answers its slug', async () => {
  expect((await get('/api/v1/products/draft-idea')).statusCode).toBe(404);
  await stack.db.pool.query(`UPDATE catalog.listings SET status = 'live', listed_at = now(), updated_at = now() WHERE slug = 'draft-idea'`);
  await visible(async () => (await get('/api/v1/products/draft-idea')).statusCode === 200);
  expect((await get('/api/v1/products/draft-idea')).statusCode).toBe(200);
  const all = (await get('/api/v1/search')).json();
  expect(all.products[0].slug).toBe('draft-idea');
  expect(all.total).toBe(7);
});
