import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Configuration, KoaContextWithOIDC, default as ProviderType } from 'oidc-provider';
import { UNAVAILABLE_RETRY_SECONDS } from '../contract/errors.ts';
import type { Pool } from '../db/pool.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { loadOidcProvider } from './load-oidc-provider.ts';
import { withProviderContextReleased } from './provider-context.ts';
import { CLIENT_DOCUMENT_MAX_BYTES, clientDocumentProblem } from './client-document-problem.ts';
import { createOAuthStore, spendCodeOnWrongVerifier } from './oauth-store.ts';
import { dropResourceScopes, normalizeRedirectKind } from './redirect-uris.ts';
import { RESOURCE_SCOPES, SCOPES } from './scopes.ts';
import type { ServiceKeys } from './service-keys.ts';

/**
 * The OAuth 2.1 authorization server for MCP clients, on the service's own origin: oidc-provider
 * (a certified, widely used implementation) configured for public clients only:
 *
 * - clients register by Client ID Metadata Document (client_id is an https URL, fetched through
 *   the service's SSRF-guarded fetch) or by Dynamic Client Registration (RFC 7591);
 * - authorization code with PKCE S256 (the only method the library implements), exact redirect
 *   match, any port on loopback (RFC 8252) for clients whose redirects are on loopback;
 * - `resource` (RFC 8707) bound to codes and tokens: the MCP URL by default, `invalid_target`
 *   for anything else; access tokens are ES256 JWTs for that audience, valid one hour;
 * - refresh tokens only with offline_access (then named in the token answer's scope), 30 days,
 *   rotated on every use; reuse of a spent one or of an authorization code revokes the grant;
 *   a code presented with a wrong verifier is spent;
 * - every answer of the token, revocation and registration endpoints is Cache-Control: no-store;
 * - every authorization goes through the consent page (src/web/makers/account-routes.tsx), where a signed-in
 *   maker approves or denies; nothing is issued before Approve.
 *
 * Interactions are served at /oauth/consent/:uid; the library's own endpoints live under /oauth.
 */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
} as const;

const CONSENT_PATH = '/oauth/consent';

/** The endpoints clients call directly: nothing they answer may be cached. */
const CLIENT_ENDPOINTS: ReadonlySet<string> = new Set([OAUTH_ROUTES.token, OAUTH_ROUTES.revocation, OAUTH_ROUTES.registration]);

/** The OAuth answer to a request met while the database cannot be reached (HTTP 503). */
export const TEMPORARILY_UNAVAILABLE = {
  error: 'temporarily_unavailable',
  error_description: `The authorization server cannot reach its database right now; retry in about ${UNAVAILABLE_RETRY_SECONDS} seconds.`,
} as const;

const HOUR = 3600;
const DAY = 24 * HOUR;
const ACCESS_TOKEN_SECONDS = HOUR;
const REFRESH_TOKEN_SECONDS = 30 * DAY;

/** An HTML page and the Content-Security-Policy it is sent with. */
export interface ErrorPage {
  html: string;
  contentSecurityPolicy: string;
}

/** What the error page is told of a refused request. */
export interface OAuthErrorForPage {
  error: string;
  description: string | undefined;
  /** Why, in a sentence for a person, when the library's description alone does not say. */
  detail?: string | undefined;
}

export interface AuthorizationServerOptions {
  /** The issuer: the service's public origin. */
  issuer: string;
  /** The MCP endpoint URL: the only resource tokens are issued for, and their audience. */
  resource: string;
  pool: Pool;
  keys: ServiceKeys;
  /** Whether X-Forwarded-Proto and -Host are trusted (TRUST_PROXY set). */
  trustProxy: boolean;
  /** Who a request comes from: the HTTP side's one reading, so the library's ctx.ip is that client too. */
  clients: ClientReading;
  /** A dynamically registered client unused this long is forgotten. */
  clientIdleSeconds: number;
  /** Fetches Client ID Metadata Documents; must refuse private addresses (src/sites). */
  fetch: NonNullable<Configuration['fetch']>;
  /** Renders the page shown when an authorization request cannot be answered by redirect. */
  renderErrorPage: (error: OAuthErrorForPage) => ErrorPage;
  /** Told of each answered refresh, to let a retry within seconds get the same answer. */
  onRefreshAnswered?: (spentRefreshToken: string, body: unknown) => Promise<void>;
  log: Logger;
}

