import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OAUTH_ROUTES, TEMPORARILY_UNAVAILABLE, type AuthorizationServer } from '../auth/authorization-server.ts';
import { UNAVAILABLE_RETRY_SECONDS } from '../contract/errors.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import type { RefreshReplays } from '../auth/refresh-replay.ts';
import { SCOPES } from '../auth/scopes.ts';
import type { KeyedLimiter } from '../util/keyed-limiter.ts';

/**
 * The authorization server's endpoints on the service's origin, handed to the library as they
 * arrive (it reads request bodies itself), plus what the library does not serve:
 * - RFC 8414 metadata at /.well-known/oauth-authorization-server (the same document as the
 *   library's /.well-known/openid-configuration);
 * - RFC 9728 protected-resource metadata for the MCP endpoint, at the root and under /api/mcp;
 * - CORS on the registration endpoint and both metadata documents (the library answers CORS on
 *   its token, revocation, JWKS and discovery endpoints);
 * - a per-IP limit on dynamic registrations;
 * - a retry of the same refresh within seconds getting the same answer (refresh-replay.ts);
 * - JSON answers for methods the endpoints do not take.
 */
export interface OAuthRouteDeps {
  oauth: AuthorizationServer;
  replays: RefreshReplays;
  registrationLimiter: KeyedLimiter;
  /** The service's public origin (the issuer). */
  publicUrl: string;
  /** The MCP endpoint URL (the protected resource). */
  mcpUrl: string;
  mcpPath: string;
}

/** SQLSTATE of a lock wait that ran out of lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';
/**
 * The most a token request body may hold: the library reads at most 56 KiB and answers a longer
 * body with "failed to parse the request body"; refusing it here first says what is wrong.
 */
export const TOKEN_BODY_LIMIT = 56 * 1024;

/** Where clients find this resource's metadata: named in every WWW-Authenticate challenge. */
export function resourceMetadataUrl(publicUrl: string, mcpPath: string): string {
  return `${publicUrl}${PROTECTED_RESOURCE_PATH}${mcpPath}`;
}

function sendOAuthJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').header('pragma', 'no-cache').type('application/json; charset=utf-8').send(JSON.stringify(body));
}

function allowAnyOrigin(reply: FastifyReply): void {
  reply.header('access-control-allow-origin', '*');
}

function preflight(reply: FastifyReply, methods: string): FastifyReply {
  allowAnyOrigin(reply);
  return reply
    .code(204)
    .header('access-control-allow-methods', methods)
    .header('access-control-allow-headers', 'content-type, authorization, mcp-protocol-version')
    .header('access-control-max-age', '600')
    .send();
}

/** A request carrying a body already read, for the library, which reads bodies itself. */
function withBody(req: IncomingMessage, body: Buffer): IncomingMessage {
  const replay = Readable.from(body.length > 0 ? [body] : []);
  return Object.assign(replay, {
    headers: req.headers,
    rawHeaders: req.rawHeaders,
    method: req.method,
    url: req.url,
    httpVersion: req.httpVersion,
    httpVersionMajor: req.httpVersionMajor,
    httpVersionMinor: req.httpVersionMinor,
    socket: req.socket,
    connection: req.socket,
    complete: true,
    trailers: {},
    rawTrailers: [],
  }) as unknown as IncomingMessage;
}

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Every authorization is put before the maker on the consent page, so every request is one with
 * prompt=consent. Saying so keeps offline_access in a request that did not ask for the prompt:
 * the library (following OpenID Connect) drops offline_access otherwise, and such a client would
 * silently get no refresh token.
 */
function withConsentPrompt(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  const prompts = (params.get('prompt') ?? '').split(' ').filter(Boolean);
  if (params.getAll('prompt').length > 1 || prompts.includes('consent') || prompts.includes('none')) return url;
  params.set('prompt', [...prompts, 'consent'].join(' '));
  return `${url.slice(0, q)}?${params.toString()}`;
}

