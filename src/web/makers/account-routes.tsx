import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthorizationServer } from '../../auth/authorization-server.ts';
import { disconnectApp, listConnectedApps, recordGrant } from '../../auth/grants.ts';
import type { Mailer } from '../../auth/mailer.ts';
import { parseEmail } from '../../auth/makers.ts';
import { RESOURCE_SCOPES, SCOPES, isScope, type Scope } from '../../auth/scopes.ts';
import { SESSION_COOKIE, createSession, endSession } from '../../auth/sessions.ts';
import { checkSignInLink, createSignInLink, safeReturnTo, useSignInLink } from '../../auth/sign-in-links.ts';
import type { Pool } from '../../db/pool.ts';
import type { KeyedLimiter } from '../../util/keyed-limiter.ts';
import { ConfirmSignInPage, ConnectedAppsPage, ConsentPage, LinkProblemPage, LinkSentPage, SignInPage, type ConsentView } from './account-pages.tsx';
import { ProblemPage } from '../components/problem-page.tsx';
import { contentSecurityPolicy } from '../csp.ts';
import { clearSessionCookie, csrfToken, pageSession, setSessionCookie } from '../maker-session.ts';
import { sendPrivatePage } from '../render.ts';

/**
 * Sign-in by e-mailed link, sign-out, the OAuth consent page and Settings → Connected apps.
 *
 * Asking for a link answers the same page whatever the address (no answer tells whether it has
 * an account); asks are limited per IP and per address. Opening a link shows a confirmation
 * with one button, so a mail scanner that fetches links does not spend it. Signing in always
 * makes a new session token: a token planted in the browser beforehand is never promoted.
 */
export interface AccountPagesDeps {
  pool: Pool;
  mailer: Mailer;
  oauth: AuthorizationServer;
  publicUrl: string;
  secureCookies: boolean;
  signInLimits: { perIp: KeyedLimiter; perAddress: KeyedLimiter };
}

const DEFAULT_AFTER_SIGN_IN = '/dashboard';

export function signInRedirect(reply: FastifyReply, returnTo: string): FastifyReply {
  return reply.redirect(`/signin?return_to=${encodeURIComponent(returnTo)}`, 303);
}

