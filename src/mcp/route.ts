import { TOOL_OPERATIONS, type DeprecationReading } from '../contract/deprecations.ts';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Accounts } from '../auth/accounts.ts';
import type { MakerCatalog } from '../catalog/maker-catalog.ts';
import type { Config } from '../config/config.ts';
import type { ReadService } from '../read/read-service.ts';
import type { Budgets } from '../budgets/budgets.ts';
import { rateLimitHeaders } from '../budgets/rate-limit-headers.ts';
import type { BudgetOwner, Counted, Verdict } from '../budgets/verdict.ts';
import { REQUEST_KEY, type BudgetedRequest } from '../http/budget-hook.ts';
import { sendCatalogError } from '../http/errors.ts';
import { resourceMetadataUrl } from '../http/oauth-routes.ts';
import type { Caller } from '../auth/caller.ts';
import { authInfoFor, callerOf, type McpCaller, type McpDeps } from './call-context.ts';
import { createDirectReadCalls, type DirectAnswer, type DirectReadCall, type DirectReadCalls } from './direct-read-calls.ts';
import { jsonRpcError } from './jsonrpc-error.ts';
import { authenticateMcpRequest, type McpAuth } from './mcp-auth.ts';
import { MAKER_TOOL_SCOPES } from './maker-tool-scopes.ts';
import { MCP_BODY, MCP_KEY_VERDICT, MCP_PATH, type McpBodyRequest } from './mcp-path.ts';
import { isKeyBearer } from '../auth/consumer-keys/consumer-keys.ts';
import { createOriginPolicy } from './origin.ts';
import { requestIdOf, SUPPORTED_VERSIONS, unsupportedVersionBody, type Era } from './protocol.ts';
import { cacheScopeOf } from './resources.ts';
import { createMcpServerPool, type McpServerPool } from './server.ts';
import { traceToolCall } from './tool-tracing.ts';

/**
 * The MCP endpoint: Streamable HTTP without sessions at /api/mcp, in the same Fastify app as
 * REST, serving both protocol eras (protocol.ts) statelessly. A plain read (a read tool's call,
 * a resource read) is answered by the fast path (direct-read-calls.ts); every other POST goes to
 * the SDK (`@modelcontextprotocol/server`): a 2026-07-28 request to its handler
 * (createMcpHandler: discovery, header and envelope checks, `resultType`, cache fields), a
 * 2025-era request to a per-request transport answering plain JSON, each on a server borrowed
 * from the pool. GET (the 2025 era's server-to-client stream) and DELETE (session end) have no
 * meaning without sessions: 405.
 */
export { MCP_PATH };
const BODY_LIMIT = 1024 * 1024;

