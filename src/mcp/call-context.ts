import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Budgets } from '../budgets/budgets.ts';
import type { Bucket, BudgetOwner, Counted } from '../budgets/verdict.ts';
import type { ReadService } from '../read/read-service.ts';
import type { Caller } from '../auth/caller.ts';
import type { MakerCatalog } from '../catalog/maker-catalog.ts';
import type { Era } from './protocol.ts';

/**
 * What the tools and the prompt need, split by lifetime. The MCP servers are built once and
 * reused across HTTP requests (see server.ts), so a handler never closes over a caller: it
 * gets the process-wide services (McpDeps) when registered, and the caller of the request it
 * is serving (McpCaller) from the handler's context, with callerOf(ctx).
 */
export interface McpDeps {
  read: ReadService;
  /** Request budgets: every call spends its caller's (Budgets.decide). */
  budgets: Budgets;
  /** The makers' commands, for the maker tools. */
  maker: MakerCatalog;
  /** The service's public origin: the server's website and icons are on it. */
  publicUrl: string;
  /** How long a read may be kept (`ttlMs` of resource reads): CACHE_MAX_AGE_SECONDS, as REST's Cache-Control says. */
  readTtlMs: number;
}

/**
 * The caller of one HTTP request to /api/mcp, and where its answer's headers and logs go.
 * The signed-in maker and the token's scopes (`auth`) are set by the route once the access
 * token is checked (mcp-auth.ts); handlers never see the token itself.
 */
export interface McpCaller {
  /** Who is calling: anonymous, or a maker through a connected app with its granted scopes. */
  readonly auth: Caller;
  /** The protocol era of the request: results are shaped for it (protocol.ts). */
  readonly era: Era;
  /** What the caller's address budgets count, as REST's (its IPv4 address or IPv6 network: src/http/client/client-address.ts). */
  readonly network: string;
  /**
   * Whose budgets the calls spend when not the address's: a consumer key's (the request carried
   * one), or a signed-in maker's grant (one connected app of one maker), as the route decided.
   */
  readonly owner: BudgetOwner | undefined;
  /** Told of each budget verdict, so the HTTP answer carries the rate-limit headers. */
  onRateDecision(verdict: Counted): void;
  /** The request's logger: limiter failures are warnings, tool failures errors. */
  readonly log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/**
 * Each request's caller reaches the handlers through the SDK: the route hands the SDK an
 * AuthInfo for the request, which the SDK passes to every handler the request reaches as
 * `ctx.http.authInfo`. The caller is kept beside that object, not in it, so nothing else can
 * pose as one. (Not an AsyncLocalStorage: on Node before 24, one in use puts a hook on every
 * promise and every asynchronous resource of the process, the catalog's fastest answers
 * included.)
 */
const callers = new WeakMap<AuthInfo, McpCaller>();

/** The AuthInfo to hand the SDK for a request whose caller is `caller`. */
export function authInfoFor(caller: McpCaller): AuthInfo {
  const auth: AuthInfo = { token: '', clientId: '', scopes: caller.auth.kind === 'maker' ? [...caller.auth.scopes] : [] };
  callers.set(auth, caller);
  return auth;
}

/** The caller of the request a handler serves (its context). Throws when there is none: a handler needs one. */
export function callerOf(ctx: { http?: { authInfo?: AuthInfo | undefined } | undefined }): McpCaller {
  const auth = ctx.http?.authInfo;
  const caller = auth && callers.get(auth);
  if (!caller) throw new Error('an MCP handler ran without the caller of its HTTP request');
  return caller;
}

/**
 * Spends one call of the caller's budget in the same buckets REST uses (Budgets.decide), so an
 * address (or a key) has one budget whichever door it comes through; a signed-in maker's calls
 * spend their grant's budget instead, with an address's limits, so the users of one hosted
 * assistant no longer share their host's address. The verdict is told to the caller (its
 * RateLimit headers) and returned, at once when it is decided at once; a refused one carries
 * its refusal (TOO_MANY_REQUESTS). Should the limiter itself fail, the call is served (the
 * verdict is undefined), as REST does: a broken limiter must not take the catalog offline.
 */
export function spendNow(budgets: Budgets, caller: McpCaller, bucket: Bucket): Counted | undefined | Promise<Counted | undefined> {
  const verdict = budgets.decide(bucket, caller.network, caller.owner);
  if (verdict instanceof Promise) return verdict.then((decided) => told(caller, decided), (err: unknown) => limiterFailed(caller, err));
  return told(caller, verdict);
}

function told(caller: McpCaller, verdict: Counted): Counted {
  caller.onRateDecision(verdict);
  return verdict;
}

function limiterFailed(caller: McpCaller, err: unknown): undefined {
  caller.log.warn({ err }, 'rate limiter failed; serving without a limit');
  return undefined;
}

/** The same, for a handler that awaits it: throws the refusal (TOO_MANY_REQUESTS) when the budget is spent. */
export async function spendBudget(budgets: Budgets, caller: McpCaller, bucket: Bucket): Promise<void> {
  const verdict = await spendNow(budgets, caller, bucket);
  if (verdict !== undefined && !verdict.allowed) throw verdict.refusal;
}
