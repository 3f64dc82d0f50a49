import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogApiError, createCatalogClient, retryDelayMs, type Mirror } from '../../clients/typescript/src/index.ts';
import { createKey } from '../../src/auth/consumer-keys/consumer-keys.ts';
import { projectPath } from '../../src/util/project-file.ts';
import { FIXTURE_IDS } from '../helpers/fixtures.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';
import { insertListing, updateListing } from '../helpers/write-model.ts';

/**
 * The typed client of clients/typescript against a running service over real HTTP: reads with a
 * consumer key, the refusals of the reference (400, 401 INVALID_KEY, 404, 410 CURSOR_EXPIRED, 429)
 * met as it says, and a mirror kept exact through writes and a cursor the feed cannot follow.
 */
let stack: TestStack;
let key: string;
let api: string;

beforeAll(async () => {
  stack = await startTestStack({ listen: true, env: { RATE_LIMIT_EXPORT_PER_MIN: '1000', RATE_LIMIT_OTHER_PER_MIN: '100000' } });
  api = `${stack.baseUrl}/api/v1`;
  key = (await createKey(stack.db.pool, { name: `client-${Date.now().toString(36)}`, limits: { search: 1000 } })).key;
  const deadline = Date.now() + 5000;
  while (!stack.service.budgets.keys.check(`Bearer ${key}`).ok) {
    if (Date.now() > deadline) throw new Error('the key did not reach the service');
    await new Promise((r) => setTimeout(r, 20));
  }
});
afterAll(async () => {
  await stack?.stop();
});

async function liveCatalog(): Promise<Map<string, unknown>> {
  const text = await (await fetch(`${api}/export`)).text();
  return new Map(text.split('\n').filter(Boolean).map((line) => [(JSON.parse(line) as { slug: string }).slug, JSON.parse(line)]));
}

describe('the typed client', () => {
  it('searches, lists categories and fetches a product with a consumer key, spending the key\'s budget', async () => {
    const seen: Array<string | null> = [];
    const client = createCatalogClient({
      baseUrl: api,
      key,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        seen.push(res.headers.get('ratelimit-policy'));
        return res;
      },
    });
    const page = await client.search({ limit: 2 });
    expect(page.products).toHaveLength(2);
    expect(page.limit).toBe(2);
    expect(seen[0]).toBe('"search";q=1000;w=60');
    const categories = await client.categories();
    expect(categories.length).toBeGreaterThan(0);
    const product = await client.product(page.products[0]!.slug);
    expect(product).toEqual(page.products[0]);
  });

  it('meets 400, 401 INVALID_KEY and 404 as refusals it does not retry', async () => {
    let calls = 0;
    const counting = (k?: string) =>
      createCatalogClient({ baseUrl: api, ...(k && { key: k }), fetch: (input, init) => (calls++, fetch(input, init)) });
    await expect(counting().search({ limit: 500 })).rejects.toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    await expect(counting(`ck_${'a'.repeat(40)}`).search()).rejects.toMatchObject({ status: 401, code: 'INVALID_KEY' });
    await expect(counting().product('no-such-listing')).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    await expect(counting().changes('ffffffff-1')).rejects.toMatchObject({ status: 410, code: 'CURSOR_EXPIRED' });
    expect(calls).toBe(4);
  });

  it('meets 429: retries after Retry-After, and reports it once its retries are spent', async () => {
    const tight = (await createKey(stack.db.pool, { name: `client-tight-${Date.now().toString(36)}`, limits: { search: 1 } })).key;
    while (!stack.service.budgets.keys.check(`Bearer ${tight}`).ok) await new Promise((r) => setTimeout(r, 20));
    const refused: Response[] = [];
    const client = createCatalogClient({
      baseUrl: api,
      key: tight,
      maxRetries: 0,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (res.status === 429) refused.push(res.clone());
        return res;
      },
    });
    await client.search();
    const err = await client.search().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CatalogApiError);
    expect((err as CatalogApiError).code).toBe('TOO_MANY_REQUESTS');
    const retryAfter = Number(refused[0]!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    // The wait before the next try is Retry-After, plus jitter.
    expect(retryDelayMs(refused[0]!, 1, 120_000, () => 0)).toBe(retryAfter * 1000);
    expect(retryDelayMs(refused[0]!, 1, 120_000, () => 0.99)).toBeGreaterThan(retryAfter * 1000);
  });

  it('keeps a mirror equal to the live catalog through writes, and exports again when its cursor expires', async () => {
    const client = createCatalogClient({ baseUrl: api, key });
    let mirror: Mirror | undefined;
    const equal = async () => {
      await stack.settle();
      const live = await liveCatalog();
      await expect.poll(() => new Map(mirror!.products), { timeout: 20_000, interval: 100 }).toEqual(live);
    };
    try {
      mirror = client.mirror({ wait: 1 });
      await equal();
      expect(mirror.exports).toBe(1);
      await updateListing(stack.db.pool, FIXTURE_IDS['deploy-kite']!, { slug: 'deploy-kite-client' });
      await updateListing(stack.db.pool, FIXTURE_IDS['note-garden']!, { status: 'hidden' });
      await insertListing(stack.db.pool, { slug: 'typed-client-newcomer' });
      await equal();
      expect(mirror.products.has('typed-client-newcomer')).toBe(true);
      expect(mirror.exports).toBe(1);
    } finally {
      await mirror?.stop();
    }
    // A cursor the feed cannot follow (another catalog's): CURSOR_EXPIRED, then a new export.
    const head = ((await (await fetch(`${api}/changes`)).json()) as { cursor: string }).cursor;
    const foreign = `${head.startsWith('ffffffff') ? '00000000' : 'ffffffff'}-1`;
    const stale = { ...(await client.product('pixel-forge')), slug: 'stale-listing' };
    try {
      mirror = client.mirror({ wait: 1, from: { cursor: foreign, products: [stale] } });
      await equal();
      expect(mirror.exports).toBe(1);
      expect(mirror.cursor).not.toBe(foreign);
    } finally {
      await mirror.stop();
    }
  });

  it('packs into a package ready to publish: its build, types and README, nothing else', () => {
    const dir = path.dirname(projectPath('clients/typescript/package.json'));
    const out = execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    // The build's own lines come first; the pack's JSON follows.
    const [pack] = JSON.parse(out.slice(out.search(/^\[/m))) as Array<{ name: string; files: Array<{ path: string }> }>;
    expect(pack!.name).toBe('@catalog/client');
    expect(pack!.files.map((f) => f.path).sort()).toEqual(['README.md', 'dist/index.d.ts', 'dist/index.js', 'dist/openapi.d.ts', 'package.json']);
  });
});
