import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { withoutKeys } from '../auth/consumer-keys/consumer-keys.ts';
import { keyOfRequest } from './budget-hook.ts';
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
  // Callback-style hooks: these run on every request, and an async hook costs a promise each.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern (never the raw path) keeps the label set small.
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.observeRequest({ method: request.method, route, status: reply.statusCode }, reply.elapsedTime / 1000);
    // The access log is a debug line: at info, a busy catalog would spend more on logging than
    // on answering. Failures are logged at warn/error by the error handler either way.
    if ((request.log as FastifyBaseLogger & { isLevelEnabled?(level: string): boolean }).isLevelEnabled?.('debug')) {
      // A consumer key is named by its name, never by itself (nor shown where a URL holds one).
      const key = keyOfRequest(request)?.name;
      request.log.debug(
        { method: request.method, url: withoutKeys(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100, ...(key !== undefined && { key }) },
        'request completed',
      );
    }
    done();
  });
}
