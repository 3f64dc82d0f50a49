import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessTokenVerifier } from '../auth/access-tokens.ts';
import { checkScopes, type Caller } from '../auth/caller.ts';
import { SCOPES, type Scope } from '../auth/scopes.ts';

/**
 * Who an MCP request comes from, decided before the request reaches the MCP server:
 * - no Authorization header: anonymous (the read tools and submit_product need no sign-in);
 * - a token that is expired, revoked, for another audience or malformed: 401 with a
 *   `WWW-Authenticate: Bearer` challenge naming the resource metadata; such a request is never
 *   served as anonymous (a credential is never ignored);
 * - a token in the query string: refused, tokens go in the Authorization header only;
 * - a tools/call of a maker tool: its scopes are checked here, so a client gets the HTTP status
 *   its OAuth layer acts on: 401 (sign in) or 403 insufficient_scope naming every scope needed
 *   (step-up), with the same challenge.
 */
export interface McpAuth {
  verifier: AccessTokenVerifier;
  /** The protected-resource metadata URL named in every challenge. */
  resourceMetadataUrl: string;
  /** The scopes each maker tool needs; tools not listed need none. */
  toolScopes: Readonly<Record<string, readonly Scope[]>>;
}

function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, "'")}"`;
}

function challenge(auth: McpAuth, params: { error?: string; description?: string; scope?: readonly string[] }): string {
  const parts = [`resource_metadata=${quoted(auth.resourceMetadataUrl)}`];
  if (params.scope?.length) parts.push(`scope=${quoted(params.scope.join(' '))}`);
  if (params.error) parts.push(`error=${quoted(params.error)}`);
  if (params.description) parts.push(`error_description=${quoted(params.description)}`);
  return `Bearer ${parts.join(', ')}`;
}

interface Refusal {
  status: 401 | 403;
  /** The OAuth error; absent from the challenge when the request carried no token at all. */
  error: 'invalid_token' | 'invalid_request' | 'insufficient_scope';
  description: string;
  tokenPresented: boolean;
  /** The scopes the call needs, named in the challenge so the client asks for them. */
  scope?: readonly string[];
}

function refuse(reply: FastifyReply, auth: McpAuth, r: Refusal): undefined {
  const header = challenge(auth, { ...(r.tokenPresented && { error: r.error }), description: r.description, ...(r.scope && { scope: r.scope }) });
  void reply
    .code(r.status)
    .header('www-authenticate', header)
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    // Without any credential there is no OAuth error to name (RFC 6750, section 3.1).
    .send(JSON.stringify(r.tokenPresented ? { error: r.error, error_description: r.description } : { error_description: r.description }));
  return undefined;
}

/** Maker tools named by tools/call messages in a request body (one message, or a batch). */
function calledTools(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  const names: string[] = [];
  for (const m of messages) {
    if (typeof m !== 'object' || m === null) continue;
    const { method, params } = m as { method?: unknown; params?: { name?: unknown } };
    if (method === 'tools/call' && typeof params?.name === 'string') names.push(params.name);
  }
  return names;
}

/**
 * The caller of an MCP request, or undefined when the request was answered here (refused).
 * `keyed`: the Authorization header holds a valid consumer key (checked by the route), which
 * is no sign-in: the caller is anonymous, and a maker tool asks it to sign in.
 */
export async function authenticateMcpRequest(request: FastifyRequest, reply: FastifyReply, auth: McpAuth, keyed = false): Promise<Caller | undefined> {
  const query = request.query as Record<string, unknown> | undefined;
  if (query && 'access_token' in query) {
    return refuse(reply, auth, { status: 401, error: 'invalid_request', description: 'Access tokens are accepted in the Authorization header only, never in the URL.', tokenPresented: true });
  }
  const check = keyed ? ({ ok: true, caller: { kind: 'anonymous' } } as const) : await auth.verifier.check(request.headers.authorization);
  if (!check.ok) return refuse(reply, auth, { status: 401, error: check.error, description: check.description, tokenPresented: true });
  const caller = check.caller;
  for (const tool of calledTools(request.body)) {
    const needed = auth.toolScopes[tool];
    if (!needed) continue;
    const scopes = checkScopes(caller, needed);
    if (scopes.ok) continue;
    // Signing in for any maker tool asks for what all of them need and to stay connected: the
    // maker sees it on the consent page, and the app need not come back for more (a step-up that
    // common clients answer by refreshing rather than asking again) nor sign in every hour.
    if (scopes.status === 401) {
      return refuse(reply, auth, { status: 401, error: 'invalid_request', description: scopes.description, tokenPresented: false, scope: SCOPES });
    }
    return refuse(reply, auth, { status: 403, error: 'insufficient_scope', description: scopes.description, tokenPresented: true, scope: needed });
  }
  return caller;
}