/** Who a request comes from, as the HTTP side reads it (src/http/client/client-address.ts, under TRUST_PROXY). */
export interface ClientReading {
  of(req: IncomingMessage): { readonly address: string };
}

export interface AuthorizationServer {
  readonly issuer: string;
  readonly resource: string;
  /** The library's provider, built on first use. */
  provider(): Promise<ProviderType>;
  /** Hands a request to the library (its endpoints, discovery, resume after consent). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Builds the provider now rather than on the first OAuth request. */
  warm(): Promise<void>;
}

/**
 * The authorization server, built on first use: loading oidc-provider and its dependencies and
 * configuring it costs a good part of a second, which a process answering reads does not wait
 * for (service.ts warms it once the process is ready).
 */
export function createAuthorizationServer(opts: AuthorizationServerOptions): AuthorizationServer {
  let built: Promise<{ provider: ProviderType; handle: AuthorizationServer['handle'] }> | undefined;
  const build = () => {
    built ??= buildAuthorizationServer(opts);
    // A failed build is tried again by the next request, rather than failing every one.
    built.catch(() => {
      built = undefined;
    });
    return built;
  };
  return {
    issuer: opts.issuer,
    resource: opts.resource,
    provider: async () => (await build()).provider,
    handle: async (req, res) => (await build()).handle(req, res),
    warm: async () => {
      await build();
    },
  };
}