/** Headers a browser client may read: the request id and the caller's budget, as REST reports them. */
const EXPOSED_HEADERS = ['x-request-id', 'www-authenticate', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy', 'retry-after', 'deprecation', 'sunset', 'link'];
/** Request headers a browser client sends to the endpoint. */
const ALLOWED_HEADERS = ['content-type', 'accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'authorization'];

/** Bytes of serialized read-tool results kept by the fast path (when the response cache is on). */
const RESULT_CACHE_BYTES = 32 * 1024 * 1024;

interface McpHandling {
  pool: McpServerPool;
  /** The SDK's handler of 2026-07-28 requests. */
  modern: McpHttpHandler;
  /** The fast path of plain reads; undefined with DIRECT_READS=false (the SDK answers everything). */
  direct: DirectReadCalls | undefined;
  auth: McpAuth;
  /** Whose budget a request spends (a key's, a sign-in's, its address's), or its key's refusal. */
  budgets: Budgets;
  deprecations: DeprecationReading | undefined;
}

/** What the MCP endpoint needs from the process: the composition (src/app.ts) passes its own deps. */
export interface McpRouteDeps {
  config: Config;
  read: ReadService;
  /** Request budgets: a consumer key's (docs/keys.md) or a sign-in's are spent instead of the address's. */
  budgets: Budgets;
  accounts: Accounts;
  /** The makers' commands, called by the maker tools. */
  maker: MakerCatalog;
  /** What the API has deprecated: a read tool's call that uses it is answered with the headers saying so. */
  deprecations?: DeprecationReading;
}

/** What the composition needs of the endpoint to answer beneath Fastify (direct-mcp.ts). */
export interface McpRegistration {
  readonly direct: DirectReadCalls | undefined;
}

export async function registerMcp(app: FastifyInstance, deps: McpRouteDeps): Promise<McpRegistration> {
  const policy = createOriginPolicy(deps.config.publicUrl, deps.config.mcpAllowedOrigins);
  const mcpDeps: McpDeps = {
    read: deps.read,
    budgets: deps.budgets,
    maker: deps.maker,
    publicUrl: deps.config.publicUrl,
    readTtlMs: deps.config.cache.maxAgeSeconds * 1000,
  };
  const pool = createMcpServerPool(mcpDeps);
  const handling: McpHandling = {
    pool,
    modern: createMcpHandler(
      ({ era, authInfo }) => {
        // The caller the route attached to this request's AuthInfo (serveWithSdk).
        const scope = cacheScopeOf(callerOf({ http: { authInfo } }));
        const server = pool.acquire(era, scope);
        // Back to the pool once its exchange is closed, after what that queued has run.
        server.server.onclose = () => setImmediate(() => pool.release(server));
        return server;
      },
      // What the handler refuses (a header mismatch, an unsupported envelope) is answered to the
      // client; the process logs it only at debug.
      { legacy: 'reject', maxRequestBodySize: BODY_LIMIT, onerror: (err) => app.log.debug({ err }, 'MCP request refused or failed in the SDK') },
    ),
    direct: deps.config.directReads ? createDirectReadCalls(mcpDeps, {
          cacheMaxBytes: deps.config.cache.maxEntries > 0 ? RESULT_CACHE_BYTES : 0,
          deprecatedTool: (name) => deps.deprecations?.touches(TOOL_OPERATIONS[name]) === true,
        }) : undefined,
    auth: {
      verifier: deps.accounts.accessTokens,
      resourceMetadataUrl: resourceMetadataUrl(deps.config.publicUrl, MCP_PATH),
      toolScopes: MAKER_TOOL_SCOPES,
    },
    budgets: deps.budgets,
    deprecations: deps.deprecations,
  };
  // Its own scope: the origin check and the JSON-RPC error answers apply to /api/mcp only.
  await app.register(async (scope) => {
    // Callback style: this runs on every MCP request, and an async hook costs a promise each.
    scope.addHook('onRequest', (request, reply, done) => {
      const origin = request.headers.origin;
      if (origin === undefined) return done();
      if (!policy.allows(origin)) {
        void reply.code(403).send(jsonRpcError(-32000, `Forbidden: requests from origin ${origin} are not allowed.`));
        return;
      }
      setCorsHeaders(reply, origin);
      done();
    });
    scope.setErrorHandler(answerBodyError);
    // A body the beneath-Fastify path has read already is read from where it put it.
    scope.addHook('preParsing', (request, _reply, payload, done) => {
      const body = (request.raw as McpBodyRequest)[MCP_BODY];
      if (body === undefined) return done(null, payload);
      const stream = Readable.from([body]) as Readable & { receivedEncodedLength: number };
      stream.receivedEncodedLength = body.length;
      done(null, stream);
    });

    scope.options(MCP_PATH, async (_request, reply) => preflight(reply));
    scope.route({
      method: ['GET', 'DELETE', 'PUT', 'PATCH'],
      url: MCP_PATH,
      handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send(jsonRpcError(-32000, 'Method not allowed.')),
    });
    scope.post(MCP_PATH, { bodyLimit: BODY_LIMIT }, (request, reply) => handlePost(request, reply, handling));
    // Open exchanges (a subscription stream among them) end with the server.
    scope.addHook('onClose', async () => handling.modern.close());
  });
  return { direct: handling.direct };
}

function setCorsHeaders(reply: FastifyReply, origin: string): void {
  // Set on the raw response so they survive a hijacked reply (the MCP answers) as well.
  reply.raw.setHeader('access-control-allow-origin', origin);
  reply.raw.setHeader('access-control-expose-headers', EXPOSED_HEADERS.join(', '));
  reply.raw.setHeader('vary', 'Origin');
}

/** CORS preflight. The onRequest hook has already refused a foreign origin and set Allow-Origin. */
async function preflight(reply: FastifyReply) {
  return reply
    .code(204)
    .header('access-control-allow-methods', 'POST')
    .header('access-control-allow-headers', ALLOWED_HEADERS.join(', '))
    .header('access-control-max-age', '600')
    .header('allow', 'POST')
    .send();
}

/** Fastify's own refusals of a body (wrong media type, too large, not JSON) as JSON-RPC errors. */
function answerBodyError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const status = error.statusCode ?? 500;
  if (status === 415) {
    return reply.code(415).send(jsonRpcError(-32000, 'Unsupported Media Type: Content-Type must be application/json.'));
  }
  if (status === 413) {
    return reply.code(413).send(jsonRpcError(-32000, `Request body too large: at most ${BODY_LIMIT} bytes.`));
  }
  if (status === 400) {
    return reply.code(400).send(jsonRpcError(-32700, 'Parse error: the body is not valid JSON.'));
  }
  request.log.error({ err: error }, 'MCP request failed');
  return reply.code(500).send(jsonRpcError(-32603, 'Internal error.'));
}

/**
 * The caller of this request: who (anonymous, or a maker with scopes), its address, and the
 * answer's headers and logs. A class, not an
 * object of closures: one is made for every MCP request. The SDK's transport writes the
 * response itself, so for it the rate-limit headers go on the response at once; the fast path
 * writes the response here, all headers in one go, and takes them from `rateHeaders`.
 */
class RequestCaller implements McpCaller {
  readonly auth: Caller;
  readonly network: string;
  readonly owner: BudgetOwner | undefined;
  readonly log: McpCaller['log'];
  readonly era: Era;
  rateHeaders: Record<string, string> | undefined;
  readonly #res: ServerResponse | undefined;

  constructor(request: FastifyRequest, auth: Caller, owner: BudgetOwner | undefined, era: Era, writeTo: ServerResponse | undefined) {
    this.auth = auth;
    this.network = request.clientNetwork;
    this.owner = owner;
    this.era = era;
    this.log = request.log;
    this.#res = writeTo;
  }

  onRateDecision(verdict: Counted): void {
    this.rateHeaders = rateLimitHeaders(verdict);
    const res = this.#res;
    if (!res || res.headersSent) return;
    for (const name in this.rateHeaders) res.setHeader(name, this.rateHeaders[name]!);
  }
}

async function handlePost(request: FastifyRequest, reply: FastifyReply, handling: McpHandling): Promise<void> {
  traceToolCall(reply.raw, request.body);
  if (handling.deprecations) markDeprecatedCall(reply, request.body, handling.deprecations);
  // A revision this endpoint does not serve is named first, whatever the body: the client then
  // knows what to retry with (UnsupportedProtocolVersion, 2026-07-28 basic/versioning).
  const version = request.headers['mcp-protocol-version'];
  if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_VERSIONS.includes(version))) {
    return void reply.code(400).type('application/json').send(unsupportedVersionBody(String(version), request.body));
  }
  const authorization = request.headers.authorization;
  // The call asked for most, answered first: a plain read by a client with no credential
  // (nothing to check: a read needs no sign-in) and no query string.
  if (authorization === undefined && handling.direct && !request.raw.url!.includes('?')) {
    const call = handling.direct.match(request.body, request.raw.rawHeaders, request.headers);
    if (call) return answerDirect(request, reply, handling.direct, call, ANONYMOUS, undefined);
  }
  // A consumer key says whose budget the calls spend, or is refused (401, or 429 for an address
  // guessing keys); any other credential is an access token, checked as one (mcp-auth.ts).
  const keyed = authorization !== undefined && isKeyBearer(authorization);
  let owner: BudgetOwner | undefined;
  if (keyed) {
    // The direct path decided already when it read this request and handed it over (direct-mcp.ts).
    const arrived = (request.raw as McpBodyRequest)[MCP_KEY_VERDICT] ?? handling.budgets.decide(undefined, request.clientNetwork, authorization, request.raw.rawHeaders);
    const verdict: Verdict = arrived instanceof Promise ? await arrived : arrived;
    if (!verdict.allowed) return void sendCatalogError(reply, verdict.refusal);
    owner = verdict.owner;
    // Named in the access log by its name (src/http/infrastructure.ts).
    if (owner?.key !== undefined) (request.raw as BudgetedRequest)[REQUEST_KEY] = owner.key;
  }
  const auth = await authenticateMcpRequest(request, reply, handling.auth, keyed);
  if (!auth) return;
  // A signed-in maker's calls spend the grant's budget.
  if (auth.kind === 'maker') owner = handling.budgets.decide(undefined, request.clientNetwork, auth).owner;
  const call = handling.direct?.match(request.body, request.raw.rawHeaders, request.headers);
  if (call) return answerDirect(request, reply, handling.direct!, call, auth, owner);
  return serveWithSdk(request, reply, handling, auth, owner);
}