export async function registerOAuthRoutes(app: FastifyInstance, deps: OAuthRouteDeps): Promise<void> {
  const { oauth, replays } = deps;
  const protectedResource = JSON.stringify({
    resource: deps.mcpUrl,
    authorization_servers: [deps.publicUrl],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Product catalog MCP server',
    resource_documentation: `${deps.publicUrl}/api/v1/docs`,
  });

  /** From here the library writes the response; headers our hooks set are carried over. */
  const handOver = async (request: FastifyRequest, reply: FastifyReply, req: IncomingMessage = request.raw): Promise<void> => {
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined && !reply.raw.hasHeader(name)) reply.raw.setHeader(name, value);
    }
    reply.hijack();
    await oauth.handle(req, reply.raw);
  };

  /**
   * The endpoints a client calls (token, revocation, registration) answer JSON whatever the
   * request's Accept says: the library would otherwise render its errors as a page for a client
   * that prefers HTML.
   */
  const handOverJson = async (request: FastifyRequest, reply: FastifyReply, req: IncomingMessage = request.raw): Promise<void> => {
    request.raw.headers.accept = 'application/json';
    return handOver(request, reply, req);
  };

  const methodNotAllowed = (allow: string) => async (request: FastifyRequest, reply: FastifyReply) =>
    sendOAuthJson(reply.header('allow', allow), 405, {
      error: 'invalid_request',
      error_description: `${request.method} is not allowed here; use ${allow.split(', ').join(' or ')}.`,
    });

  await app.register(async (scope) => {
    // The library parses its own request bodies: Fastify must leave the stream unread.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

    const route = (url: string, methods: string[], handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) => {
      scope.route({ method: methods as never, url, handler });
      const others = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter((m) => !methods.includes(m));
      if (others.length) scope.route({ method: others as never, url, handler: methodNotAllowed(methods.filter((m) => m !== 'OPTIONS').join(', ')) });
    };

    // GET only: the library takes no posted authorization request (its HTTP POST methods are
    // off) and resumes by GET; a POST is answered 405 here rather than a 404 page from it.
    route(OAUTH_ROUTES.authorization, ['GET'], async (request, reply) => {
      request.raw.url = withConsentPrompt(request.raw.url ?? '');
      return handOver(request, reply);
    });
    route(`${OAUTH_ROUTES.authorization}/:uid`, ['GET'], handOver);
    route(OAUTH_ROUTES.revocation, ['POST', 'OPTIONS'], handOverJson);
    route(OAUTH_ROUTES.jwks, ['GET', 'OPTIONS'], handOver);
    route('/.well-known/openid-configuration', ['GET', 'OPTIONS'], handOver);
    route('/.well-known/oauth-authorization-server', ['GET', 'OPTIONS'], async (request, reply) => {
      // The same document as the OpenID-style path, served by the library under that path.
      request.raw.url = '/.well-known/openid-configuration';
      return handOver(request, reply);
    });

    const resourceMetadata = async (request: FastifyRequest, reply: FastifyReply) => {
      if (request.method === 'OPTIONS') return preflight(reply, 'GET');
      allowAnyOrigin(reply);
      return reply.header('cache-control', 'public, max-age=3600').type('application/json; charset=utf-8').send(protectedResource);
    };
    route(PROTECTED_RESOURCE_PATH, ['GET', 'OPTIONS'], resourceMetadata);
    route(`${PROTECTED_RESOURCE_PATH}${deps.mcpPath}`, ['GET', 'OPTIONS'], resourceMetadata);

    route(OAUTH_ROUTES.registration, ['POST', 'OPTIONS'], async (request, reply) => {
      // Like every answer of the endpoints clients call (authorization-server.ts), never cached.
      if (request.method === 'OPTIONS') return preflight(reply.header('cache-control', 'no-store'), 'POST');
      allowAnyOrigin(reply);
      const decision = await deps.registrationLimiter.consume(request.clientNetwork);
      if (!decision.allowed) {
        reply.header('retry-after', String(decision.retryAfterSeconds));
        return sendOAuthJson(reply, 429, {
          error: 'temporarily_unavailable',
          error_description: `Too many client registrations from this address; retry in ${decision.retryAfterSeconds} s.`,
        });
      }
      return handOverJson(request, reply);
    });

    route(OAUTH_ROUTES.token, ['POST', 'OPTIONS'], async (request, reply) => {
      if (request.method === 'OPTIONS') return handOver(request, reply);
      const body = await readBody(request.raw, TOKEN_BODY_LIMIT);
      if (body === undefined) return sendOAuthJson(reply, 400, { error: 'invalid_request', error_description: 'The request body is too large.' });
      const params = new URLSearchParams(body.toString('utf8'));
      const refreshToken = params.get('grant_type') === 'refresh_token' ? params.get('refresh_token') : null;
      if (!refreshToken) return handOverJson(request, reply, withBody(request.raw, body));
      try {
        return await replays.oneAtATime(refreshToken, async () => {
          const earlier = await replays.recall(refreshToken);
          if (earlier === undefined) return handOverJson(request, reply, withBody(request.raw, body));
          if (request.headers.origin) reply.header('access-control-allow-origin', request.headers.origin);
          return sendOAuthJson(reply, 200, JSON.parse(earlier));
        });
      } catch (err) {
        // No lock (the database is away, or another request with this token takes too long):
        // nothing was spent, so the client may retry the same refresh.
        if (reply.sent || !(isDatabaseUnavailable(err) || (err as { code?: string }).code === LOCK_NOT_AVAILABLE)) throw err;
        request.log.warn({ err }, 'refresh refused: its lock could not be taken');
        return sendOAuthJson(reply.header('retry-after', String(UNAVAILABLE_RETRY_SECONDS)), 503, TEMPORARILY_UNAVAILABLE);
      }
    });
  });
}