async function buildAuthorizationServer(opts: AuthorizationServerOptions): Promise<{ provider: ProviderType; handle: AuthorizationServer['handle'] }> {
  const { Provider, errors, interactionPolicy } = await loadOidcProvider(opts.log);
  const secureCookies = opts.issuer.startsWith('https:');
  const cookieOptions = { signed: true, httpOnly: true, sameSite: 'lax' as const, secure: secureCookies, path: '/' };

  // Every authorization needs the maker's explicit approval, even when a grant exists already:
  // the consent step also establishes who the maker is (from the site's own sign-in).
  const policy = interactionPolicy.base();
  policy.get('consent')!.checks.add(
    new interactionPolicy.Check('approval_required', 'the maker approves every authorization', (ctx: KoaContextWithOIDC) =>
      ctx.oidc.result?.consent?.grantId ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
    ),
  );

  const configuration: Configuration = {
    adapter: createOAuthStore({ pool: opts.pool, clientIdleSeconds: opts.clientIdleSeconds }),
    clients: [],
    async findAccount(_ctx, id) {
      const { rows } = await opts.pool.query('SELECT 1 FROM catalog.makers WHERE id::text = $1', [id]);
      if (!rows[0]) return undefined;
      // Tokens carry the maker id only: a client never learns the account's e-mail address.
      return { accountId: id, claims: () => ({ sub: id }) };
    },
    jwks: { keys: opts.keys.signingKeys as never },
    cookies: {
      keys: [...opts.keys.cookieKeys],
      names: { session: 'oauth_session', interaction: 'oauth_interaction', resume: 'oauth_resume' },
      long: cookieOptions,
      short: cookieOptions,
    },
    scopes: [...SCOPES.filter((s) => !RESOURCE_SCOPES.includes(s))],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    clientAuthMethods: ['none'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      // Tokens are plain bearer tokens for the MCP endpoint: no proof-of-possession binding the
      // resource server would have to verify, and no pushed requests (no endpoint is mounted).
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      introspection: { enabled: false },
      revocation: {
        enabled: true,
        // A client revokes only its own tokens; anyone else's are left alone, and the answer is
        // the same 200 (RFC 7009). Said here rather than left to the library's default, which
        // prints a notice to the service's output on every revocation.
        allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
      },
      registration: { enabled: true, issueRegistrationAccessToken: false },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        cacheDuration: { min: 60, max: 6 * HOUR },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf ?? opts.resource,
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, indicator) {
          if (indicator !== opts.resource) throw new errors.InvalidTarget(`the only resource is ${opts.resource}`);
          return {
            scope: RESOURCE_SCOPES.join(' '),
            audience: opts.resource,
            accessTokenTTL: ACCESS_TOKEN_SECONDS,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    } as Configuration['features'],
    // A grant id in each access token lets API processes refuse tokens of a disconnected app.
    extraTokenClaims: (_ctx, token) => ('grantId' in token ? { gid: token.grantId } : undefined),
    // Every authorization gets a grant of its own, made on the consent page.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    interactions: {
      policy,
      url: (_ctx, interaction) => `${CONSENT_PATH}/${interaction.uid}`,
    },
    // Tokens outlive the library's browser session, which ends with each authorization (below).
    expiresWithSession: () => false,
    rotateRefreshToken: true,
    issueRefreshToken: (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
    ttl: {
      AccessToken: ACCESS_TOKEN_SECONDS,
      AuthorizationCode: 60,
      RefreshToken: REFRESH_TOKEN_SECONDS,
      // A grant's expiry moves forward with each refresh token issued for it (oauth-store.ts).
      Grant: REFRESH_TOKEN_SECONDS,
      Interaction: HOUR,
      Session: DAY,
    },
    routes: OAUTH_ROUTES,
    extraClientMetadata: {
      // Not a real property: declaring one makes the library run the validator on every client
      // (registered or fetched): redirect URIs get their kind, and the client's scope is fitted.
      properties: ['catalog_redirect_kind'],
      validator(_ctx, key, _value, metadata) {
        if (key !== 'catalog_redirect_kind') return;
        normalizeRedirectKind(metadata, (message) => new errors.InvalidClientMetadata(message));
        dropResourceScopes(metadata, RESOURCE_SCOPES);
      },
    },
    // Browser-based clients call the token and revocation endpoints cross-origin; the code and
    // its PKCE verifier are what protect them, and no cookie is involved.
    clientBasedCORS: (_ctx, origin, client) => origin !== 'null' && client.clientAuthMethod === 'none',
    fetch: opts.fetch,
    fetchResponseBodyLimits: { 'client_id metadata document': CLIENT_DOCUMENT_MAX_BYTES },
    async renderError(ctx, out, error) {
      const page = opts.renderErrorPage(
        isDatabaseUnavailable(error)
          ? { error: TEMPORARILY_UNAVAILABLE.error, description: TEMPORARILY_UNAVAILABLE.error_description }
          : { error: String(out.error), description: out.error_description ? String(out.error_description) : undefined, detail: clientDocumentProblem(error) },
      );
      ctx.type = 'html';
      ctx.set('cache-control', 'no-store');
      ctx.set('content-security-policy', page.contentSecurityPolicy);
      ctx.set('referrer-policy', 'same-origin');
      ctx.body = page.html;
    },
    discovery: { service_documentation: `${opts.issuer}/api/v1/docs` },
  };

  const provider = new Provider(opts.issuer, configuration);
  provider.proxy = opts.trustProxy;
  // Koa's own reading would take the leftmost X-Forwarded-For entry, which a client writes.
  provider.use(async (ctx, next) => {
    ctx.request.ip = opts.clients.of(ctx.req).address;
    await next();
  });

  provider.on('server_error', (ctx: KoaContextWithOIDC, err: Error) => {
    if (!isDatabaseUnavailable(err)) return opts.log.error({ err }, 'authorization server error');
    (ctx.state as { databaseUnavailable?: boolean }).databaseUnavailable = true;
    opts.log.warn({ err }, 'authorization request refused: the database cannot be reached');
  });
  // The library answers any failure as a 500 server_error; one that met an unreachable database
  // is a 503 the client may retry in a moment (RFC 6749's temporarily_unavailable).
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.status !== 500 || !(ctx.state as { databaseUnavailable?: boolean }).databaseUnavailable) return;
    ctx.status = 503;
    ctx.set('retry-after', String(UNAVAILABLE_RETRY_SECONDS));
    if (ctx.body && typeof ctx.body === 'object' && !Buffer.isBuffer(ctx.body)) ctx.body = { ...TEMPORARILY_UNAVAILABLE };
  });
  const refusal = (err: Error & { error_detail?: string }) => ({ name: err.name, message: err.message, detail: err.error_detail });
  provider.on('grant.error', (_ctx: unknown, err: Error) => opts.log.debug({ err: refusal(err) }, 'token request refused'));
  provider.on('authorization.error', (_ctx: unknown, err: Error) =>
    opts.log.debug({ err: refusal(err) }, 'authorization request refused'),
  );

  // The endpoints a client calls answer nothing a cache may keep, whatever the answer: the
  // library marks its token and registration answers no-store, but not revocation's, nor its
  // CORS preflights; and an error thrown past the library's own handlers would reach Koa's,
  // which clears every header and answers plain text. This runs outermost, so every answer of
  // the three endpoints leaves no-store, and a failure is answered as an OAuth error in JSON.
  provider.use(async (ctx, next) => {
    if (!CLIENT_ENDPOINTS.has(ctx.path.replace(/\/+$/, ''))) return next();
    try {
      await next();
    } catch (err) {
      opts.log.error({ err }, 'authorization server error');
      ctx.status = 500;
      ctx.body = { error: 'server_error', error_description: 'The authorization server could not answer this request; retry shortly.' };
    }
    ctx.set('cache-control', 'no-store');
  });

  // A code presented by its own client with a verifier that does not match is spent: whoever
  // holds a stolen code gets one guess, and the client that made the request gets invalid_grant
  // from then on, as for a code used twice. Nothing was issued for the code yet; the grant its
  // consent made can now never issue anything, so it is revoked with it (it leaves the maker's
  // Connected apps). A code already redeemed is left alone: a wrong verifier proves nothing, so
  // it must not be a way for anyone who saw a used code to disconnect the maker's app (with the
  // right verifier, a second redemption revokes what the first issued, as the library does).
  provider.use(async (ctx, next) => {
    await next();
    const params = ctx.oidc?.params as { grant_type?: unknown; code?: unknown; code_verifier?: unknown } | undefined;
    const client = ctx.oidc?.client;
    if (ctx.oidc?.route !== 'token' || ctx.status !== 400 || !client || params?.grant_type !== 'authorization_code' || typeof params.code !== 'string') return;
    if ((ctx.body as { error?: unknown } | undefined)?.error !== 'invalid_grant') return;
    const verifier = typeof params.code_verifier === 'string' ? params.code_verifier : null;
    const challenge = verifier === null ? null : createHash('sha256').update(verifier, 'ascii').digest('base64url');
    const grantId = await spendCodeOnWrongVerifier(opts.pool, params.code, client.clientId, challenge);
    if (grantId) await (await ctx.oidc.provider.Grant.find(grantId))?.destroy();
  });

  // The site's own session says who the maker is (the consent page signs the authorization in);
  // the library's session is needed only while one authorization is under way. Ending it when
  // the authorization is answered means a browser later used by another maker never carries
  // the previous maker's account into a new authorization.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'resume') await ctx.oidc.session?.destroy();
  });

  // A registered client's scope is kept without the resource's scopes (see redirect-uris.ts), but
  // the registration answer reports what the client registered, as RFC 7591 says it should.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route !== 'registration' || ctx.status !== 201 || !ctx.body || typeof ctx.body !== 'object') return;
    const asked = (ctx.oidc.body as { scope?: unknown } | undefined)?.scope;
    if (typeof asked !== 'string') return;
    const registered = asked.split(' ').filter((scope) => (SCOPES as readonly string[]).includes(scope));
    if (registered.length) (ctx.body as Record<string, unknown>).scope = [...new Set(registered)].join(' ');
  });

  // The metadata names the resource's scopes too (the library lists only its own), and not
  // openid, which no part of this service uses.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'discovery' && ctx.status === 200 && ctx.body && typeof ctx.body === 'object') {
      (ctx.body as Record<string, unknown>).scopes_supported = [...SCOPES];
    }
  });

  if (opts.onRefreshAnswered) {
    const onRefreshAnswered = opts.onRefreshAnswered;
    provider.use(async (ctx, next) => {
      await next();
      const params = ctx.oidc?.params as { grant_type?: string; refresh_token?: string } | undefined;
      if (ctx.oidc?.route === 'token' && ctx.status === 200 && params?.grant_type === 'refresh_token' && params.refresh_token) {
        await onRefreshAnswered(params.refresh_token, ctx.body);
      }
    });
  }

  // A token answer that carries a refresh token says offline_access is granted: the library
  // reports the access token's scopes (the resource's), and offline_access belongs to the
  // grant, not to the resource. Innermost of ours, so whatever looks at the answer afterwards
  // (the refresh replay above keeps it for a retry) sees it complete.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route !== 'token' || ctx.status !== 200 || !ctx.body || typeof ctx.body !== 'object') return;
    const body = ctx.body as { refresh_token?: unknown; scope?: unknown };
    if (typeof body.refresh_token !== 'string') return;
    const scopes = typeof body.scope === 'string' ? body.scope.split(' ').filter(Boolean) : [];
    if (!scopes.includes('offline_access')) body.scope = [...scopes, 'offline_access'].join(' ');
  });

  const callback = provider.callback();
  return { provider, handle: await withProviderContextReleased((req, res) => Promise.resolve(callback(req, res))) };
}