const ANONYMOUS: Caller = { kind: 'anonymous' };

/** A read tool's call that uses a deprecated operation or argument: its answer says so (src/contract/deprecations.ts). */
function markDeprecatedCall(reply: FastifyReply, message: unknown, deprecations: DeprecationReading): void {
  if (typeof message !== 'object' || message === null || (message as { method?: unknown }).method !== 'tools/call') return;
  const params = (message as { params?: unknown }).params;
  if (typeof params !== 'object' || params === null) return;
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || !Object.hasOwn(TOOL_OPERATIONS, name)) return;
  const headers = deprecations.headersFor(TOOL_OPERATIONS[name], typeof args === 'object' && args !== null ? Object.keys(args) : []);
  if (headers) for (const [header, value] of headers) reply.header(header, value);
}

/** Answers a read on the fast path: at once when its budget and answer are (answerNow). */
function answerDirect(request: FastifyRequest, reply: FastifyReply, direct: DirectReadCalls, call: DirectReadCall, auth: Caller, owner: BudgetOwner | undefined): void | Promise<void> {
  const caller = new RequestCaller(request, auth, owner, call.era, undefined);
  const answer = direct.answerNow(call, caller);
  if (answer instanceof Promise) return answer.then((a) => writeDirect(reply, caller, a));
  writeDirect(reply, caller, answer);
}

