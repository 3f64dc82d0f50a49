import type { Bucket, Counted } from './verdict.ts';

/**
 * The rate-limit headers of a verdict that spent a unit, the same on every road that answers
 * (the Fastify hook, the direct read paths, MCP): legacy X-RateLimit-*, the IETF draft fields
 * RateLimit and RateLimit-Policy, and Retry-After on a refusal.
 */

/** The headers of a verdict as an object, in their order (what Fastify's reply takes). */
export function rateLimitHeaders(d: Counted, nowMs = Date.now()): Record<string, string> {
  const pairs: string[] = [];
  pushRateLimitHeaders(pairs, d, nowMs);
  const headers: Record<string, string> = {};
  for (let i = 0; i < pairs.length; i += 2) headers[pairs[i]!] = pairs[i + 1]!;
  return headers;
}

/**
 * The same headers, in the same order, appended to a flat list of names and values (what
 * Node's writeHead takes): the direct read path writes them without building an object.
 */
export function pushRateLimitHeaders(into: string[], d: Counted, nowMs = Date.now()): void {
  const fixed = fixedTextsOf(d);
  into.push(
    'x-ratelimit-limit',
    fixed.limit,
    'x-ratelimit-remaining',
    String(d.remaining),
    // Unix time (seconds) at which the window ends.
    'x-ratelimit-reset',
    String(Math.ceil(nowMs / 1000) + d.resetSeconds),
    'ratelimit-policy',
    fixed.policy,
    'ratelimit',
    `"${d.bucket}";r=${d.remaining};t=${d.resetSeconds}`,
  );
  if (!d.allowed) into.push('retry-after', String(d.resetSeconds));
}

/** The header values of a bucket and limit that are the same in each of its decisions, written once. */
interface FixedTexts {
  readonly windowSeconds: number;
  readonly limit: string;
  readonly policy: string;
}

/** By bucket, then limit (an address's, or an owner's of its own). */
const fixedTexts = new Map<Bucket, Map<number, FixedTexts>>();
const MAX_FIXED_TEXTS = 1000;

function fixedTextsOf(d: Counted): FixedTexts {
  let byLimit = fixedTexts.get(d.bucket);
  if (byLimit === undefined) fixedTexts.set(d.bucket, (byLimit = new Map()));
  let texts = byLimit.get(d.limit);
  if (texts === undefined || texts.windowSeconds !== d.windowSeconds) {
    if (byLimit.size >= MAX_FIXED_TEXTS) byLimit.clear();
    texts = { windowSeconds: d.windowSeconds, limit: String(d.limit), policy: `"${d.bucket}";q=${d.limit};w=${d.windowSeconds}` };
    byLimit.set(d.limit, texts);
  }
  return texts;
}
