import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestDurations } from '../../../src/http/request-durations.ts';

const NAME = 'http_request_duration_seconds';
const HELP = 'Time from receiving a request to finishing its answer, by method and route pattern.';
const BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

function pair() {
  const ours = new Registry();
  const theirs = new Registry();
  const durations = new RequestDurations(NAME, HELP, BOUNDS, ours);
  const histogram = new Histogram({ name: NAME, help: HELP, labelNames: ['method', 'route'] as const, buckets: BOUNDS, registers: [theirs] });
  return { ours, theirs, durations, histogram };
}

const labels = fc.record({
  method: fc.constantFrom('GET', 'POST', 'HEAD'),
  // Route patterns, with the characters the exposition format escapes.
  route: fc.constantFrom('/api/v1/products/:slug', '/api/v1/search', '/api/v1/categories', '/q"uoted', 'back\\slash', 'new\nline', 'unknown'),
});
// Exact bounds, values either side of them, zero, tiny and huge.
const seconds = fc.oneof(fc.constantFrom(0, ...BOUNDS, 5.000001, 1e-9, 1e6), fc.double({ min: 0, max: 20, noNaN: true }));

describe('request durations', () => {
  it('renders as prom-client’s Histogram renders the same observations, through the registry', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(labels, seconds, fc.boolean()), { maxLength: 200 }), async (observations) => {
        const { ours, theirs, durations, histogram } = pair();
        const kept = new Map<string, ReturnType<RequestDurations['series']>>();
        for (const [l, s, viaSeries] of observations) {
          histogram.observe(l, s);
          if (viaSeries) {
            const key = `${l.method} ${l.route}`;
            if (!kept.has(key)) kept.set(key, durations.series(l));
            kept.get(key)!.observe(s);
          } else {
            durations.observe(l, s);
          }
        }
        expect(await ours.metrics()).toBe(await theirs.metrics());
        // The JSON form too, less prom-client's empty exemplar slots.
        const withoutExemplars = (json: unknown) => JSON.parse(JSON.stringify(json, (k, v: unknown) => (k === 'exemplar' && v == null ? undefined : v)));
        expect(withoutExemplars(await ours.getMetricsAsJSON())).toEqual(withoutExemplars(await theirs.getMetricsAsJSON()));
      }),
      { numRuns: 300 },
    );
  });

  it('lists a label set once it is observed, not when its series is taken', async () => {
    const { ours, durations } = pair();
    const search = durations.series({ method: 'GET', route: '/api/v1/search' });
    durations.series({ method: 'GET', route: '/api/v1/products/:slug' });
    expect(await ours.metrics()).not.toContain('_count{');
    search.observe(0.002);
    const text = await ours.metrics();
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.001",method="GET",route="/api/v1/search"} 0');
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.0025",method="GET",route="/api/v1/search"} 1');
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/api/v1/search"} 1');
    expect(text).not.toContain('products');
  });

  it('forgets everything on reset, as prom-client does, and lists a series again once observed', async () => {
    const { ours, theirs, durations, histogram } = pair();
    const kept = durations.series({ method: 'GET', route: '/a' });
    kept.observe(0.3);
    histogram.observe({ method: 'GET', route: '/a' }, 0.3);
    ours.resetMetrics();
    theirs.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    durations.observe({ method: 'GET', route: '/b' }, 7);
    histogram.observe({ method: 'GET', route: '/b' }, 7);
    kept.observe(0.01);
    histogram.observe({ method: 'GET', route: '/a' }, 0.01);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('refuses bounds that do not increase, and a second metric of its name in one registry', () => {
    expect(() => new RequestDurations(NAME, HELP, [0.1, 0.1], new Registry())).toThrow(/must increase/);
    const registry = new Registry();
    new RequestDurations(NAME, HELP, BOUNDS, registry);
    expect(() => new Histogram({ name: NAME, help: HELP, registers: [registry] })).toThrow(/already been registered/);
  });
});
