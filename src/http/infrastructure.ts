import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { registerErrorHandling } from './errors.ts';
import type { Metrics } from './metrics.ts';

/**
 * What every route of the application shares, registered on the root instance before any
 * route so that every plugin inherits it: the error and not-found handlers, the request id
 * echoed as X-Request-Id, and request metrics.
 */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A request id for the logs: the client's X-Request-Id when it is a plain token (so a proxy's
 * id follows the request across services), otherwise a fresh UUID. Anything else is not
 * echoed, so a header can never smuggle odd bytes into logs or responses.
 */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}

export function registerInfrastructure(app: FastifyInstance, deps: { metrics: Metrics }): void {
  registerErrorHandling(app);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
  });
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern (never the raw path) keeps the label set small.
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.observeRequest({ method: request.method, route, status: reply.statusCode }, reply.elapsedTime / 1000);
  });
}
