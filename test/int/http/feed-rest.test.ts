import zlib from 'node:zlib';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { pruneChanges } from '../../../projector/change-log.ts';
import { PROJECTION_WRITE_LOCK } from '../../../src/db/locks.ts';
import { withTransaction } from '../../../src/db/pool.ts';
import { buildOpenApiDocument } from '../../../src/http/openapi.ts';
import { createChangeFeed } from '../../../src/read/change-feed.ts';
import { createProjectionMirror } from '../../../src/read/projection-mirror.ts';
import { startService } from '../../../src/service.ts';
import { applyChanges, logHead, positionOf, type ChangePageBody } from '../../helpers/change-feed.ts';
import { FIXTURE_IDS, LIVE_SLUGS_NEWEST_FIRST } from '../../helpers/fixtures.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { insertListing, insertListings, updateListing } from '../../helpers/write-model.ts';
import { responseValidators, uniqueIp } from './rest-support.ts';

/**
 * GET /api/v1/export and GET /api/v1/changes on the fixture catalog: the export's lines, order,
 * headers, tags, codings and budget; the feed's answers, parameters, expired cursors, long
 * polls, and its promise never to announce what this process cannot show yet.
 */
let stack: TestStack;
let app: FastifyInstance;
let validate: ReturnType<typeof responseValidators>;

beforeAll(async () => {
  stack = await startTestStack({ listen: true });
  app = stack.service.app;
  validate = responseValidators(buildOpenApiDocument({ publicUrl: 'http://catalog.test', searchPerMinute: 30, otherPerMinute: 60 }));
});
afterAll(async () => {
  await stack?.stop();
});

function get(url: string, headers: Record<string, string> = {}, ip = uniqueIp()): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url, headers, remoteAddress: ip });
}

const lines = (body: string) => body.split('\n').filter((l) => l !== '');

async function page(query: string, ip?: string): Promise<ChangePageBody> {
  const res = await get(`/api/v1/changes?${query}`, {}, ip);
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as ChangePageBody;
  const ok = validate('ChangePage')(body);
  expect(ok, JSON.stringify(validate('ChangePage').errors)).toBe(true);
  return body;
}

async function settleAndSync(): Promise<void> {
  await stack.settle();
}