/** The answer in two pieces, on the raw response: the result is not copied per request. */
function writeDirect(reply: FastifyReply, caller: RequestCaller, { head, tail }: DirectAnswer): void {
  const headers: Record<string, string | number | string[] | undefined> = reply.getHeaders();
  if (caller.rateHeaders) Object.assign(headers, caller.rateHeaders);
  headers['content-type'] = 'application/json';
  headers['content-length'] = head.length + tail.length;
  reply.hijack();
  const res = reply.raw;
  // One write to the socket for the headers and both pieces: uncorked, each would be a system
  // call and a packet of its own (most of what a read tool's answer cost on the wire).
  res.cork();
  res.writeHead(200, headers as OutgoingHttpHeaders);
  res.write(head);
  res.end(tail);
  res.uncork();
}

/**
 * Parameters the SDK would refuse with a raw validation dump: a 2025-era tools/call or
 * prompts/get whose params are missing or whose arguments are not an object. Answered here as
 * the invalid-params error they are. Returns the message, or undefined when the call is fine.
 */
function invalidParams(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (method !== 'tools/call' && method !== 'prompts/get') return undefined;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return `${method} needs params: an object with a name`;
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string') return `${method} needs params.name, a string`;
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    return `params.arguments must be an object of named arguments, e.g. {"q": "design"}`;
  }
  return undefined;
}

