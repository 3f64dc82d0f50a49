import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import { cspDirectives } from './csp.ts';

/**
 * The security headers of every HTML page, registered once on the scope that holds the pages
 * (helmet is scoped to the instance it is registered on, so the JSON REST API and the MCP
 * endpoint never get them):
 *
 * - Content-Security-Policy: see csp.ts. A page that must extend it (the consent page) sends
 *   its own value through sendPrivatePage's `csp` option, which replaces this one.
 * - Referrer-Policy: same-origin. Sign-in and consent URLs carry tokens; a link followed from
 *   those pages must not hand them to another site.
 * - X-Frame-Options: DENY, for browsers that predate frame-ancestors.
 * - Strict-Transport-Security only when the public URL is https: sent over plain http it is
 *   ignored, and on a local http setup it would only confuse.
 */
export async function registerPageSecurity(scope: FastifyInstance, opts: { publicUrl: string }): Promise<void> {
  const https = new URL(opts.publicUrl).protocol === 'https:';
  await scope.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: cspDirectives({ publicUrl: opts.publicUrl }) },
    referrerPolicy: { policy: 'same-origin' },
    xFrameOptions: { action: 'deny' },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: false } : false,
  });
}