export function registerAccountPages(scope: FastifyInstance, deps: AccountPagesDeps): void {
  const { pool, oauth } = deps;

  scope.get<{ Querystring: { return_to?: string } }>('/signin', async (request, reply) => {
    const returnTo = safeReturnTo(request.query.return_to);
    if (request.webSession) return reply.redirect(returnTo ?? DEFAULT_AFTER_SIGN_IN, 303);
    return sendPrivatePage(reply, <SignInPage csrfToken={csrfToken(request, reply)} returnTo={returnTo} />);
  });

  scope.post<{ Body: { email?: string; return_to?: string } }>('/signin', async (request, reply) => {
    const returnTo = safeReturnTo(request.body?.return_to);
    const parsed = parseEmail(request.body?.email);
    if (!parsed.ok) {
      return sendPrivatePage(
        reply,
        <SignInPage csrfToken={csrfToken(request, reply)} returnTo={returnTo} email={String(request.body?.email ?? '').slice(0, 254)} errors={{ email: parsed.message }} />,
        { status: 400 },
      );
    }
    const byIp = await deps.signInLimits.perIp.consume(request.clientNetwork);
    const byAddress = byIp.allowed ? await deps.signInLimits.perAddress.consume(parsed.email.toLowerCase()) : byIp;
    if (!byIp.allowed || !byAddress.allowed) {
      const minutes = Math.ceil(Math.max(byIp.retryAfterSeconds, byAddress.retryAfterSeconds) / 60);
      reply.header('retry-after', String(Math.max(byIp.retryAfterSeconds, byAddress.retryAfterSeconds)));
      return sendPrivatePage(
        reply,
        <SignInPage
          csrfToken={csrfToken(request, reply)}
          returnTo={returnTo}
          email={parsed.email}
          formError={`Too many sign-in links were asked for ${byIp.allowed ? 'for this address' : 'from your network'} recently. Use the latest link you received, or try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`}
        />,
        { status: 429 },
      );
    }
    const link = await createSignInLink(pool, deps.publicUrl, parsed.email, returnTo);
    try {
      await deps.mailer.send({
        to: parsed.email,
        subject: 'Your sign-in link for the product directory',
        text: [
          'Open this link to sign in to the product directory:',
          '',
          link,
          '',
          'It works once, within 15 minutes. If you did not ask for it, ignore this message: nobody can sign in without the link.',
        ].join('\n'),
      });
    } catch (err) {
      // The mail server refused or could not be reached: the maker is told, with the form kept.
      request.log.error({ err }, 'sign-in e-mail could not be sent');
      return sendPrivatePage(
        reply,
        <SignInPage
          csrfToken={csrfToken(request, reply)}
          returnTo={returnTo}
          email={parsed.email}
          formError="The sign-in e-mail could not be sent just now: the mail service did not take it. Try again in a few minutes."
        />,
        { status: 503 },
      );
    }
    return sendPrivatePage(reply, <LinkSentPage email={parsed.email} />);
  });

  scope.get<{ Params: { token: string } }>('/signin/link/:token', async (request, reply) => {
    const check = await checkSignInLink(pool, request.params.token);
    if (check.status !== 'valid') return sendPrivatePage(reply, <LinkProblemPage problem={check.status} csrfToken={csrfToken(request, reply)} />, { status: 410 });
    return sendPrivatePage(reply, <ConfirmSignInPage csrfToken={csrfToken(request, reply)} token={request.params.token} email={check.email} />);
  });

  scope.post<{ Params: { token: string } }>('/signin/link/:token', async (request, reply) => {
    const used = await useSignInLink(pool, request.params.token);
    if (used.status !== 'signed_in') return sendPrivatePage(reply, <LinkProblemPage problem={used.status} csrfToken={csrfToken(request, reply)} />, { status: 410 });
    await endSession(pool, request.cookies[SESSION_COOKIE]);
    const session = await createSession(pool, used.maker.id);
    setSessionCookie(reply, session.token, deps.secureCookies);
    return reply.redirect(used.returnTo ?? DEFAULT_AFTER_SIGN_IN, 303);
  });

  scope.post('/signout', async (request, reply) => {
    await endSession(pool, request.cookies[SESSION_COOKIE]);
    clearSessionCookie(reply, deps.secureCookies);
    return reply.redirect('/', 303);
  });

  scope.get<{ Params: { uid: string } }>('/oauth/consent/:uid', async (request, reply) => {
    const view = await consentView(request, reply, oauth);
    if (!view) return expiredAuthorization(request, reply);
    const session = pageSession(request, reply);
    if (!session) {
      return sendPrivatePage(
        reply,
        <SignInPage
          csrfToken={csrfToken(request, reply)}
          returnTo={`/oauth/consent/${request.params.uid}`}
          intro={`${view.clientName} asks to connect to your maker account. Sign in first; you will then see what it asks for, and decide.`}
        />,
      );
    }
    return sendPrivatePage(reply, <ConsentPage session={session} view={view} />, {
      csp: contentSecurityPolicy({ publicUrl: deps.publicUrl, formAction: [view.redirectTarget] }),
    });
  });

  scope.post<{ Params: { uid: string }; Body: { decision?: string } }>('/oauth/consent/:uid', async (request, reply) => {
    const session = request.webSession;
    if (!session) return signInRedirect(reply, `/oauth/consent/${request.params.uid}`);
    const view = await consentView(request, reply, oauth);
    if (!view) return expiredAuthorization(request, reply);
    const csp = contentSecurityPolicy({ publicUrl: deps.publicUrl, formAction: [view.redirectTarget] });
    reply.header('content-security-policy', csp);
    if (request.body?.decision !== 'approve') {
      const to = await (await oauth.provider()).interactionResult(
        request.raw,
        reply.raw,
        { error: 'access_denied', error_description: 'The maker denied the request.' },
        { mergeWithLastSubmission: false },
      );
      return reply.redirect(to, 303);
    }
    const grant = new (await oauth.provider()).Grant({ accountId: session.maker.id, clientId: view.clientId });
    if (view.requested.oidc.length) grant.addOIDCScope(view.requested.oidc.join(' '));
    for (const [indicator, scopes] of Object.entries(view.requested.resources)) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await recordGrant(pool, {
      grantId,
      makerId: session.maker.id,
      clientId: view.clientId,
      clientName: view.clientName,
      clientSite: view.clientSite,
      clientKind: view.kind,
      scopes: view.scopes,
    });
    const to = await (await oauth.provider()).interactionResult(
      request.raw,
      reply.raw,
      { login: { accountId: session.maker.id, remember: false }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
    return reply.redirect(to, 303);
  });

  scope.get<{ Querystring: { done?: string } }>('/settings/apps', async (request, reply) => {
    const session = pageSession(request, reply);
    if (!session || !request.webSession) return signInRedirect(reply, '/settings/apps');
    const apps = await listConnectedApps(pool, request.webSession.maker.id);
    const notice = request.query.done === 'disconnected' ? { kind: 'success' as const, message: 'The app was disconnected: it has lost access to your account.' } : null;
    return sendPrivatePage(reply, <ConnectedAppsPage session={session} apps={apps} notice={notice} />);
  });

  scope.post<{ Params: { grantId: string } }>('/settings/apps/:grantId/disconnect', async (request, reply) => {
    const session = request.webSession;
    if (!session) return signInRedirect(reply, '/settings/apps');
    await disconnectApp(pool, session.maker.id, request.params.grantId);
    return reply.redirect('/settings/apps?done=disconnected', 303);
  });
}

function expiredAuthorization(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendPrivatePage(
    reply,
    <ProblemPage
      title="This request has expired"
      message="The app's request to connect is no longer open (it expires after an hour, or was already answered). Start again from the app."
      session={pageSession(request, reply)}
    />,
    { status: 400 },
  );
}

/** What the consent page shows of an open authorization request, or undefined when it is gone. */
async function consentView(request: FastifyRequest<{ Params: { uid: string } }>, reply: FastifyReply, oauth: AuthorizationServer): Promise<ConsentView | undefined> {
  let details;
  try {
    details = await (await oauth.provider()).interactionDetails(request.raw, reply.raw);
  } catch {
    return undefined;
  }
  if (details.uid !== request.params.uid) return undefined;
  const clientId = String(details.params.client_id);
  const client = await (await oauth.provider()).Client.find(clientId);
  if (!client) return undefined;
  // What the request asks for (the library has already dropped what this client may not have,
  // e.g. offline_access without the refresh_token grant). Each authorization gets a grant of its
  // own, so the grant holds exactly this. Resource scopes belong to the requested resource, the
  // MCP endpoint by default.
  const asked = String(details.params.scope ?? '').split(' ').filter((s): s is Scope => isScope(s));
  const resource = typeof details.params.resource === 'string' ? details.params.resource : oauth.resource;
  const oidc = asked.filter((s) => !RESOURCE_SCOPES.includes(s));
  const onResource = asked.filter((s) => RESOURCE_SCOPES.includes(s));
  const resources: Record<string, Scope[]> = onResource.length ? { [resource]: onResource } : {};
  const requested = new Set<Scope>([...oidc, ...Object.values(resources).flat()]);
  const redirectUri = String(details.params.redirect_uri ?? client.redirectUris?.[0] ?? '');
  const kind = (client as unknown as { clientIdMetadataDocument?: boolean }).clientIdMetadataDocument ? 'metadata_document' : 'registered';
  const hostOf = (u: string | undefined) => (u ? (URL.parse(u)?.host ?? null) : null);
  return {
    uid: details.uid,
    clientId,
    clientName: client.clientName ?? hostOf(kind === 'metadata_document' ? clientId : redirectUri) ?? 'An unnamed app',
    clientSite: hostOf(client.clientUri) ?? (kind === 'metadata_document' ? hostOf(clientId) : null),
    kind,
    redirectTarget: redirectUri,
    scopes: SCOPES.filter((s) => requested.has(s)),
    requested: { oidc, resources },
  };
}