/**
 * From here the response is written on the raw response (by the SDK's answer, or in pieces by
 * the fast path): the headers the app's hooks set on the reply (request id, nosniff) are carried
 * over to it first. Fastify's onResponse hooks still run when it finishes.
 */
function handOver(reply: FastifyReply): void {
  const res = reply.raw;
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined && !res.hasHeader(name)) res.setHeader(name, value);
  }
  reply.hijack();
}

/**
 * The request as the SDK takes it: a web-standard Request with the headers as sent and no body
 * (Fastify parsed it already; it is handed over as `parsedBody`), aborted when the client goes.
 */
function webRequestOf(request: FastifyRequest, res: ServerResponse): Request {
  const headers = new Headers();
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return new Request(`http://mcp.invalid${request.raw.url ?? MCP_PATH}`, { method: 'POST', headers, signal: abort.signal });
}

/** Writes the SDK's answer: a JSON body at once, an event stream as it comes. */
async function writeWebResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (response.body === null) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  if (headers['content-type']?.startsWith('text/event-stream')) {
    res.writeHead(response.status, headers);
    await pipeline(Readable.fromWeb(response.body as WebReadableStream), res).catch(() => undefined);
    return;
  }
  const body = Buffer.from(await response.arrayBuffer());
  headers['content-length'] = String(body.length);
  res.writeHead(response.status, headers);
  res.end(body);
}

/** The SDK answers: the 2026-07-28 handler, or a 2025-era exchange on a pooled server. */
async function serveWithSdk(request: FastifyRequest, reply: FastifyReply, handling: McpHandling, auth: Caller, owner: BudgetOwner | undefined): Promise<void> {
  const res = reply.raw;
  let webRequest: Request;
  let legacy: boolean;
  try {
    webRequest = webRequestOf(request, res);
    legacy = await isLegacyRequest(webRequest, request.body);
  } catch (err) {
    request.log.warn({ err }, 'MCP request not readable');
    return void reply.code(400).type('application/json').send(jsonRpcError(-32600, 'Invalid Request: the request could not be read.'));
  }
  if (legacy) {
    const problem = invalidParams(request.body);
    if (problem !== undefined) {
      return void reply.code(200).type('application/json').send({ jsonrpc: '2.0', id: requestIdOf(request.body), error: { code: -32602, message: `Invalid params: ${problem}.` } });
    }
  }
  const caller = new RequestCaller(request, auth, owner, legacy ? 'legacy' : 'modern', res);
  const authInfo = authInfoFor(caller);
  handOver(reply);
  try {
    const response = legacy
      ? await serveLegacy(handling.pool, webRequest, authInfo, request.body, cacheScopeOf(caller), res)
      : await handling.modern.fetch(webRequest, { authInfo, parsedBody: request.body });
    await writeWebResponse(response, res);
  } catch (err) {
    request.log.error({ err }, 'MCP request failed');
    if (!res.headersSent) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(jsonRpcError(-32603, 'Internal error.')));
    } else if (!res.writableEnded) {
      res.end();
    }
  }
}

/**
 * A 2025-era request: one exchange on a server borrowed from the pool, through the SDK's
 * transport answering plain JSON (every tool answers at once: no event stream is needed).
 */
async function serveLegacy(pool: McpServerPool, webRequest: Request, authInfo: AuthInfo, parsedBody: unknown, scope: 'public' | 'private', res: ServerResponse): Promise<Response> {
  const server = pool.acquire('legacy', scope);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  let answered = false;
  // A client gone before its answer leaves handlers that may still run: that server is not reused.
  res.once('close', () => {
    if (!answered) void server.close();
  });
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(webRequest, { authInfo, parsedBody });
    answered = true;
    return response;
  } finally {
    await server.close();
    // Handlers of notifications in this request run in microtasks queued while it was handled:
    // the server goes back to the pool only after they have all run.
    if (answered) setImmediate(() => pool.release(server));
  }
}
