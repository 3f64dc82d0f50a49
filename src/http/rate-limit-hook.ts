import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tooManyRequests } from '../contract/errors.ts';
import { SPENT_BUDGET, type DirectReadRequest } from './direct-reads.ts';
import { rateLimitHeaders, type Bucket, type RateLimits } from './rate-limit.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The per-IP budget a route spends from; routes without one spend from `other`. */
    rateLimitBucket?: Bucket;
  }
}

function bucketOf(request: FastifyRequest, fallback: Bucket): Bucket {
  return request.routeOptions.config?.rateLimitBucket ?? fallback;
}

/**
 * Spends one unit of the caller's budget for every request of the scope, before anything else
 * looks at the request: an invalid request counts like a valid one, so probing with bad input
 * is limited too. Preflights are not counted (CORS answers them in an earlier hook).
 *
 * Every counted answer carries the rate-limit headers, 200s and 304s included; a refused one is
 * a 429 TOO_MANY_REQUESTS with Retry-After until the window ends. Should even the in-memory
 * insurance fail, the request is served: a broken limiter must not take the catalog offline.
 */
export function addRateLimitHook(scope: FastifyInstance, rateLimits: RateLimits, bucket: Bucket = 'other'): void {
  // Callback style: this runs on every request, and an async hook costs one more promise.
  scope.addHook('onRequest', (request, reply, done) => {
    if (request.method === 'OPTIONS') return done();
    // A request the direct read path handed over has spent its unit already (direct-reads.ts).
    const spent = (request.raw as DirectReadRequest)[SPENT_BUDGET];
    (spent ?? rateLimits.consume(bucketOf(request, bucket), request.ip)).then(
      (decision) => {
        const headers = rateLimitHeaders(decision);
        for (const name in headers) reply.header(name, headers[name]);
        done(decision.allowed ? undefined : tooManyRequests(decision.resetSeconds));
      },
      (err: unknown) => {
        request.log.warn({ err }, 'rate limiter failed; serving without a limit');
        done();
      },
    );
  });
}