describe('GET /api/v1/export', () => {
  test('every live listing, newest first, one per line, each byte for byte what /products/{slug} answers', async () => {
    const res = await get('/api/v1/export');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers.vary).toBe('Accept-Encoding, Authorization');
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    expect(res.headers['catalog-cursor']).toMatch(/^[0-9a-f]{8}-\d+$/);
    expect(res.headers['x-ratelimit-limit']).toBe('6');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(String(res.headers['access-control-expose-headers'])).toContain('Catalog-Cursor');
    expect(res.body.endsWith('\n')).toBe(true);
    const exported = lines(res.body);
    expect(exported.map((l) => (JSON.parse(l) as { slug: string }).slug)).toEqual([...LIVE_SLUGS_NEWEST_FIRST]);
    for (const line of exported) {
      const slug = (JSON.parse(line) as { slug: string }).slug;
      expect(line).toBe((await get(`/api/v1/products/${slug}`)).body);
      expect(validate('Product')(JSON.parse(line))).toBe(true);
    }
    // The order is the search's.
    const search = (await get('/api/v1/search?limit=50')).json() as { products: Array<{ slug: string }> };
    expect(search.products.map((p) => p.slug)).toEqual([...LIVE_SLUGS_NEWEST_FIRST]);
  });

  test('the same catalog has the same tag, here and on another API process; If-None-Match is a 304', async () => {
    const first = await get('/api/v1/export');
    const again = await get('/api/v1/export');
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['catalog-cursor']).toBe(first.headers['catalog-cursor']);

    const other = await startService(stack.service.config, { projector: false, demo: false, listen: false, logger: pino({ level: 'silent' }) });
    try {
      const there = await other.app.inject({ url: '/api/v1/export', remoteAddress: uniqueIp() });
      expect(there.headers.etag).toBe(first.headers.etag);
      expect(there.headers['catalog-cursor']).toBe(first.headers['catalog-cursor']);
      expect(there.body).toBe(first.body);
    } finally {
      await other.close();
    }

    const notModified = await get('/api/v1/export', { 'if-none-match': String(first.headers.etag) });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.body).toBe('');
    expect(notModified.headers.etag).toBe(first.headers.etag);
    expect(notModified.headers['catalog-cursor']).toBe(first.headers['catalog-cursor']);
    expect(notModified.headers['x-ratelimit-remaining']).toBe('5');
    // A tag of any coding names the same catalog.
    const gz = await get('/api/v1/export', { 'accept-encoding': 'gzip' });
    expect((await get('/api/v1/export', { 'if-none-match': String(gz.headers.etag) })).statusCode).toBe(304);
    expect((await get('/api/v1/export', { 'if-none-match': `"other", ${String(first.headers.etag)}` })).statusCode).toBe(304);
    expect((await get('/api/v1/export', { 'if-none-match': '"something-else"' })).statusCode).toBe(200);

    await updateListing(stack.db.pool, FIXTURE_IDS['note-garden']!, { punchline: 'Changed for a new tag' });
    await settleAndSync();
    const changed = await get('/api/v1/export', { 'if-none-match': String(first.headers.etag) });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(first.headers.etag);
    expect(positionOf(String(changed.headers['catalog-cursor']))).toBeGreaterThan(positionOf(String(first.headers['catalog-cursor'])));
  });

  test('compressed with br or gzip when asked: the same lines once decoded, each coding with its own tag', async () => {
    const plain = await get('/api/v1/export');
    const br = await get('/api/v1/export', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.rawPayload).toString('utf8')).toBe(plain.body);
    const gzip = await get('/api/v1/export', { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gzip.rawPayload).toString('utf8')).toBe(plain.body);
    expect(new Set([plain.headers.etag, br.headers.etag, gzip.headers.etag]).size).toBe(3);
    for (const res of [br, gzip]) {
      expect(res.headers['catalog-cursor']).toBe(plain.headers['catalog-cursor']);
      expect(res.headers.vary).toBe('Accept-Encoding, Authorization');
    }
  });

  test('streams over a real connection, decoded by an ordinary client', async () => {
    const res = await fetch(`${stack.baseUrl}/api/v1/export`, { headers: { 'accept-encoding': 'br', 'x-forwarded-for': uniqueIp() } });
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const body = await res.text();
    expect(lines(body).map((l) => (JSON.parse(l) as { slug: string }).slug)).toEqual(
      lines((await get('/api/v1/export')).body).map((l) => (JSON.parse(l) as { slug: string }).slug),
    );
  });

  test('HEAD: the same headers, no body', async () => {
    const res = await app.inject({ method: 'HEAD', url: '/api/v1/export', remoteAddress: uniqueIp() });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expect(res.headers['catalog-cursor']).toMatch(/^[0-9a-f]{8}-\d+$/);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
  });

  test('GET only: other methods on the export and the feed are 405', async () => {
    for (const url of ['/api/v1/export', '/api/v1/changes']) {
      const res = await app.inject({ method: 'POST', url, remoteAddress: uniqueIp() });
      expect(res.statusCode, url).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
      expect(res.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED' });
    }
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/api/v1/changes',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
      remoteAddress: uniqueIp(),
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['x-ratelimit-limit']).toBeUndefined();
  });

  test('takes no parameters: any one given is a 400 naming it', async () => {
    const res = await get('/api/v1/export?since=abc&format=csv');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      code: 'BAD_REQUEST',
      message: "Invalid request: 'since', 'format' were rejected; see data.issues.",
      data: {
        issues: [
          { path: ['since'], message: 'is not a known parameter' },
          { path: ['format'], message: 'is not a known parameter' },
        ],
      },
    });
  });

  test('has its own budget: 6 a minute per IP, then 429 with Retry-After; other calls unaffected', async () => {
    const ip = uniqueIp();
    for (let i = 1; i <= 6; i++) {
      const res = await get('/api/v1/export', {}, ip);
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(6 - i));
      expect(res.headers['ratelimit-policy']).toBe('"export";q=6;w=60');
    }
    const refused = await get('/api/v1/export', {}, ip);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.headers.etag).toBeUndefined();
    const other = await get('/api/v1/categories', {}, ip);
    expect(other.statusCode).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('59');
    const feed = await get('/api/v1/changes', {}, ip);
    expect(feed.statusCode).toBe(200);
    expect(feed.headers['ratelimit-policy']).toBe('"changes";q=120;w=60');
    expect(feed.headers['x-ratelimit-remaining']).toBe('119');
  });
});

