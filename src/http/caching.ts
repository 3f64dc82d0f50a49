import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * HTTP caching of read answers (an edge may serve a response for up to five minutes, so a
 * listing change takes up to that long to show through one).
 *
 * - Shared caches (CDN, proxy) keep a 200 for `s-maxage` = CACHE_MAX_AGE_SECONDS (at most 300).
 * - Browsers keep it for at most a minute, then revalidate with If-None-Match and get a bodiless
 *   304 while nothing changed, so a browser never adds its own minutes on top of the edge's.
 * - No stale-while-revalidate / stale-if-error: either would let an edge serve an answer older
 *   than the five minutes the spec allows.
 * - Errors, 429s and operational endpoints are `no-store`: a refusal or a failure must never be
 *   replayed to other clients by an edge.
 */
export const NO_STORE = 'no-store';

const BROWSER_MAX_AGE_SECONDS = 60;

export function cacheControlFor(maxAgeSeconds: number): string {
  const shared = Math.max(0, Math.min(300, Math.floor(maxAgeSeconds)));
  const browser = Math.min(BROWSER_MAX_AGE_SECONDS, shared);
  return `public, max-age=${browser}, s-maxage=${shared}`;
}

/**
 * Cache-Control of an answer to a request made with a consumer key: the client's own cache may
 * keep it as long as a browser keeps a public answer, a shared cache never (its rate-limit
 * headers are the key's, and must never be handed to another client). Every cacheable API answer
 * also carries `Vary: Authorization`, so a shared cache never answers a keyed request with a copy
 * fetched without that key.
 */
export function keyedCacheControlFor(maxAgeSeconds: number): string {
  const shared = Math.max(0, Math.min(300, Math.floor(maxAgeSeconds)));
  return `private, max-age=${Math.min(BROWSER_MAX_AGE_SECONDS, shared)}`;
}

/** The Vary of cacheable API answers (keyedCacheControlFor). */
export const API_VARY = 'Authorization';

/** The opaque part of an entity tag, ignoring a weak `W/` prefix (weak comparison, RFC 9110 §8.8.3.2). */
function opaqueTag(tag: string): string {
  const t = tag.trim();
  return t.startsWith('W/') ? t.slice(2) : t;
}

/**
 * Whether an If-None-Match header matches the current entity tag: `*`, one tag, or a list.
 * Comparison is weak, as RFC 9110 requires for If-None-Match.
 */
export function ifNoneMatchMatches(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  const current = opaqueTag(etag);
  for (const candidate of value.split(',')) {
    const c = candidate.trim();
    if (c === '') continue;
    if (c === '*') return true;
    if (opaqueTag(c) === current) return true;
  }
  return false;
}

/** An answer's body, as text or as bytes encoded once (or both), with its ETag. */
export type CacheableAnswer = { readonly etag: string } & ({ readonly body: string; readonly bytes?: Buffer } | { readonly bytes: Buffer });

/**
 * Sends a JSON body that is already text (or bytes), with its strong ETag and Cache-Control;
 * answers a matching conditional request with a bodiless 304 carrying the same validators.
 */
export function sendCacheable(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: CacheableAnswer,
  cacheControl: string,
  contentType = 'application/json; charset=utf-8',
  vary?: string,
): FastifyReply {
  reply.header('etag', answer.etag).header('cache-control', cacheControl);
  if (vary !== undefined) reply.header('vary', vary);
  if (ifNoneMatchMatches(request.headers['if-none-match'], answer.etag)) {
    return reply.code(304).send();
  }
  // Bytes when the answer has them: encoded once, rather than on every request.
  return reply.type(contentType).send(answer.bytes ?? (answer as { body: string }).body);
}
