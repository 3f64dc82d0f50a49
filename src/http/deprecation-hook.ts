import type { FastifyInstance } from 'fastify';
import type { DeprecationReading } from '../contract/deprecations.ts';

/**
 * Every answer of a route whose operation, or a query parameter it was given, is deprecated
 * carries `Deprecation`, `Sunset` and `Link rel="deprecation"` (src/contract/deprecations.ts),
 * refusals included. Routes name their operation in `config.operationId`.
 */
export function markDeprecatedUse(app: FastifyInstance, deprecations: DeprecationReading): void {
  // Nothing deprecated (the usual case): no hook on every request.
  if (deprecations.none) return;
  app.addHook('onRequest', (request, reply, done) => {
    const operationId = request.routeOptions.config.operationId;
    if (deprecations.touches(operationId)) {
      const query = request.query;
      const headers = deprecations.headersFor(operationId, typeof query === 'object' && query !== null ? Object.keys(query) : []);
      if (headers) for (const [name, value] of headers) reply.header(name, value);
    }
    done();
  });
}
