import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createProjector } from '../../../projector/projector.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { uniqueIp } from './rest-support.ts';

/**
 * /healthz, /readyz and /metrics: outside /api, outside the budgets, never cacheable.
 *
 * Other databases on the same PostgreSQL server may hold transactions open while these tests
 * run, and transaction ids are server-wide: outbox rows may then wait a moment before the
 * projector may read them. Lag figures are therefore checked for shape, not for zero, and
 * waits poll until the expected state instead of assuming it.
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

function metricValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, attempts = 300): Promise<T> {
  let last = await probe();
  for (let i = 0; i < attempts && !ok(last); i++) {
    await new Promise((r) => setTimeout(r, 100));
    last = await probe();
  }
  return last;
}

test('/healthz answers while the process is up, with the version it runs', async () => {
  const res = await app.inject({ url: '/healthz' });
  expect(res.statusCode).toBe(200);
  const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  expect(version).toMatch(/^\d+\.\d+\.\d+/);
  expect(res.json()).toEqual({ status: 'ok', version });
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['access-control-allow-origin']).toBeUndefined();
});

test('/readyz is 200 with each check when the database answers and the projection is caught up', async () => {
  const res = await app.inject({ url: '/readyz' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  const body = res.json();
  expect(body.status).toBe('ready');
  expect(body.checks.database).toEqual({ ok: true });
  expect(body.checks.projector.ok).toBe(true);
  expect(body.checks.projection_mirror.ok).toBe(true);
});

describe('/metrics', () => {
  test('exposes process, request, cache and projection metrics in the Prometheus format', async () => {
    const ip = uniqueIp();
    await app.inject({ url: '/api/v1/search?tag=ai', remoteAddress: ip });
    await app.inject({ url: '/api/v1/search?tag=ai', remoteAddress: ip });
    await app.inject({ url: '/api/v1/products/nope', remoteAddress: ip });
    const res = await app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers['cache-control']).toBe('no-store');
    const text = res.body;
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    expect(metricValue(text, 'http_requests_total{method="GET",route="/api/v1/search",status_code="200"}')).toBeGreaterThanOrEqual(2);
    expect(metricValue(text, 'http_requests_total{method="GET",route="/api/v1/products/:slug",status_code="404"}')).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'http_request_duration_seconds_count{method="GET",route="/api/v1/search"}')).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/v1\/search"\} \d+$/m);
    const stats = stack.service.read.cacheStats;
    expect(metricValue(text, 'catalog_response_cache_hits_total')).toBe(stats.hits);
    expect(metricValue(text, 'catalog_response_cache_misses_total')).toBe(stats.misses);
    expect(stats.hits).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'catalog_rate_limit_rejections_total{bucket="search"}')).toBe(0);
    expect(metricValue(text, 'catalog_rate_limit_rejections_total{bucket="other"}')).toBe(0);
    expect(metricValue(text, 'catalog_live_listings')).toBe(7);
    expect(metricValue(text, 'catalog_projection_version')).toBe(stack.service.read.version);
    expect(metricValue(text, 'catalog_change_feed_position')).toBe(stack.service.mirror.head.position);
    expect(stack.service.mirror.head.position).toBeGreaterThanOrEqual(7);
    for (const bucket of ['export', 'changes']) expect(metricValue(text, `catalog_rate_limit_rejections_total{bucket="${bucket}"}`)).toBe(0);
    expect(metricValue(text, 'catalog_projection_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(Number.isInteger(metricValue(text, 'catalog_projection_unprojected_rows'))).toBe(true);
    expect(metricValue(text, 'catalog_projection_unprojected_rows')).toBeGreaterThanOrEqual(0);
    expect(metricValue(text, 'catalog_projection_mirror_age_seconds')).toBeGreaterThanOrEqual(0);
  });

  test('times each change it applies in two stages: commit → projected, projected → applied', async () => {
    const count = (text: string, stage: string) => metricValue(text, `catalog_projection_delivery_seconds_count{stage="${stage}"}`) ?? 0;
    const before = (await app.inject({ url: '/metrics' })).body;
    const { rows } = await stack.db.pool.query<{ slug: string }>(`SELECT slug FROM catalog.listings WHERE status = 'live' ORDER BY slug LIMIT 1`);
    await stack.db.pool.query(`UPDATE catalog.listings SET punchline = punchline || ' (timed)' WHERE slug = $1`, [rows[0]!.slug]);
    const after = await until(
      async () => (await app.inject({ url: '/metrics' })).body,
      (text) => count(text, 'applied') > count(before, 'applied'),
    );
    for (const stage of ['projected', 'applied']) {
      expect(count(after, stage), stage).toBeGreaterThan(count(before, stage));
      expect(metricValue(after, `catalog_projection_delivery_seconds_sum{stage="${stage}"}`), stage).toBeGreaterThanOrEqual(0);
      expect(after).toMatch(new RegExp(`^catalog_projection_delivery_seconds_bucket\\{le="0\\.25",stage="${stage}"\\} \\d+$`, 'm'));
    }
  });

  test('operations endpoints are not rate limited and carry no rate-limit headers', async () => {
    for (let i = 0; i < 65; i++) {
      const res = await app.inject({ url: '/metrics', remoteAddress: '10.9.9.9' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});

test('/readyz is 503 and the lag shows in /metrics while committed changes wait for the projector', async () => {
  // A service of its own with a 1-second readiness budget. Its projector stops, so a committed
  // change waits in the outbox. (Holding the projector back with an open transaction instead
  // would hold back every database of the server.)
  const lagging = await startTestStack({ listen: false, env: { READY_MAX_LAG_SECONDS: '1' } });
  const lapp = lagging.service.app;
  const projector = createProjector({ connectionString: lagging.db.url, siteUrl: lagging.service.config.siteUrl, pollMs: 100 });
  try {
    await lagging.service.projector!.stop();
    await lagging.db.pool.query(`UPDATE catalog.listings SET punchline = 'Held back', updated_at = now() WHERE slug = 'note-garden'`);

    const res = await until(
      () => lapp.inject({ url: '/readyz' }),
      (r) => r.statusCode === 503,
    );
    expect(res.statusCode).toBe(503);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body.status).toBe('not_ready');
    expect(body.checks.projector.ok).toBe(false);
    expect(body.checks.projector.detail).toMatch(/^\d+ changes waiting, oldest \d+\.\d s$/);
    expect(body.checks.database.ok).toBe(true);

    const metrics = (await lapp.inject({ url: '/metrics' })).body;
    expect(metricValue(metrics, 'catalog_projection_unprojected_rows')).toBeGreaterThanOrEqual(1);
    expect(metricValue(metrics, 'catalog_projection_lag_seconds')).toBeGreaterThan(1);

    // A projector taking over catches up, and the service is ready again.
    await projector.start();
    const caughtUp = await until(
      () => lapp.inject({ url: '/api/v1/products/note-garden', remoteAddress: uniqueIp() }),
      (r) => r.json().punchline === 'Held back',
    );
    expect(caughtUp.json().punchline).toBe('Held back');
    const ready = await until(
      () => lapp.inject({ url: '/readyz' }),
      (r) => r.statusCode === 200,
    );
    expect(ready.statusCode).toBe(200);
  } finally {
    await projector.stop();
    await lagging.stop();
  }
});
