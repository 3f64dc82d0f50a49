import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ProjectionMirror } from '../read/projection-mirror.ts';
import type { ReadService } from '../read/read-service.ts';
import type { ProjectionFacts } from '../read/projection-facts.ts';
import type { HeldKind } from '../contract/errors.ts';
import type { HeldRequests } from './feed/held-requests.ts';
import type { LeaseStore } from '../budgets/lease-store.ts';
import type { Bucket } from '../budgets/verdict.ts';
import { RequestDurations } from './request-durations.ts';

/**
 * Prometheus metrics of one process, in a registry of its own (several services may share a
 * process in tests). Request counts and latency are recorded as requests finish; everything
 * the service already counts (response cache, rate-limit refusals, the mirror) and the
 * projection lag, which needs a query, are read when Prometheus scrapes.
 */
export interface Metrics {
  readonly registry: Registry;
  /** Records one finished request; `route` is the route pattern, never the raw path. */
  observeRequest(labels: { method: string; route: string; status: number }, seconds: number): void;
  /**
   * The same record for answers of one method, route and status written by the direct read path
   * (src/http/direct-reads.ts), with its label sets resolved once; each call also counts one
   * direct answer.
   */
  directObserver(labels: { method: string; route: string; status: number }): RequestObserver;
  /** Shows the requests of one kind held open (long polls, exports), and those refused, in the metrics. */
  watchHeld(kind: HeldKind, held: HeldRequests): void;
  /** The exposition text for /metrics. */
  render(): Promise<string>;
  readonly contentType: string;
}

/** Records one finished request of a fixed method, route and status; takes its duration in seconds. */
export type RequestObserver = (seconds: number) => void;

interface ProjectionLag {
  unprojectedRows: number;
  oldestUnprojectedAgeSeconds: number;
}

export interface MetricsSources {
  read: ReadService;
  /** The budgets' counts: refusals per bucket, and the Redis connection they share. */
  budgets: Pick<LeaseStore, 'rejections' | 'redis'>;
  mirror: ProjectionMirror;
  /** Outbox rows the projector has not applied yet; queried at scrape time. */
  lag: () => Promise<ProjectionLag>;
  /** The projectors connected, the newest snapshot and the change log's window; queried at scrape time. */
  facts?: () => Promise<ProjectionFacts>;
}

const BUCKETS: readonly Bucket[] = ['search', 'other', 'pages', 'export', 'changes'];

