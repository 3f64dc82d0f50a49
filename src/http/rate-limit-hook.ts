import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tooManyRequests } from '../contract/errors.ts';
import { rateLimitHeaders, type Bucket, type RateLimits } from './rate-limit.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The per-IP budget a route spends from; routes without one spend from `other`. */
    rateLimitBucket?: Bucket;
  }
}

function bucketOf(request: FastifyRequest): Bucket {
  return request.routeOptions.config?.rateLimitBucket ?? 'other';
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
export function addRateLimitHook(scope: FastifyInstance, rateLimits: RateLimits): void {
  scope.addHook('onRequest', async (request, reply) => {
    if (request.method === 'OPTIONS') return;
    let decision;
    try {
      decision = await rateLimits.consume(bucketOf(request), request.ip);
    } catch (err) {
      request.log.warn({ err }, 'rate limiter failed; serving without a limit');
      return;
    }
    reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed) throw tooManyRequests(decision.resetSeconds);
  });
}
