import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SignJWT, importJWK, type JWK } from 'jose';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.ts';
import { startService, type RunningService } from '../../../src/service.ts';
import { Browser, MemoryOAuthClient, decideConsent, signIn } from '../../helpers/oauth.ts';
import { freePort, startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * The official MCP SDK client's own OAuth flow against the service, end to end: 401 →
 * discovery → dynamic registration → consent in a signed-in maker's browser → token → tool
 * calls (registration by Client ID Metadata Document: oauth-cimd.test.ts); then refresh rotation, Disconnect seen by a
 * second API process, and tokens the resource server must refuse.
 */
let stack: TestStack;
let mcpUrl: URL;

beforeAll(async () => {
  stack = await startTestStack({ realPublicUrl: true });
  mcpUrl = new URL(`${stack.baseUrl}/api/mcp`);
});

afterAll(async () => {
  await stack?.stop();
});

const CALLBACK = 'http://127.0.0.1:45678/callback';

function registeredClient(name = 'Test Assistant') {
  return new MemoryOAuthClient({
    client_name: name,
    redirect_uris: [CALLBACK],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  });
}

async function connect(provider: MemoryOAuthClient, url = mcpUrl) {
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** Runs the SDK's sign-in: a maker tool answers 401, the maker approves, the code is exchanged. */
async function authorizeThroughSdk(provider: MemoryOAuthClient, browser: Browser, decision: 'approve' | 'deny' = 'approve') {
  const { client, transport } = await connect(provider);
  await expect(client.callTool({ name: 'my_listings', arguments: {} })).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl).toBeDefined();
  const back = await decideConsent(browser, provider.authorizationUrl!.href, decision);
  return { client, transport, back };
}

async function mcpCall(token: string | undefined, body: unknown, url = mcpUrl) {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (token) headers.authorization = `Bearer ${token}`;
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
}

const searchCall = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_categories', arguments: {} } };

async function tokenRequest(params: Record<string, string>, origin = stack.baseUrl) {
  const res = await fetch(`${origin}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params) });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Record<string, string> };
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function registerClient(metadata: Record<string, unknown> = {}) {
  const res = await fetch(`${stack.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Manual client', redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none', ...metadata }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { client_id: string };
}

function authorizeUrl(params: Record<string, string | undefined>) {
  const url = new URL(`${stack.baseUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

/** A full code flow by hand; returns the token response. */
async function codeFlow(browser: Browser, opts: { scope: string; resource?: string }) {
  const { client_id } = await registerClient();
  const { verifier, challenge } = pkce();
  const back = await decideConsent(
    browser,
    authorizeUrl({ client_id, response_type: 'code', redirect_uri: CALLBACK, scope: opts.scope, code_challenge: challenge, code_challenge_method: 'S256', state: 's1', resource: opts.resource }),
    'approve',
  );
  const code = back.searchParams.get('code');
  expect(code, back.href).toBeTruthy();
  const tokens = await tokenRequest({ grant_type: 'authorization_code', code: code!, client_id, redirect_uri: CALLBACK, code_verifier: verifier });
  expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
  return { client_id, verifier, code: code!, tokens: tokens.body };
}

describe('the SDK client through dynamic client registration', () => {
  it('goes 401 → discovery → registration → consent → token, then calls tools with the token', async () => {
    const browser = await signIn(stack, 'dcr-maker@example.com');
    const provider = registeredClient();
    const { client, transport, back } = await authorizeThroughSdk(provider, browser);
    expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
    expect(back.searchParams.get('iss')).toBe(stack.baseUrl);
    expect(provider.clientInformation()?.client_id).toBeTruthy();

    await transport.finishAuth(back.searchParams.get('code')!);
    const tokens = provider.tokens()!;
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    // The 401 of a maker tool asks for every maker scope and to stay connected: the access
    // token carries both listing scopes, and offline_access brought a refresh token, which the
    // answer's scope names.
    expect(tokens.scope).toBe('listings:read listings:write offline_access');
    expect(tokens.refresh_token).toBeTruthy();

    const categories = await client.callTool({ name: 'list_categories', arguments: {} });
    expect(categories.isError).toBeFalsy();
    // Past the scope check, the tool call reaches the MCP server with the maker as caller.
    const mine = await client.callTool({ name: 'my_listings', arguments: {} });
    expect(mine).toBeDefined();
    await client.close();

    const apps = await browser.request('/settings/apps');
    expect(await apps.text()).toContain('Test Assistant');
  });

  it('sends the browser back with access_denied (and iss) when the maker denies', async () => {
    const browser = await signIn(stack, 'deny-maker@example.com');
    const provider = registeredClient('Denied App');
    const { back } = await authorizeThroughSdk(provider, browser, 'deny');
    expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
    expect(back.searchParams.get('iss')).toBe(stack.baseUrl);
    expect(await (await browser.request('/settings/apps')).text()).not.toContain('Denied App');
  });
});

describe('refresh tokens', () => {
  it('are issued only with offline_access', async () => {
    const browser = await signIn(stack, 'no-offline@example.com');
    const { tokens } = await codeFlow(browser, { scope: 'listings:read' });
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.scope).toBe('listings:read');
  });

  it('are replaced on every use; a retry within seconds gets the same pair; reuse after that revokes the grant', async () => {
    const browser = await signIn(stack, 'rotation@example.com');
    const { client_id, tokens } = await codeFlow(browser, { scope: 'listings:read offline_access' });
    const first = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id });
    expect(first.status).toBe(200);
    expect(first.type).toMatch(/application\/json/);
    expect(first.body.refresh_token).toBeTruthy();
    expect(first.body.refresh_token).not.toBe(tokens.refresh_token);

    const retry = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id });
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);

    // The new pair works.
    expect((await mcpCall(first.body.access_token, searchCall)).status).toBe(200);

    // Once the retry window is over, the spent token is reuse: the whole grant is revoked.
    await stack.db.pool.query('UPDATE auth.refresh_replays SET expires_at = now() - interval \'1 second\'');
    const reuse = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token!, client_id })).body.error).toBe('invalid_grant');
    const refused = await mcpCall(first.body.access_token, searchCall);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});

describe('two API processes', () => {
  let second: RunningService;

  beforeAll(async () => {
    // A second API process on the same database, as behind a load balancer.
    const port = await freePort();
    const config = loadConfig({}, { DATABASE_URL: stack.db.url, HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: stack.baseUrl, LOG_LEVEL: 'silent' });
    second = await startService(config, { projector: false, demo: false, logger: pino({ level: 'silent' }) });
  });

  afterAll(async () => {
    await second?.close();
  });

  it('refuses the very next call in another API process, reads included, and the refresh token gets invalid_grant', async () => {
    const browser = await signIn(stack, 'disconnect@example.com');
    const { client_id, tokens } = await codeFlow(browser, { scope: 'listings:read offline_access' });
    const secondMcp = new URL(`${second.url}/api/mcp`);
    expect((await mcpCall(tokens.access_token, searchCall, secondMcp)).status).toBe(200);

    const page = await browser.request('/settings/apps');
    const html = await page.text();
    const action = /action="(\/settings\/apps\/[^"]+\/disconnect)"/.exec(html)![1]!;
    const done = await browser.request(action.replace(/&amp;/g, '&'), { form: { _csrf: Browser.csrfOf(html) } });
    expect(done.status).toBe(303);

    const refused = await mcpCall(tokens.access_token, searchCall, secondMcp);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/api\/mcp", error="invalid_token"/);
    // Without the stale token the same read is served: nobody is locked out of the public catalog.
    expect((await mcpCall(undefined, searchCall, secondMcp)).status).toBe(200);
    const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id });
    expect(refresh.body.error).toBe('invalid_grant');
    expect(await (await browser.request('/settings/apps')).text()).toContain('No app is connected');
  });
  it('the same refresh token sent to both processes at the same instant gives both callers one new pair, never a revocation', async () => {
    const browser = await signIn(stack, 'refresh-race@example.com');
    const secondMcp = new URL(`${second.url}/api/mcp`);
    for (let round = 0; round < 4; round++) {
      const { client_id, tokens } = await codeFlow(browser, { scope: 'listings:read offline_access' });
      const params = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id };
      const [here, there] = await Promise.all([tokenRequest(params), tokenRequest(params, second.url)]);
      expect([here.status, there.status], JSON.stringify([here.body, there.body])).toEqual([200, 200]);
      expect(there.body).toEqual(here.body);
      expect(here.body.refresh_token).not.toBe(tokens.refresh_token);
      // The one new pair works in either process, and the grant goes on.
      expect((await mcpCall(here.body.access_token, searchCall, secondMcp)).status).toBe(200);
      const next = await tokenRequest({ ...params, refresh_token: here.body.refresh_token! });
      expect(next.status, JSON.stringify(next.body)).toBe(200);
    }
  });
});

describe('the resource server', () => {
  async function signedWith(key: JWK, claims: Record<string, unknown>, exp = '1h') {
    const alg = 'ES256';
    return new SignJWT(claims)
      .setProtectedHeader({ alg, typ: 'at+jwt', kid: key.kid! })
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(await importJWK(key, alg));
  }

  it('refuses a token for another audience, an expired one, one signed by another key, and malformed ones', async () => {
    const browser = await signIn(stack, 'audience@example.com');
    const { tokens } = await codeFlow(browser, { scope: 'listings:read' });
    const payload = JSON.parse(Buffer.from(tokens.access_token!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    const { rows } = await stack.db.pool.query<{ value: JWK[] }>(`SELECT value FROM auth.service_keys WHERE name = 'token_signing_keys'`);
    const key = rows[0]!.value[0]!;
    const { generateKeyPair, exportJWK } = await import('jose');
    const stranger = { ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey)), kid: 'stranger' };

    const cases = {
      'another audience': await signedWith(key, { ...payload, aud: 'https://other.example/api/mcp' }),
      expired: await signedWith(key, { ...payload, exp: undefined }, '-2 minutes'),
      'another key': await signedWith(stranger, payload),
      malformed: 'not-a-jwt',
    };
    for (const [what, token] of Object.entries(cases)) {
      const res = await mcpCall(token, searchCall);
      expect(res.status, what).toBe(401);
      expect(res.headers.get('www-authenticate'), what).toContain('error="invalid_token"');
    }
    // The genuine token is accepted.
    expect((await mcpCall(tokens.access_token, searchCall)).status).toBe(200);
  });

  it('refuses a token in the query string, and a scheme other than Bearer', async () => {
    const browser = await signIn(stack, 'query@example.com');
    const { tokens } = await codeFlow(browser, { scope: 'listings:read' });
    const inQuery = await fetch(`${mcpUrl.href}?access_token=${tokens.access_token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(searchCall),
    });
    expect(inQuery.status).toBe(401);
    expect(((await inQuery.json()) as { error: string }).error).toBe('invalid_request');
    const basic = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      body: JSON.stringify(searchCall),
    });
    expect(basic.status).toBe(401);
  });

  it('answers 403 insufficient_scope naming every scope a tool needs', async () => {
    const browser = await signIn(stack, 'scopes@example.com');
    const { tokens } = await codeFlow(browser, { scope: 'listings:read' });
    const res = await mcpCall(tokens.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'update_listing', arguments: {} } });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toContain('scope="listings:read listings:write"');
    expect(res.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
  });
});