describe('GET /api/v1/changes', () => {
  test('without since: the head, with no changes; the same position as the export', async () => {
    const exported = await get('/api/v1/export');
    const body = await page('');
    expect(body).toEqual({ changes: [], cursor: exported.headers['catalog-cursor'] });
    const res = await get('/api/v1/changes');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-ratelimit-limit']).toBe('120');
  });

  test('export + the changes after its cursor = the live catalog: renames, leavers, newcomers, edits', async () => {
    const exported = await get('/api/v1/export');
    const copy = new Map(lines(exported.body).map((l) => [(JSON.parse(l) as { slug: string }).slug, l]));
    const since = String(exported.headers['catalog-cursor']);
    expect(await page(`since=${since}`)).toEqual({ changes: [], cursor: since });

    await updateListing(stack.db.pool, FIXTURE_IDS['deploy-kite']!, { slug: 'deploy-kite-2' });
    await updateListing(stack.db.pool, FIXTURE_IDS['query-pilot']!, { status: 'hidden' });
    await updateListing(stack.db.pool, FIXTURE_IDS['hidden-gem']!, { status: 'live' });
    await updateListing(stack.db.pool, FIXTURE_IDS['nullish-widget']!, { name: 'Nullish Widget Renamed' });
    await insertListing(stack.db.pool, { slug: 'brand-new-listing' });
    await settleAndSync();

    // One at a time, each continuing from the last.
    const seen: ChangePageBody['changes'] = [];
    let cursor = since;
    for (;;) {
      const one = await page(`since=${cursor}&limit=1`);
      expect(one.changes.length).toBeLessThanOrEqual(1);
      if (one.changes.length === 0) {
        expect(one.cursor).toBe(cursor);
        break;
      }
      expect(one.cursor).toBe(one.changes[0]!.cursor);
      expect(positionOf(one.cursor)).toBe(positionOf(cursor) + 1);
      seen.push(...one.changes);
      cursor = one.cursor;
    }
    // All at once: the same changes.
    const all = await page(`since=${since}&limit=1000`);
    expect(all.changes).toEqual(seen);
    expect(all.cursor).toBe(cursor);
    expect(seen.map((c) => [c.op, c.slug])).toEqual(
      expect.arrayContaining([
        ['delete', 'deploy-kite'],
        ['upsert', 'deploy-kite-2'],
        ['delete', 'query-pilot'],
        ['upsert', 'hidden-gem'],
        ['upsert', 'nullish-widget'],
        ['upsert', 'brand-new-listing'],
      ]),
    );
    for (const c of seen) expect(c.product === null).toBe(c.op === 'delete');

    applyChanges(
      copy,
      seen.map((c) => ({ op: c.op, slug: c.slug, doc: c.product && JSON.stringify(c.product) })),
    );
    const live = lines((await get('/api/v1/export')).body);
    expect(new Map(live.map((l) => [(JSON.parse(l) as { slug: string }).slug, l]))).toEqual(copy);
    for (const [slug, doc] of copy) expect((await get(`/api/v1/products/${slug}`)).body).toBe(doc);
    expect(String((await get('/api/v1/export')).headers['catalog-cursor'])).toBe(cursor);
  });

  test('rejects bad parameters with 400 naming each one', async () => {
    const cases: Array<[string, string[]]> = [
      ['since=nope', ['since']],
      ['since=', ['since']],
      ['limit=0', ['limit']],
      ['limit=1001', ['limit']],
      ['wait=31', ['wait']],
      ['wait=-1', ['wait']],
      ['limit=10&limit=20', ['limit']],
      ['since=00000000-1&since=00000000-2', ['since']],
      ['from=1', ['from']],
      ['since=bad&wait=x&extra=1', ['since', 'wait', 'extra']],
    ];
    for (const [query, names] of cases) {
      const res = await get(`/api/v1/changes?${query}`);
      expect(res.statusCode, query).toBe(400);
      const body = res.json() as { code: string; data: { issues: Array<{ path: string[] }> } };
      expect(body.code).toBe('BAD_REQUEST');
      expect(body.data.issues.map((i) => i.path[0]), query).toEqual(names);
      expect(res.headers['cache-control']).toBe('no-store');
    }
    for (const query of ['limit=1', 'limit=1000', 'wait=0']) expect((await get(`/api/v1/changes?${query}`)).statusCode, query).toBe(200);
  });

  test('a cursor it cannot continue is 410 CURSOR_EXPIRED: pruned, from another catalog, from a history rewound', async () => {
    const head = String((await page('')).cursor);
    const log = head.slice(0, head.indexOf('-'));
    const otherLog = log === 'ffffffff' ? '00000000' : 'ffffffff';
    const expired = async (cursor: string, reason: RegExp) => {
      const res = await get(`/api/v1/changes?since=${cursor}&wait=1`);
      expect(res.statusCode, cursor).toBe(410);
      const body = res.json() as { code: string; message: string };
      expect(Object.keys(body).sort()).toEqual(['code', 'message']);
      expect(body.code).toBe('CURSOR_EXPIRED');
      expect(body.message).toMatch(reason);
      expect(body.message).toMatch(/Export the catalog again/);
      expect(res.headers['cache-control']).toBe('no-store');
    };
    await expired(`${otherLog}-1`, /another change feed/);
    await expired(`${log}-${positionOf(head) + 1000}`, /ahead of the change feed/);

    // The first changes are older than the retention and pruned: their cursors are gone, the rest stay.
    await stack.db.pool.query(`UPDATE projection.changes SET changed_at = now() - interval '8 days' WHERE position <= 3`);
    await withTransaction(stack.db.pool, async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1)', [PROJECTION_WRITE_LOCK]);
      expect(await pruneChanges(c, 7 * 24)).toBe(3);
    });
    await expired(`${log}-0`, /older than the changes the feed still holds \(it keeps them 7 days\)/);
    await expired(`${log}-2`, /older than the changes/);
    const fromThree = await page(`since=${log}-3&limit=1`);
    expect(fromThree.changes[0]!.cursor).toBe(`${log}-4`);
  });

  test('a long poll answers as soon as a change arrives, and counts once against the budget', async () => {
    const ip = uniqueIp();
    const { cursor } = await page('', ip);
    const polling = get(`/api/v1/changes?since=${cursor}&wait=30`, {}, ip);
    await new Promise((r) => setTimeout(r, 300));
    await updateListing(stack.db.pool, FIXTURE_IDS['pixel-forge']!, { punchline: 'Arrives during a long poll' });
    const res = await polling;
    expect(res.statusCode).toBe(200);
    const body = res.json() as ChangePageBody;
    expect(body.changes.map((c) => [c.op, c.slug])).toEqual([['upsert', 'pixel-forge']]);
    expect(body.changes[0]!.product).toMatchObject({ punchline: 'Arrives during a long poll' });
    expect(res.headers['x-ratelimit-remaining']).toBe('118');
    expect((await get('/api/v1/products/pixel-forge')).json()).toMatchObject({ punchline: 'Arrives during a long poll' });
  });

  test('a long poll with nothing new answers when wait runs out: no changes, the same cursor', async () => {
    const { cursor } = await page('');
    expect(await page(`since=${cursor}&wait=1`)).toEqual({ changes: [], cursor });
  });

  test('never announces a change before this process can show it', async () => {
    // A mirror that is told of nothing (not started: no notification, no poll) stays where it was read.
    const mirror = createProjectionMirror({ pool: stack.db.pool, connectionString: stack.db.url });
    await mirror.refresh();
    const feed = createChangeFeed({ pool: stack.db.pool, mirror, retentionHours: 168 });
    const at = mirror.head;
    await updateListing(stack.db.pool, FIXTURE_IDS['type-scale']!, { punchline: 'Not shown here yet' });
    await stack.settle();
    expect(await logHead(stack.db.pool)).toBeGreaterThan(at.position);
    const since = `${at.log}-${at.position}`;
    expect(JSON.parse((await feed.changes({ since, limit: 100, wait: 0 })).body)).toEqual({ changes: [], cursor: since });
    expect(mirror.productBySlug('type-scale')?.bytes.toString()).not.toContain('Not shown here yet');
    // A cursor from a process further ahead waits for this one, rather than failing.
    const ahead = `${at.log}-${await logHead(stack.db.pool)}`;
    expect(JSON.parse((await feed.changes({ since: ahead, limit: 100, wait: 0 })).body)).toEqual({ changes: [], cursor: ahead });
    const waiting = feed.changes({ since, limit: 100, wait: 30 });
    await mirror.refresh();
    const answer = JSON.parse((await waiting).body) as ChangePageBody;
    expect(answer.changes.map((c) => c.slug)).toEqual(['type-scale']);
    expect(mirror.productBySlug('type-scale')?.bytes.toString()).toBe(JSON.stringify(answer.changes[0]!.product));
    await mirror.stop();
  });

  test('an answer stops growing at 8 MB of products, and the rest follows from its cursor', async () => {
    const { cursor: since } = await page('');
    const big = `<p>${'word '.repeat(19_990)}</p>`;
    await insertListings(
      stack.db.pool,
      Array.from({ length: 90 }, (_, i) => ({ slug: `large-listing-${i}`, description: big })),
    );
    await stack.settle();
    const first = await page(`since=${since}&limit=1000`);
    expect(first.changes.length).toBeGreaterThan(50);
    expect(first.changes.length).toBeLessThan(90);
    expect(JSON.stringify(first.changes).length).toBeLessThan(8.5 * 1024 * 1024);
    const rest = await page(`since=${first.cursor}&limit=1000`);
    expect(first.changes.length + rest.changes.length).toBe(90);
    expect(positionOf(rest.changes[0]!.cursor)).toBe(positionOf(first.cursor) + 1);
  });

  test('a long poll ends at once, with what there is, when the server closes', async () => {
    const other = await startService(stack.service.config, { projector: false, demo: false, listen: true, logger: pino({ level: 'silent' }) });
    let closed = false;
    try {
      const { cursor } = (await (await fetch(`${other.url}/api/v1/changes`)).json()) as ChangePageBody;
      const polling = fetch(`${other.url}/api/v1/changes?since=${cursor}&wait=30`);
      await new Promise((r) => setTimeout(r, 300));
      const closing = other.close().then(() => (closed = true));
      const res = await polling;
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ changes: [], cursor });
      await closing;
    } finally {
      if (!closed) await other.close();
    }
  });
});
