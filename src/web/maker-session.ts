import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import type { Pool } from '../db/pool.ts';
import { SESSION_COOKIE, SESSION_SECONDS, findSession, type WebSession } from '../auth/sessions.ts';
import type { Session } from './components/layout.tsx';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in maker of a page request, resolved from the session cookie. */
    webSession: WebSession | undefined;
  }
}

/**
 * What the maker and admin pages share: the session cookie, form bodies, and CSRF protection on
 * every POST. The CSRF secret lives in its own signed cookie and each token is bound to the
 * session it was made for (a token made before sign-in is refused after it), so a form posted
 * from another site, or replayed across a sign-in, is refused with 403.
 *
 * Before the token is even read, a POST whose browser names another origin is refused with the
 * same 403 (see crossSiteForm): a site that has somehow come by a token (or, on a sibling
 * subdomain, planted a CSRF cookie of its own for the signed-out forms) still cannot post.
 */
export interface MakerSessionOptions {
  pool: Pool;
  /** Signs the CSRF cookie; one of the service's own keys (auth.service_keys). */
  cookieSecret: string;
  secureCookies: boolean;
  /** PUBLIC_URL: its origin is where the forms are. */
  publicUrl: string;
}

export const CSRF_COOKIE = 'catalog_csrf';

/** The error a form post from another site is refused with (page-errors.tsx answers it as a 403 page). */
export const CROSS_SITE_FORM = 'CATALOG_CROSS_SITE_FORM';

/**
 * Whether a form post comes from a page of another origin, by what the browser says of it:
 * - `Origin` (every current browser sends it on a POST): anything but PUBLIC_URL's origin, or
 *   the origin the request itself was addressed to (scheme and Host, as the proxy passes them
 *   when TRUST_PROXY is set), is another site; `null` (a sandboxed frame, a privacy setting, a
 *   redirect across sites) is too;
 * - without `Origin`, `Sec-Fetch-Site` other than `same-origin` (or `none`, typed by the user);
 * - with neither, nothing is known (a client that is no browser, or a very old browser): the
 *   form's token alone decides, and a cross-site page cannot read it.
 */
function crossSiteForm(request: FastifyRequest, publicOrigin: string): boolean {
  const origin = request.headers.origin;
  if (origin !== undefined) return origin !== publicOrigin && origin !== `${request.protocol}://${request.host}`;
  const site = request.headers['sec-fetch-site'];
  return site !== undefined && site !== 'same-origin' && site !== 'none';
}

export async function registerMakerSession(scope: FastifyInstance, opts: MakerSessionOptions): Promise<void> {
  await scope.register(fastifyCookie, { secret: opts.cookieSecret });
  await scope.register(fastifyFormbody, { bodyLimit: 1024 * 1024 });
  await scope.register(fastifyCsrf, {
    cookieKey: CSRF_COOKIE,
    cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true, secure: opts.secureCookies, signed: true },
    getToken: (request: FastifyRequest) => {
      const body = request.body as Record<string, unknown> | undefined;
      return typeof body?._csrf === 'string' ? body._csrf : undefined;
    },
    getUserInfo: (request: FastifyRequest) => request.webSession?.id ?? 'signed-out',
    csrfOpts: { userInfo: true, hmacKey: createHash('sha256').update(`csrf:${opts.cookieSecret}`).digest() },
  });
  scope.decorateRequest('webSession', undefined);
  const publicOrigin = new URL(opts.publicUrl).origin;
  scope.addHook('onRequest', async (request) => {
    if (request.method === 'POST' && crossSiteForm(request, publicOrigin)) {
      throw Object.assign(new Error('A form was posted from another site.'), { statusCode: 403, code: CROSS_SITE_FORM });
    }
    request.webSession = await findSession(opts.pool, request.cookies[SESSION_COOKIE]);
  });
  // Every form post checks its token once the body is parsed; pages never change state on GET.
  scope.addHook('preHandler', (request, reply, done) => {
    if (request.method !== 'POST') return done();
    scope.csrfProtection(request, reply, done);
  });
}

/** The page header's view of the session, with a CSRF token for the forms of the page. */
export function pageSession(request: FastifyRequest, reply: FastifyReply): Session | null {
  const session = request.webSession;
  if (!session) return null;
  return { email: session.maker.email, isAdmin: session.maker.isAdmin, csrfToken: csrfToken(request, reply) };
}

/** A CSRF token for a form on the page being answered (signed in or not). */
export function csrfToken(request: FastifyRequest, reply: FastifyReply): string {
  return reply.generateCsrf({ userInfo: request.webSession?.id ?? 'signed-out' });
}

export function setSessionCookie(reply: FastifyReply, token: string, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, token, { path: '/', httpOnly: true, sameSite: 'lax', secure, maxAge: SESSION_SECONDS });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure });
}
