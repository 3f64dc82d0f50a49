import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/**
 * Cross-origin access to the REST API, which is public: any origin, no credentials. The
 * response headers a browser script needs (validators, caching, rate limits, request id) are
 * exposed. Because the allowed origin is the constant `*`, answers do not vary by Origin and
 * carry no `Vary: Origin`, which keeps edge caches to one copy per URL.
 *
 * Registered inside the /api/v1 scope, before the rate-limit hook: preflights are answered
 * (204) without spending any budget, and every answer of the scope, errors and 429s included,
 * carries the CORS headers because they are set in the first onRequest hook.
 */
export const EXPOSED_HEADERS = [
  'ETag',
  'Cache-Control',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'X-Request-Id',
  'Catalog-Cursor',
  'WWW-Authenticate',
  'Deprecation',
  'Sunset',
  'Link',
] as const;

/** How long a browser may reuse a preflight answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 86_400;

export async function registerCors(scope: FastifyInstance): Promise<void> {
  await scope.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD', 'OPTIONS'],
    // Request headers asked for in a preflight are allowed as asked: no credential is ever read.
    exposedHeaders: [...EXPOSED_HEADERS],
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    credentials: false,
    // A bare OPTIONS (no Origin) gets the same 204 instead of a plain-text 400.
    strictPreflight: false,
    preflight: true,
  });
}
