import type { FastifyInstance } from 'fastify';
import { Gauge } from 'prom-client';
import { NO_STORE } from './caching.ts';
import type { Metrics } from './metrics.ts';
import { SERVICE_VERSION } from '../util/version.ts';

/**
 * Endpoints for the people and machines that run the service, outside /api and outside the
 * per-IP budgets (a load balancer probing every second must never be refused):
 * - /healthz: the process is up and answering (liveness), and which version it runs;
 * - /readyz: it can serve current answers (readiness): 200 or 503 with each check;
 * - /metrics: Prometheus exposition.
 * None of them is cacheable.
 */
interface ReadinessCheck {
  ok: boolean;
  detail?: string;
}

export interface Readiness {
  check(): Promise<{ ready: boolean; checks: Record<string, ReadinessCheck> }>;
}

export interface OperationsDeps {
  readiness: Readiness;
  metrics: Metrics;
}

export async function registerOperations(app: FastifyInstance, deps: OperationsDeps): Promise<void> {
  const { readiness, metrics } = deps;
  // Probes and scrapes come every few seconds: keep them out of the request log.
  const quiet = { logLevel: 'warn' as const };

  // Readiness in the metrics too, so that an alert can say which check fails (docs/operating.md).
  new Gauge({
    name: 'catalog_readiness_check',
    help: 'Each /readyz check at scrape time: 1 passing, 0 failing (database, projection_mirror, projector, redis); /readyz is 503 while one is 0.',
    labelNames: ['check'] as const,
    registers: [metrics.registry],
    async collect() {
      const { checks } = await readiness.check().catch(() => ({ checks: { readiness: { ok: false } } as Record<string, ReadinessCheck> }));
      // Reset only once the answer is in: two scrapes at once never export an empty gauge.
      this.reset();
      for (const [check, { ok }] of Object.entries(checks)) this.set({ check }, ok ? 1 : 0);
    },
  });

  const health = { status: 'ok', version: SERVICE_VERSION } as const;
  app.get('/healthz', quiet, async (_request, reply) => reply.header('cache-control', NO_STORE).send(health));

  app.get('/readyz', quiet, async (_request, reply) => {
    const { ready, checks } = await readiness.check().catch((err: unknown) => ({
      ready: false,
      checks: { readiness: { ok: false, detail: `the checks themselves failed: ${(err as Error).message}` } } as Record<string, ReadinessCheck>,
    }));
    return reply
      .code(ready ? 200 : 503)
      .header('cache-control', NO_STORE)
      .send({ status: ready ? 'ready' : 'not_ready', checks });
  });

  app.get('/metrics', quiet, async (_request, reply) => {
    const text = await metrics.render();
    return reply.header('cache-control', NO_STORE).type(metrics.contentType).send(text);
  });
}
