import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { tooManyRequests } from '../contract/errors.ts';
import { keyChallenge, REQUEST_KEY, type ConsumerAuth, type KeyedRequest, type RequestKey } from './consumer-auth.ts';
import { SPENT_BUDGET, type DirectReadRequest } from './direct-reads.ts';
import { rateLimitHeaders, type Bucket, type RateDecision, type RateLimits } from './rate-limit.ts';

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
 * With `auth` (the REST scope), a request carrying an Authorization header spends its consumer
 * key's budgets instead of its address's, or is refused with 401 INVALID_KEY when the key is
 * not valid (consumer-auth.ts); the pages take no key and ignore the header.
 *
 * Every counted answer carries the rate-limit headers, 200s and 304s included; a refused one is
 * a 429 TOO_MANY_REQUESTS with Retry-After until the window ends. Should even the in-memory
 * insurance fail, the request is served: a broken limiter must not take the catalog offline.
 */
export function addRateLimitHook(scope: FastifyInstance, rateLimits: RateLimits, bucket: Bucket = 'other', auth?: ConsumerAuth): void {
  // Callback style: this runs on every request, and an async hook costs one more promise.
  scope.addHook('onRequest', (request, reply, done) => {
    if (request.method === 'OPTIONS') return done();
    // A request the direct read path handed over has spent its unit already (direct-reads.ts).
    const raw = request.raw as DirectReadRequest & KeyedRequest;
    const spent = raw[SPENT_BUDGET];
    let requestKey: RequestKey | undefined;
    if (auth && spent === undefined) {
      requestKey = auth.keyOf(request.headers, request.raw.rawHeaders);
      if (requestKey?.ok === false) {
        auth.refusal(requestKey, request.ip).then((err) => {
          if (err.status === 401) reply.header('www-authenticate', keyChallenge(err.message));
          done(err);
        }, done);
        return;
      }
      if (requestKey) raw[REQUEST_KEY] = requestKey.key;
    }
    const owner = requestKey?.ok ? requestKey.owner : undefined;
    // Decided at once when the budget is kept in this process (or in its lease of a Redis
    // budget): no promise, and the request goes on in the same turn.
    const now = spent === undefined ? rateLimits.consumeNow(bucketOf(request, bucket), request.ip, owner) : undefined;
    if (now !== undefined) return settle(reply, raw, now, done);
    (spent ?? rateLimits.consume(bucketOf(request, bucket), request.ip, owner)).then(
      (decision) => settle(reply, raw, decision, done),
      (err: unknown) => {
        request.log.warn({ err }, 'rate limiter failed; serving without a limit');
        done();
      },
    );
  });
}

/** Adds the decision's headers, then goes on, or refuses with 429. */
function settle(reply: FastifyReply, raw: KeyedRequest, decision: RateDecision, done: (err?: Error) => void): void {
  const headers = rateLimitHeaders(decision);
  for (const name in headers) reply.header(name, headers[name]);
  done(decision.allowed ? undefined : tooManyRequests(decision.resetSeconds, raw[REQUEST_KEY] ? 'key' : 'address'));
}
