import { tooManyRequests } from '../contract/errors.ts';
import type { Bucket, RateDecision, RateLimits } from '../http/rate-limit.ts';
import type { ReadService } from '../read/read-service.ts';
import type { Caller } from '../auth/caller.ts';

/**
 * What the tools and the prompt of one MCP request need. A fresh server is built per HTTP
 * request, so the caller's address is simply part of its context.
 */
export interface McpCallContext {
  /** Who is calling: anonymous, or a maker through a connected app with its granted scopes. */
  caller: Caller;
  read: ReadService;
  rateLimits: RateLimits;
  /** The caller's IP, as REST sees it (TRUST_PROXY honoured). */
  ip: string;
  /** Told of each budget decision, so the HTTP response can carry the rate-limit headers. */
  onRateDecision?: (decision: RateDecision) => void;
  /** Told when the rate limiter fails (the call is then served without a limit). */
  onLimiterFailure?: (err: unknown) => void;
  /** Told of unexpected failures (answered to the client as INTERNAL_SERVER_ERROR). */
  onFailure?: (err: unknown) => void;
}

/**
 * Spends one call of the caller's budget in the same per-IP buckets REST uses, so an address
 * has one budget whichever door it comes through. Throws TOO_MANY_REQUESTS when it is spent.
 * Should the limiter itself fail, the call is served, as REST does: a broken limiter must not
 * take the catalog offline.
 */
export async function spendBudget(ctx: McpCallContext, bucket: Bucket): Promise<void> {
  let decision: RateDecision;
  try {
    decision = await ctx.rateLimits.consume(bucket, ctx.ip);
  } catch (err) {
    ctx.onLimiterFailure?.(err);
    return;
  }
  ctx.onRateDecision?.(decision);
  if (!decision.allowed) throw tooManyRequests(decision.resetSeconds);
}