export function createMetrics(sources: MetricsSources): Metrics {
  const { read, budgets, mirror, lag, facts } = sources;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  // Answers of the direct read path, counted in plain numbers and added to http_requests_total
  // when it is read: hashing the labels of every answer costs more than writing some of them.
  const directCounts: { labels: { method: string; route: string; status_code: string }; pending: number; total: number }[] = [];
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
    collect() {
      for (const count of directCounts) {
        if (count.pending === 0) continue;
        this.inc(count.labels, count.pending);
        count.pending = 0;
      }
    },
  });
  const duration = new RequestDurations(
    'http_request_duration_seconds',
    'Time from receiving a request to finishing its answer, by method and route pattern.',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registry,
  );
  new Counter({
    name: 'http_direct_answers_total',
    help: 'Answers written by the direct read path (products, categories, cached searches), also counted in http_requests_total.',
    labelNames: ['route'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const count of directCounts) this.inc({ route: count.labels.route }, count.total);
    },
  });

  new Counter({
    name: 'catalog_response_cache_hits_total',
    help: 'Search answers served from the response cache.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read.cacheStats.hits);
    },
  });
  new Counter({
    name: 'catalog_response_cache_misses_total',
    help: 'Search answers computed because the response cache had none.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read.cacheStats.misses);
    },
  });
  new Counter({
    name: 'catalog_rate_limit_rejections_total',
    help: 'Requests refused with 429 because the per-IP budget was spent, by bucket.',
    labelNames: ['bucket'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const bucket of BUCKETS) this.inc({ bucket }, budgets.rejections[bucket]);
    },
  });

  new Gauge({
    name: 'catalog_projection_version',
    help: 'Projection version this process serves.',
    registers: [registry],
    collect() {
      this.set(read.version);
    },
  });
  new Gauge({
    name: 'catalog_change_feed_position',
    help: 'Change-log position this process serves: the export names it, the change feed stops at it.',
    registers: [registry],
    collect() {
      this.set(mirror.head.position);
    },
  });
  new Gauge({
    name: 'catalog_live_listings',
    help: 'Live listings in this process copy of the projection.',
    registers: [registry],
    collect() {
      this.set(mirror.size);
    },
  });
  const delivery = new Histogram({
    name: 'catalog_projection_delivery_seconds',
    help:
      'The way of each write-model change this process applied, in two stages: from its commit to the projector committing it (stage="projected"), ' +
      'and from then to this process applying it (stage="applied"); one observation of each per applied version, timed from its oldest change.',
    labelNames: ['stage'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2.5, 5, 10, 30],
    registers: [registry],
  });
  mirror.onChange((_version, d) => {
    if (!d) return;
    delivery.observe({ stage: 'projected' }, d.projected);
    delivery.observe({ stage: 'applied' }, d.applied);
  });
  new Gauge({
    name: 'catalog_projection_mirror_age_seconds',
    help: 'Seconds since this process last confirmed its copy of the projection is current.',
    registers: [registry],
    collect() {
      this.set(mirror.checkedAt > 0 ? (Date.now() - mirror.checkedAt) / 1000 : Number.NaN);
    },
  });

  // One query per scrape feeds both lag gauges.
  const lagOnce = sharedWhileInFlight(lag);
  new Gauge({
    name: 'catalog_projection_lag_seconds',
    help: 'Age of the oldest committed write-model change the projector has not applied (0 when caught up; NaN when unknown).',
    registers: [registry],
    async collect() {
      const l = await lagOnce();
      this.set(l ? l.oldestUnprojectedAgeSeconds : Number.NaN);
    },
  });
  new Gauge({
    name: 'catalog_projection_unprojected_rows',
    help: 'Committed write-model changes (outbox rows) the projector has not applied yet (NaN when unknown).',
    registers: [registry],
    async collect() {
      const l = await lagOnce();
      this.set(l ? l.unprojectedRows : Number.NaN);
    },
  });

  // Redis holds the shared budgets; without it each process counts its own (docs/operating.md).
  const redis = budgets.redis;
  if (redis) {
    new Gauge({
      name: 'catalog_redis_up',
      help: 'Whether the connection to REDIS_URL is ready (1) or not (0): while it is not, request budgets and sign-in limits are counted per process.',
      registers: [registry],
      collect() {
        this.set(redis.status === 'ready' ? 1 : 0);
      },
    });
  }

  // One query per scrape feeds the gauges of the cluster behind this process.
  if (facts) {
    const factsOnce = sharedWhileInFlight(facts);
    const factGauge = (name: string, help: string, value: (f: ProjectionFacts) => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        async collect() {
          const f = await factsOnce();
          this.set(f ? value(f) : Number.NaN);
        },
      });
    factGauge(
      'catalog_projector_sessions',
      'Projector processes connected to the database, the leader and its standbys (NaN when unknown).',
      (f) => f.projectorSessions,
    );
    factGauge(
      'catalog_snapshot_age_seconds',
      'Age of the newest complete projection snapshot, which processes load at start (NaN when there is none or it is unknown).',
      (f) => f.snapshot?.ageSeconds ?? Number.NaN,
    );
    factGauge(
      'catalog_snapshot_versions_behind',
      'Projection versions committed since the newest complete snapshot (NaN when there is none or it is unknown).',
      (f) => (f.snapshot ? f.projectionVersion - f.snapshot.version : Number.NaN),
    );
    factGauge(
      'catalog_change_feed_retained_changes',
      'Changes the change feed still holds: its head position less the position through which it was pruned (NaN when unknown).',
      (f) => f.changeHead - f.changesPrunedThrough,
    );
  }

  // Requests held open (docs/connections.md): places taken now, and refusals since start, counted
  // by held-requests.ts in plain numbers and added to the counter when it is read.
  const held: { kind: string; requests: HeldRequests; counted: { holder: number; total: number } }[] = [];
  new Gauge({
    name: 'catalog_held_requests',
    help: 'Requests held open now, by kind (long_poll: GET /api/v1/changes?wait=…; export: GET /api/v1/export being sent).',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      for (const h of held) this.set({ kind: h.kind }, h.requests.open);
    },
  });
  new Counter({
    name: 'catalog_held_requests_refused_total',
    help: 'Requests to be held open refused, by kind and by the cap met (holder: an address or key at its cap, 429; process: the process full, 503).',
    labelNames: ['kind', 'cap'] as const,
    registers: [registry],
    collect() {
      for (const h of held) {
        const { holder, total } = h.requests.refused;
        this.inc({ kind: h.kind, cap: 'holder' }, holder - h.counted.holder);
        this.inc({ kind: h.kind, cap: 'process' }, total - h.counted.total);
        h.counted = { holder, total };
      }
    },
  });

  return {
    registry,
    contentType: registry.contentType,
    watchHeld(kind, requests) {
      held.push({ kind: kind === 'long polls' ? 'long_poll' : 'export', requests, counted: { holder: 0, total: 0 } });
    },
    observeRequest({ method, route, status }, seconds) {
      requests.inc({ method, route, status_code: String(status) });
      duration.observe({ method, route }, seconds);
    },
    directObserver({ method, route, status }) {
      const count = { labels: { method, route, status_code: String(status) }, pending: 0, total: 0 };
      directCounts.push(count);
      const time = duration.series({ method, route });
      return (seconds) => {
        count.pending++;
        count.total++;
        time.observe(seconds);
      };
    },
    render: () => registry.metrics(),
  };
}

/**
 * One call of `load` shared by every caller while it is in flight (the gauges of one scrape ask
 * together: one query feeds them all); undefined when it fails.
 */
function sharedWhileInFlight<T>(load: () => Promise<T>): () => Promise<T | undefined> {
  let pending: Promise<T | undefined> | undefined;
  return () =>
    (pending ??= load()
      .catch(() => undefined)
      .finally(() => {
        pending = undefined;
      }));
}
