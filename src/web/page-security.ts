import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet from 'helmet';
import { cspDirectives } from './csp.ts';

/**
 * The security headers of every HTML page, set on the scope that holds the pages (a hook of that
 * scope: the JSON REST API and the MCP endpoint never get them):
 *
 * - Content-Security-Policy: see csp.ts. A page that must extend it (the consent page) sends
 *   its own value through sendPrivatePage's `csp` option, which replaces this one.
 * - Referrer-Policy: same-origin. Sign-in and consent URLs carry tokens; a link followed from
 *   those pages must not hand them to another site.
 * - X-Frame-Options: DENY, for browsers that predate frame-ancestors.
 * - Strict-Transport-Security only when the public URL is https: sent over plain http it is
 *   ignored, and on a local http setup it would only confuse.
 * - helmet's other defaults (Cross-Origin-Opener-Policy, Cross-Origin-Resource-Policy,
 *   Origin-Agent-Cluster, X-Content-Type-Options, X-DNS-Prefetch-Control, X-Download-Options,
 *   X-Permitted-Cross-Domain-Policies, X-XSS-Protection).
 *
 * helmet writes them, once: the values depend on the public URL only, and asking helmet on
 * every request (as its Fastify plugin does, building and checking the policy each time) cost
 * a cached page more than the rest of its answer.
 */
export type SecurityHeaders = ReadonlyArray<readonly [name: string, value: string]>;

/** The headers, as helmet sets them on a response: its names, values and order. */
function pageSecurityHeaders(opts: { publicUrl: string }): SecurityHeaders {
  const https = new URL(opts.publicUrl).protocol === 'https:';
  const headers: Array<[string, string]> = [];
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.push([name, String(value)]);
    },
    // X-Powered-By, which nothing here sets.
    removeHeader() {},
  };
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives: cspDirectives({ publicUrl: opts.publicUrl }) },
    referrerPolicy: { policy: 'same-origin' },
    xFrameOptions: { action: 'deny' },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: false } : false,
  })({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
  });
  return headers;
}

export async function registerPageSecurity(scope: FastifyInstance, opts: { publicUrl: string }): Promise<SecurityHeaders> {
  const headers = pageSecurityHeaders(opts);
  // Set on Node's response, as helmet sets them: they come first in the answer, and a header
  // the page sets itself (the consent page's policy) replaces its value in place.
  scope.addHook('onRequest', (_request, reply, done) => {
    const res = reply.raw;
    for (const [name, value] of headers) res.setHeader(name, value);
    done();
  });
  return headers;
}
