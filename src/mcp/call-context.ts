import { AsyncLocalStorage } from 'node:async_hooks';
import { tooManyRequests } from '../contract/errors.ts';
import type { Bucket, RateDecision, RateLimits } from '../http/rate-limit.ts';
import type { ReadService } from '../read/read-service.ts';
import type { Caller } from '../auth/caller.ts';
import type { MakerCatalog } from '../catalog/maker-catalog.ts';

/**
 * What the tools and the prompt need, split by lifetime. The MCP servers are built once and
 * reused across HTTP requests (see server.ts), so a handler never closes over a caller: it
 * gets the process-wide services (McpDeps) when registered, and the caller of the request it
 * is serving (McpCaller) from the request scope, with currentCaller().
 */
export interface McpDeps {
  read: ReadService;
  rateLimits: RateLimits;
  /** The makers' commands, for the maker tools. */
  maker: MakerCatalog;
}

/**
 * The caller of one HTTP request to /api/mcp, and where its answer's headers and logs go.
 * The signed-in maker and the token's scopes (`auth`) are set by the route once the access
 * token is checked (mcp-auth.ts); handlers never see the token itself.
 */
export interface McpCaller {
  /** Who is calling: anonymous, or a maker through a connected app with its granted scopes. */
  readonly auth: Caller;
  /** The caller's IP, as REST sees it (TRUST_PROXY honoured). */
  readonly ip: string;
  /** Told of each budget decision, so the HTTP answer carries the rate-limit headers. */
  onRateDecision(decision: RateDecision): void;
  /** The request's logger: limiter failures are warnings, tool failures errors. */
  readonly log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

const requestScope = new AsyncLocalStorage<McpCaller>();

/**
 * Runs `fn` (the SDK's handling of one HTTP request) with `caller` as the request scope: every
 * tool and prompt handler it reaches, however many promise hops later, sees this caller.
 */
export function runForCaller<T>(caller: McpCaller, fn: () => T): T {
  return requestScope.run(caller, fn);
}

/** The caller of the request being served. Throws outside runForCaller: a handler needs one. */
export function currentCaller(): McpCaller {
  const caller = requestScope.getStore();
  if (!caller) throw new Error('an MCP handler ran outside the scope of an HTTP request');
  return caller;
}

/**
 * Spends one call of the caller's budget in the same per-IP buckets REST uses, so an address
 * has one budget whichever door it comes through. Throws TOO_MANY_REQUESTS when it is spent.
 * Should the limiter itself fail, the call is served, as REST does: a broken limiter must not
 * take the catalog offline.
 */
export async function spendBudget(rateLimits: RateLimits, caller: McpCaller, bucket: Bucket): Promise<void> {
  let decision: RateDecision;
  try {
    decision = await rateLimits.consume(bucket, caller.ip);
  } catch (err) {
    caller.log.warn({ err }, 'rate limiter failed; serving without a limit');
    return;
  }
  caller.onRateDecision(decision);
  if (!decision.allowed) throw tooManyRequests(decision.resetSeconds);
}
