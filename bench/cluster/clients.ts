import { randomInt } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Browser, CookieJar, pkcePair } from '../../test/helpers/oauth.ts';
import { mailTo, type CatalogNode } from './cluster.ts';

/**
 * The clients of a cluster run, each a real one: a browser-like cookie jar that follows the
 * maker across API processes (one host, so one set of cookies whatever the port, as a browser
 * keeps them), the OAuth code flow by hand with each step on the process the run chooses, and
 * the MCP SDK client. Every request comes from an address of its own (X-Forwarded-For; the
 * cluster trusts its proxy), so per-IP budgets never interfere unless a run means them to.
 */

/** A random address in 198.18.0.0/15 (benchmarking range), for one request or one client. */
export function randomAddress(): string {
  return `198.${18 + randomInt(2)}.${randomInt(256)}.${1 + randomInt(254)}`;
}

export class ClusterBrowser {
  readonly jar = new CookieJar();
  readonly address = randomAddress();

  /** A request to `origin` (one of the API processes) carrying the browser's cookies. */
  async request(origin: string, path: string, init: { form?: Record<string, string> | [string, string][]; method?: string } = {}): Promise<Response> {
    const headers: Record<string, string> = { 'x-forwarded-for': this.address };
    if (this.jar.header()) headers.cookie = this.jar.header();
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(new URL(path, origin), { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual', signal: AbortSignal.timeout(30_000) });
    this.jar.take(res);
    return res;
  }

  /**
   * Follows the service's redirects, every hop on `origin` (the cluster's processes share one
   * public address), until an answer that is not a redirect or a redirect to the app.
   */
  async follow(origin: string, path: string, init: { form?: Record<string, string> | [string, string][] } = {}): Promise<{ res: Response; url: URL }> {
    let res = await this.request(origin, path, init);
    let at = new URL(path, origin);
    for (let hops = 0; hops < 10 && res.status >= 300 && res.status < 400; hops++) {
      const next = new URL(res.headers.get('location')!, at);
      if (next.href.startsWith(APP_CALLBACK)) return { res, url: next };
      at = new URL(next.pathname + next.search, origin);
      res = await this.request(origin, at.pathname + at.search);
    }
    return { res, url: at };
  }
}

export const csrfOf = (html: string): string => Browser.csrfOf(html);

/**
 * Signs a maker in by e-mailed link: asked for on `ask`, the link (read from that process's log)
 * opened and confirmed on `open`. Returns the signed-in browser.
 */
export async function signIn(email: string, ask: CatalogNode, open: CatalogNode, browser = new ClusterBrowser()): Promise<ClusterBrowser> {
  const since = Date.now() - 1000;
  const form = await browser.request(ask.url!, '/signin');
  const sent = await browser.request(ask.url!, '/signin', { form: { email, _csrf: csrfOf(await form.text()) } });
  if (sent.status !== 200) throw new Error(`asking ${ask.name} for a sign-in link answered ${sent.status}`);
  const text = await mailTo(ask, email, since);
  const link = new URL(/https?:\/\/\S+\/signin\/link\/\S+/.exec(text)![0]);
  const confirm = await browser.request(open.url!, link.pathname);
  const done = await browser.request(open.url!, link.pathname, { form: { _csrf: csrfOf(await confirm.text()) } });
  if (done.status !== 303) throw new Error(`using the sign-in link on ${open.name} answered ${done.status}`);
  return browser;
}

const APP_CALLBACK = 'http://127.0.0.1:45679/callback';

export interface ConnectedApp {
  clientId: string;
  accessToken: string;
  refreshToken: string;
}

/**
 * Connects an app to the signed-in maker's account, each step on the process named: dynamic
 * registration and the authorization request on `authorize`, the consent page on `consent`,
 * the code exchanged on `token`.
 */
export async function connectApp(browser: ClusterBrowser, steps: { authorize: CatalogNode; consent: CatalogNode; token: CatalogNode }): Promise<ConnectedApp> {
  const registered = await fetch(`${steps.authorize.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': randomAddress() },
    body: JSON.stringify({ client_name: 'Cluster run app', redirect_uris: [APP_CALLBACK], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' }),
  });
  if (registered.status !== 201) throw new Error(`registration answered ${registered.status}: ${await registered.text()}`);
  const { client_id } = (await registered.json()) as { client_id: string };
  const { verifier, challenge } = pkcePair();
  const query = new URLSearchParams({ client_id, response_type: 'code', redirect_uri: APP_CALLBACK, scope: 'listings:read listings:write offline_access', state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
  const asked = await browser.request(steps.authorize.url!, `/oauth/authorize?${query}`);
  if (asked.status !== 303 && asked.status !== 302) throw new Error(`the authorization request answered ${asked.status}`);
  const consentPath = new URL(asked.headers.get('location')!, steps.authorize.url).pathname;
  const page = await browser.request(steps.consent.url!, consentPath);
  if (page.status !== 200) throw new Error(`the consent page on ${steps.consent.name} answered ${page.status}`);
  const decided = await browser.follow(steps.consent.url!, consentPath, { form: { _csrf: csrfOf(await page.text()), decision: 'approve' } });
  const code = decided.url.searchParams.get('code');
  if (!code) throw new Error(`no code after consent: ${decided.url.href} (${decided.res.status})`);
  const tokens = await tokenRequest(steps.token, { grant_type: 'authorization_code', code, client_id, redirect_uri: APP_CALLBACK, code_verifier: verifier });
  if (tokens.status !== 200) throw new Error(`the code exchange on ${steps.token.name} answered ${tokens.status}: ${JSON.stringify(tokens.body)}`);
  return { clientId: client_id, accessToken: tokens.body.access_token!, refreshToken: tokens.body.refresh_token! };
}

export async function tokenRequest(node: CatalogNode, params: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(`${node.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': randomAddress() },
    body: new URLSearchParams(params),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/**
 * An MCP host's connection to one API process: the SDK client, the maker's token in every
 * request (when given), each request from an address of its own.
 */
export async function mcpClient(node: CatalogNode, accessToken?: string): Promise<Client> {
  const client = new Client({ name: 'cluster-run', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${node.url}/api/mcp`), {
    fetch: (url, init) => {
      const headers = new Headers(init?.headers);
      headers.set('x-forwarded-for', randomAddress());
      if (accessToken) headers.set('authorization', `Bearer ${accessToken}`);
      return fetch(url, { ...init, headers, signal: AbortSignal.timeout(30_000) });
    },
  });
  await client.connect(transport);
  return client;
}

/** A tool's answer: its structured result (or the error object of a tool error), and whether it is an error. */
export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<{ ok: boolean; body: Record<string, unknown> }> {
  const result = await client.callTool({ name, arguments: args });
  if (!result.isError && result.structuredContent !== undefined) return { ok: true, body: result.structuredContent as Record<string, unknown> };
  const text = (result.content as { type: string; text: string }[])[0]?.text ?? '{}';
  return { ok: !result.isError, body: JSON.parse(text) as Record<string, unknown> };
}

/** A plain JSON-RPC tools/call on one process, as any MCP host sends it; answers the HTTP status and body. */
export async function rawToolCall(node: CatalogNode, name: string, args: Record<string, unknown>, accessToken?: string): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-forwarded-for': randomAddress() };
  if (accessToken) headers.authorization = `Bearer ${accessToken}`;
  const res = await fetch(`${node.url}/api/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, body };
}

;
