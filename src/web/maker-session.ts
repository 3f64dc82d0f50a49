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
 */
export interface MakerSessionOptions {
  pool: Pool;
  /** Signs the CSRF cookie; one of the service's own keys (auth.service_keys). */
  cookieSecret: string;
  secureCookies: boolean;
}

export const CSRF_COOKIE = 'catalog_csrf';

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
  scope.addHook('onRequest', async (request) => {
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
