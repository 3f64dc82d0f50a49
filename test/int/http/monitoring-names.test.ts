import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestStack, type TestStack } from '../../helpers/stack.ts';
import { alertRules, dashboardExprs, exposedNames, grafanaToPromql, metricNames, SCRAPE_SERIES } from '../../helpers/monitoring.ts';
import { skipWithoutRedisServer, startTestRedis, type RedisServer } from '../../helpers/redis.ts';

/**
 * deploy/: every metric an alert rule or a dashboard panel names is one a running service
 * exports at /metrics, so a renamed metric cannot leave an alert that never fires.
 */
describe('metric names in PromQL', () => {
  it('finds the selectors of an expression, not its functions, labels or keywords', () => {
    const expr =
      'sum by (route) (rate(http_requests_total{status_code=~"5.."}[5m])) / ignoring (x) ' +
      'histogram_quantile(0.9, sum by (le) (rate(foo_seconds_bucket[5m]))) > bool up offset 5m and on (job) {__name__="bar"}';
    expect([...metricNames(expr)].sort()).toEqual(['bar', 'foo_seconds_bucket', 'http_requests_total', 'up']);
  });

  it('refuses what is not PromQL', () => {
    expect(() => metricNames('sum(rate(http_requests_total[5m])')).toThrow(/not PromQL/);
    expect(() => metricNames('rate(foo[$__rate_interval])')).toThrow(/not PromQL/);
  });

  it("reads a Grafana query with its variables filled in", () => {
    expect(grafanaToPromql('rate(foo{instance=~"$instance",job="${job}"}[$__rate_interval])')).toBe('rate(foo{instance=~".*",job=".*"}[5m])');
  });

  it('reads the names an exposition declares and samples', () => {
    const names = exposedNames(
      ['# HELP a_seconds x', '# TYPE a_seconds histogram', '# TYPE b_total counter', 'b_total{x="1"} 3', 'c 1', ''].join('\n'),
    );
    expect([...names].sort()).toEqual(['a_seconds', 'a_seconds_bucket', 'a_seconds_count', 'a_seconds_sum', 'b_total', 'c']);
  });
});

// The Redis gauge exists only with a Redis: the service runs on a redis-server of the file's own.
describe.skipIf(skipWithoutRedisServer('the check of the metric names deploy/ uses'))('deploy/ names only metrics the service exports', () => {
  let redis: RedisServer | undefined;
  let stack: TestStack;
  let exposed: Set<string>;

  beforeAll(async () => {
    redis = await startTestRedis();
    stack = await startTestStack({ env: { REDIS_URL: redis.url } });
    // A request before the scrape, so the request metrics have a series of their own.
    const warm = await fetch(`${stack.baseUrl}/api/v1/search?q=lamp`);
    expect(warm.status, await warm.text()).toBe(200);
    const res = await fetch(`${stack.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    exposed = exposedNames(await res.text());
  });

  afterAll(async () => {
    await stack?.stop();
    await redis?.stop();
  });

  it('exports the gauges the rules need, with values', async () => {
    const text = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    expect(text).toMatch(/^catalog_readiness_check\{check="database"\} 1$/m);
    expect(text).toMatch(/^catalog_redis_up 1$/m);
    // This stack's own projector holds its leadership session.
    expect(text).toMatch(/^catalog_projector_sessions 1$/m);
    expect(text).toMatch(/^catalog_snapshot_age_seconds \d/m);
    expect(text).toMatch(/^catalog_snapshot_versions_behind \d/m);
    expect(text).toMatch(/^catalog_change_feed_retained_changes \d/m);
  });

  it('every alert rule names exported metrics', () => {
    const rules = alertRules();
    expect(rules.length).toBeGreaterThan(5);
    const missing = rules.flatMap(({ alert, expr }) =>
      [...metricNames(expr)].filter((name) => !exposed.has(name) && !SCRAPE_SERIES.has(name)).map((name) => `${alert}: ${name}`),
    );
    expect(missing).toEqual([]);
  });

  it('every dashboard panel names exported metrics', () => {
    const exprs = dashboardExprs();
    expect(exprs.length).toBeGreaterThan(10);
    const missing = exprs.flatMap(({ panel, expr }) =>
      [...metricNames(expr)].filter((name) => !exposed.has(name) && !SCRAPE_SERIES.has(name)).map((name) => `${panel}: ${name}`),
    );
    expect(missing).toEqual([]);
  });
});

describe('the Redis gauge', () => {
  it('reads 0 while the Redis at REDIS_URL does not answer, and the service still serves', async () => {
    // A loopback port nothing listens on.
    const stack = await startTestStack({ env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` } });
    try {
      expect((await fetch(`${stack.baseUrl}/api/v1/search?q=lamp`)).status).toBe(200);
      const text = await (await fetch(`${stack.baseUrl}/metrics`)).text();
      expect(text).toMatch(/^catalog_redis_up 0$/m);
      expect(text).toMatch(/^catalog_readiness_check\{check="database"\} 1$/m);
    } finally {
      await stack.stop();
    }
  });
});
