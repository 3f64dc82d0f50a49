import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConsumerKey } from '../auth/consumer-keys/consumer-key-table.ts';
import type { Budgets } from '../budgets/budgets.ts';
import { rateLimitHeaders } from '../budgets/rate-limit-headers.ts';
import { isCounted, type Bucket, type Verdict } from '../budgets/verdict.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The per-IP budget a route spends from; routes without one spend from `other`. */
    rateLimitBucket?: Bucket;
  }
}

/** The consumer key a request is served under, set only on keyed requests (see keyOfRequest). */
export const REQUEST_KEY = Symbol('catalog.requestKey');

/**
 * The verdict of a request the direct read path (direct-reads.ts) handed to Fastify after it
 * spent the request's unit: the hook sends what it says rather than spend again.
 */
export const SPENT_BUDGET = Symbol('catalog.spentBudget');

export type SpentBudget = Promise<Verdict>;

/** A request as the budgets mark it: each mark is set only on the requests it concerns. */
export interface BudgetedRequest extends IncomingMessage {
  [REQUEST_KEY]?: ConsumerKey;
  [SPENT_BUDGET]?: SpentBudget;
}

/** The consumer key whose budgets a request of the REST scope spends, when it has one. */
export function keyOfRequest(request: FastifyRequest): ConsumerKey | undefined {
  return (request.raw as BudgetedRequest)[REQUEST_KEY];
}

function bucketOf(request: FastifyRequest, fallback: Bucket): Bucket {
  return request.routeOptions.config?.rateLimitBucket ?? fallback;
}

/**
 * Spends one unit of the caller's budget for every request of the scope, before anything else
 * looks at the request: an invalid request counts like a valid one, so probing with bad input
 * is limited too. Preflights are not counted (CORS answers them in an earlier hook). The
 * decision is the budgets' (src/budgets/budgets.ts); this hook carries it to Fastify.
 *
 * With `readsKeys` (the REST scope), the Authorization header says whose budget: a consumer
 * key's, or a refusal (401 INVALID_KEY, with its challenge); the pages take no key and ignore
 * the header.
 *
 * Every counted answer carries the rate-limit headers, 200s and 304s included; a refused one is
 * the verdict's refusal, sent by the scope's error handler (429 TOO_MANY_REQUESTS with
 * Retry-After until the window ends). Should even the in-memory insurance fail, the request is
 * served: a broken limiter must not take the catalog offline.
 */
export function addBudgetHook(scope: FastifyInstance, budgets: Budgets, bucket: Bucket = 'other', readsKeys = false): void {
  // Callback style: this runs on every request, and an async hook costs one more promise.
  scope.addHook('onRequest', (request, reply, done) => {
    if (request.method === 'OPTIONS') return done();
    const raw = request.raw as BudgetedRequest;
    // A request the direct read path handed over has spent its unit already (direct-reads.ts).
    const verdict = raw[SPENT_BUDGET] ?? budgets.decide(bucketOf(request, bucket), request.clientNetwork, readsKeys ? request.headers.authorization : undefined, request.raw.rawHeaders);
    // Decided at once when the budget is kept in this process (or in its lease of a Redis
    // budget): no promise, and the request goes on in the same turn.
    if (!(verdict instanceof Promise)) return settle(reply, raw, verdict, done);
    verdict.then(
      (decided) => settle(reply, raw, decided, done),
      (err: unknown) => {
        request.log.warn({ err }, 'rate limiter failed; serving without a limit');
        // Served as whoever its key says it is, nothing spent.
        const key = readsKeys ? budgets.decide(undefined, request.clientNetwork, request.headers.authorization).owner?.key : undefined;
        if (key !== undefined) raw[REQUEST_KEY] = key;
        done();
      },
    );
  });
}

/** Names the key, adds the verdict's headers, then goes on, or refuses. */
function settle(reply: FastifyReply, raw: BudgetedRequest, verdict: Verdict, done: (err?: Error) => void): void {
  const key = verdict.owner?.key;
  if (key !== undefined) raw[REQUEST_KEY] = key;
  if (isCounted(verdict)) {
    const headers = rateLimitHeaders(verdict);
    for (const name in headers) reply.header(name, headers[name]);
  }
  done(verdict.refusal);
}
