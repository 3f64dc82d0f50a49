import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SESSION_COOKIE } from '../../../src/auth/sessions.ts';
import { TOKEN_BODY_LIMIT } from '../../../src/http/oauth-routes.ts';
import { parsePage } from '../../helpers/html.ts';
import { Browser, authorizationRequest, decideConsent, jwtClaims, oauthPost, pkcePair, registerPublicClient, signIn } from '../../helpers/oauth.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * The attack list of the authorization server: each attack tried as an attacker would, and
 * refused in a way the attacker (or the victim) can observe.
 */
const CALLBACK = 'http://127.0.0.1:45678/callback';
const IDLE_DAYS = 2;

let stack: TestStack;
let mcpUrl: string;
/** A signed-in maker's browser, shared by the tests that need one approval or another. */
let maker: Browser;

beforeAll(async () => {
  // The pages' per-IP budget is for the public: every request of this file comes from one address.
  stack = await startTestStack({ realPublicUrl: true, env: { OAUTH_CLIENT_IDLE_DAYS: String(IDLE_DAYS), RATE_LIMIT_OTHER_PER_MIN: '100000' } });
  mcpUrl = `${stack.baseUrl}/api/mcp`;
  maker = await signIn(stack, 'attacks-maker@example.com');
});

afterAll(async () => {
  await stack?.stop();
});

const sha256hex = (value: string) => createHash('sha256').update(value).digest('hex');

function register(metadata: Record<string, unknown> = {}) {
  return registerPublicClient(stack.baseUrl, { client_name: 'Attack Target', redirect_uris: [CALLBACK], ...metadata });
}

function authorize(params: Record<string, string | undefined>) {
  return authorizationRequest(stack.baseUrl, { response_type: 'code', redirect_uri: CALLBACK, scope: 'listings:read', state: 'st-1', ...params });
}

function token(params: Record<string, string>, headers?: Record<string, string>) {
  return oauthPost(stack.baseUrl, params, headers ? { headers } : {});
}

async function mcpStatus(accessToken: string): Promise<number> {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_categories', arguments: {} } }),
  });
  await res.body?.cancel();
  return res.status;
}

/** An approved authorization: the code and everything needed to exchange it. */
async function approvedCode(opts: { scope?: string; redirectUri?: string; clientId?: string; browser?: Browser } = {}) {
  const clientId = opts.clientId ?? (await register());
  const { verifier, challenge } = pkcePair();
  const redirectUri = opts.redirectUri ?? CALLBACK;
  const back = await decideConsent(
    opts.browser ?? maker,
    authorize({ client_id: clientId, redirect_uri: redirectUri, scope: opts.scope ?? 'listings:read', code_challenge: challenge, code_challenge_method: 'S256' }),
    'approve',
  );
  const code = back.searchParams.get('code');
  expect(code, back.href).toBeTruthy();
  return { clientId, verifier, code: code!, redirectUri, back };
}

async function exchange(c: { clientId: string; verifier: string; code: string; redirectUri: string }) {
  return token({ grant_type: 'authorization_code', client_id: c.clientId, code: c.code, redirect_uri: c.redirectUri, code_verifier: c.verifier });
}

/** The answer of the authorization endpoint to a browser that is not followed anywhere. */
function authorizationAnswer(url: string) {
  return fetch(url, { redirect: 'manual' });
}

/** The authorization endpoint sent the browser back to the client with an error (and iss). */
async function expectErrorRedirect(url: string, error: string) {
  const res = await authorizationAnswer(url);
  expect(res.status).toBe(303);
  const to = new URL(res.headers.get('location')!);
  expect(`${to.origin}${to.pathname}`).toBe(CALLBACK);
  // In the query, or in the fragment when the request asked for a fragment response type.
  const params = to.hash ? new URLSearchParams(to.hash.slice(1)) : to.searchParams;
  expect(params.get('error')).toBe(error);
  expect(params.get('code')).toBeNull();
  expect(params.get('iss')).toBe(stack.baseUrl);
  expect(params.get('state')).toBe('st-1');
  return params;
}

/** The authorization endpoint stopped with its own page: no Location, nothing pointing off-site. */
async function expectErrorPage(url: string) {
  const res = await authorizationAnswer(url);
  expect(res.status).toBe(400);
  expect(res.headers.get('location')).toBeNull();
  expect(res.headers.get('refresh')).toBeNull();
  expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  const html = await res.text();
  const page = parsePage(html);
  expect(page.texts('h1')).toEqual(['This app cannot connect']);
  // Links lead within this page or this site only.
  for (const a of page.all('a')) expect(page.attr(a, 'href')).toMatch(/^(?:#|\/(?![/\\]))/);
  expect(page.all('meta').filter((m) => page.attr(m, 'http-equiv')?.toLowerCase() === 'refresh')).toEqual([]);
  return { html, page };
}

describe('PKCE downgrade', () => {
  it('refuses code_challenge_method=plain and a request without a code_challenge', async () => {
    const clientId = await register();
    const verifier = 'a'.repeat(43);
    const plain = await expectErrorRedirect(authorize({ client_id: clientId, code_challenge: verifier, code_challenge_method: 'plain' }), 'invalid_request');
    expect(plain.get('error_description')).toMatch(/code_challenge_method/);
    await expectErrorRedirect(authorize({ client_id: clientId }), 'invalid_request');
    await expectErrorRedirect(authorize({ client_id: clientId, code_challenge_method: 'S256' }), 'invalid_request');
  });

  it('the code is exchanged only with its own verifier: missing or wrong gets invalid_grant', async () => {
    const c = await approvedCode();
    const missing = await token({ grant_type: 'authorization_code', client_id: c.clientId, code: c.code, redirect_uri: c.redirectUri });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_grant');
    const wrong = await token({ grant_type: 'authorization_code', client_id: c.clientId, code: c.code, redirect_uri: c.redirectUri, code_verifier: pkcePair().verifier });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    // The code's challenge was the S256 of the verifier: the challenge itself is no verifier.
    const challengeAsVerifier = await token({
      grant_type: 'authorization_code',
      client_id: c.clientId,
      code: c.code,
      redirect_uri: c.redirectUri,
      code_verifier: createHash('sha256').update(c.verifier).digest('base64url'),
    });
    expect(challengeAsVerifier.body.error).toBe('invalid_grant');
  });
});

describe('redirect URIs', () => {
  it('a redirect_uri the client did not register stops at an error page: no open redirect', async () => {
    const clientId = await register();
    const { challenge } = pkcePair();
    for (const redirectUri of ['http://127.0.0.1:45678/elsewhere', 'https://evil.example/callback', 'javascript:alert(document.domain)', `${CALLBACK}?next=https://evil.example`]) {
      const { html } = await expectErrorPage(authorize({ client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256' }));
      expect(html).not.toContain('evil.example/callback"');
      expect(html).not.toContain('href="javascript');
    }
    // An unknown client, with a redirect_uri of the attacker's choosing.
    await expectErrorPage(authorize({ client_id: 'no-such-client', redirect_uri: 'https://evil.example/callback', code_challenge: challenge, code_challenge_method: 'S256' }));
  });

  it('registration refuses http redirects off loopback and script schemes (invalid_redirect_uri), and secrets (invalid_client_metadata), in JSON', async () => {
    const refusal = async (metadata: Record<string, unknown>) => {
      const res = await fetch(`${stack.baseUrl}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Refused', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none', ...metadata }),
      });
      expect(res.status, JSON.stringify(metadata)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      return (await res.json()) as { error: string; error_description: string };
    };
    // RFC 7591 section 3.2.2: invalid_redirect_uri is the registration error for a bad redirect.
    for (const redirectUri of ['http://app.example/callback', 'http://127.0.0.1.evil.example/callback', 'javascript:alert(1)', 'data:text/html,hello']) {
      const body = await refusal({ redirect_uris: [redirectUri] });
      expect(body.error, redirectUri).toBe('invalid_redirect_uri');
      expect(body.error_description, redirectUri).toMatch(/^redirect_uris must /);
    }
    // Only public clients: no client secret is ever issued.
    expect((await refusal({ token_endpoint_auth_method: 'client_secret_basic' })).error).toBe('invalid_client_metadata');
    expect((await refusal({ grant_types: ['client_credentials'] })).error).toBe('invalid_client_metadata');
  });

  it('a loopback redirect registered on one port is used on another (RFC 8252); its path must match', async () => {
    const clientId = await register();
    const otherPort = 'http://127.0.0.1:51234/callback';
    const c = await approvedCode({ clientId, redirectUri: otherPort });
    expect(`${c.back.origin}${c.back.pathname}`).toBe(otherPort);
    const tokens = await exchange(c);
    expect(tokens.status).toBe(200);
    // The same port-free match does not extend to the path, nor to another host.
    const { challenge } = pkcePair();
    await expectErrorPage(authorize({ client_id: clientId, redirect_uri: 'http://127.0.0.1:51234/other', code_challenge: challenge, code_challenge_method: 'S256' }));
    await expectErrorPage(authorize({ client_id: clientId, redirect_uri: 'http://127.0.0.2:45678/callback', code_challenge: challenge, code_challenge_method: 'S256' }));
  });

  it('an https redirect must match exactly', async () => {
    const registered = 'https://app.example/oauth/callback';
    const clientId = await register({ redirect_uris: [registered] });
    const { challenge } = pkcePair();
    for (const redirectUri of ['https://app.example:8443/oauth/callback', 'https://app.example/oauth/callback/', 'https://app.example/oauth/callback?x=1', 'https://APP.example.evil.example/oauth/callback']) {
      await expectErrorPage(authorize({ client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256' }));
    }
    // The exact URI reaches the consent step (the maker is not signed in here: the sign-in page).
    const res = await authorizationAnswer(authorize({ client_id: clientId, redirect_uri: registered, code_challenge: challenge, code_challenge_method: 'S256' }));
    expect(res.status).toBe(303);
    expect(new URL(res.headers.get('location')!, stack.baseUrl).pathname).toMatch(/^\/oauth\/consent\//);
  });
});

describe('authorization code replay', () => {
  it('a second exchange gets invalid_grant and revokes what the first one issued', async () => {
    const c = await approvedCode({ scope: 'listings:read offline_access', clientId: await register({ client_name: 'Replayed App' }) });
    const first = await exchange(c);
    expect(first.status).toBe(200);
    expect(first.body.refresh_token).toBeTruthy();
    expect(await mcpStatus(first.body.access_token!)).toBe(200);
    expect(await (await maker.request('/settings/apps')).text()).toContain('Replayed App');

    const replay = await exchange(c);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');

    expect(await mcpStatus(first.body.access_token!)).toBe(401);
    const refresh = await token({ grant_type: 'refresh_token', client_id: c.clientId, refresh_token: first.body.refresh_token! });
    expect(refresh.status).toBe(400);
    expect(refresh.body.error).toBe('invalid_grant');
    expect(await (await maker.request('/settings/apps')).text()).not.toContain('Replayed App');
  });
});

describe('resource indicators', () => {
  it('a resource other than the MCP endpoint gets invalid_target, at the authorization and the token endpoint', async () => {
    const clientId = await register();
    const { challenge } = pkcePair();
    await expectErrorRedirect(authorize({ client_id: clientId, code_challenge: challenge, code_challenge_method: 'S256', resource: 'https://other.example/api/mcp' }), 'invalid_target');
    await expectErrorRedirect(authorize({ client_id: clientId, code_challenge: challenge, code_challenge_method: 'S256', resource: `${mcpUrl}/` }), 'invalid_target');

    const c = await approvedCode({ clientId });
    const other = await token({ grant_type: 'authorization_code', client_id: c.clientId, code: c.code, redirect_uri: c.redirectUri, code_verifier: c.verifier, resource: 'https://other.example/api/mcp' });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe('invalid_target');
  });

  it('without a resource, the access token is for the MCP endpoint', async () => {
    const c = await approvedCode();
    const tokens = await exchange(c);
    expect(tokens.status).toBe(200);
    const claims = jwtClaims(tokens.body.access_token!);
    expect(claims.aud).toBe(mcpUrl);
    expect(claims.iss).toBe(stack.baseUrl);
    expect(claims.scope).toBe('listings:read');
    expect(claims.client_id).toBe(c.clientId);
    expect(Number(claims.exp) - Number(claims.iat)).toBe(3600);
    const header = JSON.parse(Buffer.from(tokens.body.access_token!.split('.')[0]!, 'base64url').toString()) as { typ: string; alg: string };
    expect(header).toMatchObject({ typ: 'at+jwt', alg: 'ES256' });
  });
});

describe('authorization responses', () => {
  it('carry iss on success, on denial and on every error sent back to the client', async () => {
    const approved = await approvedCode();
    expect(approved.back.searchParams.get('iss')).toBe(stack.baseUrl);
    expect(approved.back.searchParams.get('state')).toBe('st-1');

    const clientId = await register();
    const { challenge } = pkcePair();
    const denied = await decideConsent(maker, authorize({ client_id: clientId, code_challenge: challenge, code_challenge_method: 'S256' }), 'deny');
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('iss')).toBe(stack.baseUrl);

    await expectErrorRedirect(authorize({ client_id: clientId, code_challenge: challenge, code_challenge_method: 'plain' }), 'invalid_request');
    await expectErrorRedirect(authorize({ client_id: clientId, code_challenge: challenge, code_challenge_method: 'S256', response_type: 'token' }), 'unsupported_response_type');
    await expectErrorRedirect(authorize({ client_id: clientId, code_challenge: challenge, code_challenge_method: 'S256', resource: 'https://other.example/' }), 'invalid_target');
    await expectErrorRedirect(authorize({ client_id: clientId, code_challenge: challenge, code_challenge_method: 'S256', prompt: 'none' }), 'login_required');
  });
});

describe('the token endpoint', () => {
  async function raw(init: RequestInit & { path?: string }) {
    const res = await fetch(`${stack.baseUrl}${init.path ?? '/oauth/token'}`, init);
    const text = await res.text();
    return { status: res.status, headers: res.headers, text };
  }

  it('answers every error in JSON, never cached, even to a client that prefers HTML', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const clientId = await register();
    const cases: Record<string, RequestInit> = {
      'an unknown grant_type': { method: 'POST', headers: form, body: `grant_type=password&client_id=${clientId}&username=a&password=b` },
      'no grant_type': { method: 'POST', headers: form, body: `client_id=${clientId}` },
      'no code': { method: 'POST', headers: form, body: `grant_type=authorization_code&client_id=${clientId}&redirect_uri=${encodeURIComponent(CALLBACK)}` },
      'an unknown code': { method: 'POST', headers: form, body: `grant_type=authorization_code&client_id=${clientId}&code=nope&redirect_uri=${encodeURIComponent(CALLBACK)}&code_verifier=${'a'.repeat(43)}` },
      'an unknown client': { method: 'POST', headers: form, body: 'grant_type=refresh_token&client_id=no-such-client&refresh_token=x' },
      'no client': { method: 'POST', headers: form, body: 'grant_type=refresh_token&refresh_token=x' },
      'a repeated parameter': { method: 'POST', headers: form, body: `grant_type=refresh_token&grant_type=refresh_token&client_id=${clientId}&refresh_token=x` },
      'a JSON body': { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'refresh_token', client_id: clientId, refresh_token: 'x' }) },
      'no content type': { method: 'POST', body: new Blob([`grant_type=refresh_token&client_id=${clientId}&refresh_token=x`]) },
      'an empty body': { method: 'POST', headers: form, body: '' },
      GET: { method: 'GET' },
      PUT: { method: 'PUT', headers: form, body: 'grant_type=refresh_token' },
      DELETE: { method: 'DELETE' },
      'a body over the limit': { method: 'POST', headers: form, body: `grant_type=refresh_token&client_id=${clientId}&refresh_token=${'x'.repeat(TOKEN_BODY_LIMIT)}` },
    };
    const asHtml = Object.entries(cases).map(([what, init]): [string, RequestInit] => [
      `${what}, Accept: text/html`,
      { ...init, headers: { ...(init.headers as Record<string, string>), accept: 'text/html,*/*;q=0.8' } },
    ]);
    const revocation = { method: 'POST', headers: { ...form, accept: 'text/html' }, body: 'token=x' };
    const all: [string, RequestInit & { path?: string }][] = [...Object.entries(cases), ...asHtml, ['revocation without a client, Accept: text/html', { ...revocation, path: '/oauth/revoke' }]];
    for (const [what, init] of all) {
      const res = await raw(init);
      expect(res.status, what).toBeGreaterThanOrEqual(400);
      expect(res.status, what).toBeLessThan(500);
      expect(res.headers.get('content-type'), what).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control'), what).toBe('no-store');
      const body = JSON.parse(res.text) as { error: unknown; error_description: unknown };
      expect(typeof body.error, what).toBe('string');
      expect(typeof body.error_description, what).toBe('string');
    }
  });

  it(`reads a body of exactly ${TOKEN_BODY_LIMIT / 1024} KB and refuses one byte more, saying why`, async () => {
    const clientId = await register();
    const head = `grant_type=refresh_token&client_id=${clientId}&refresh_token=`;
    const body = (size: number) => head + 'x'.repeat(size - head.length);
    const at = await raw({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body(TOKEN_BODY_LIMIT) });
    expect(JSON.parse(at.text)).toMatchObject({ error: 'invalid_grant' });
    const over = await raw({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body(TOKEN_BODY_LIMIT + 1) });
    expect(over.status).toBe(400);
    expect(JSON.parse(over.text)).toMatchObject({ error: 'invalid_request', error_description: 'The request body is too large.' });
  });
});

describe('CORS', () => {
  const origin = 'https://app.example';

  async function preflight(path: string, method: string) {
    const res = await fetch(`${stack.baseUrl}${path}`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type' },
    });
    expect(res.status, path).toBeLessThan(300);
    const allowOrigin = res.headers.get('access-control-allow-origin');
    expect([origin, '*'], path).toContain(allowOrigin);
    expect(res.headers.get('access-control-allow-methods')?.toUpperCase(), path).toContain(method);
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase(), path).toContain('content-type');
  }

  it('answers preflights and allows reading the metadata documents', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api/mcp']) {
      await preflight(path, 'GET');
      const res = await fetch(`${stack.baseUrl}${path}`, { headers: { origin } });
      expect(res.status, path).toBe(200);
      expect([origin, '*'], path).toContain(res.headers.get('access-control-allow-origin'));
    }
  });

  it('answers preflights and allows reading registration answers, refusals included', async () => {
    await preflight('/oauth/register', 'POST');
    const ok = await fetch(`${stack.baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Browser app', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' }),
    });
    expect(ok.status).toBe(201);
    expect([origin, '*']).toContain(ok.headers.get('access-control-allow-origin'));
    const refused = await fetch(`${stack.baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://app.example/cb'] }),
    });
    expect(refused.status).toBe(400);
    expect([origin, '*']).toContain(refused.headers.get('access-control-allow-origin'));
  });

  it('answers preflights and allows reading token answers, errors included', async () => {
    await preflight('/oauth/token', 'POST');
    await preflight('/oauth/revoke', 'POST');
    const c = await approvedCode();
    const ok = await token({ grant_type: 'authorization_code', client_id: c.clientId, code: c.code, redirect_uri: c.redirectUri, code_verifier: c.verifier }, { origin });
    expect(ok.status).toBe(200);
    expect([origin, '*']).toContain(ok.headers.get('access-control-allow-origin'));
    const refused = await token({ grant_type: 'authorization_code', client_id: c.clientId, code: 'nope', redirect_uri: c.redirectUri, code_verifier: c.verifier }, { origin });
    expect(refused.status).toBe(400);
    expect([origin, '*']).toContain(refused.headers.get('access-control-allow-origin'));
  });
});

describe('dynamic registration', () => {
  it('answers with the scope the client registered, its resource scopes included', async () => {
    const res = await fetch(`${stack.baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Scoped', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none', scope: 'listings:read listings:write offline_access' }),
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { scope: string }).scope).toBe('listings:read listings:write offline_access');
  });
});

describe('token revocation (RFC 7009)', () => {
  it('revoking a refresh token answers 200; the refresh token and its grant stop working', async () => {
    const c = await approvedCode({ scope: 'listings:read offline_access' });
    const tokens = (await exchange(c)).body;
    // The service's output is its JSON log: the library has nothing to print on the way.
    const printed = vi.spyOn(console, 'info');
    const revoked = await oauthPost(stack.baseUrl, { token: tokens.refresh_token!, token_type_hint: 'refresh_token', client_id: c.clientId }, { path: '/oauth/revoke' });
    expect(revoked.status).toBe(200);
    const refresh = await token({ grant_type: 'refresh_token', client_id: c.clientId, refresh_token: tokens.refresh_token! });
    expect(refresh.status).toBe(400);
    expect(refresh.body.error).toBe('invalid_grant');
    expect(await mcpStatus(tokens.access_token!)).toBe(401);
    // Revoking again, or revoking nonsense, still answers 200 (RFC 7009 section 2.2).
    expect((await oauthPost(stack.baseUrl, { token: tokens.refresh_token!, client_id: c.clientId }, { path: '/oauth/revoke' })).status).toBe(200);
    expect((await oauthPost(stack.baseUrl, { token: 'not-a-token', client_id: c.clientId }, { path: '/oauth/revoke' })).status).toBe(200);
    expect(printed.mock.calls).toEqual([]);
    printed.mockRestore();
  });

  it("another client cannot revoke a client's refresh token", async () => {
    const c = await approvedCode({ scope: 'listings:read offline_access' });
    const tokens = (await exchange(c)).body;
    const stranger = await register({ client_name: 'Stranger' });
    await oauthPost(stack.baseUrl, { token: tokens.refresh_token!, client_id: stranger }, { path: '/oauth/revoke' });
    const refresh = await token({ grant_type: 'refresh_token', client_id: c.clientId, refresh_token: tokens.refresh_token! });
    expect(refresh.status).toBe(200);
    expect(await mcpStatus(refresh.body.access_token!)).toBe(200);
  });
});

describe('CSRF on the consent page', () => {
  it('refuses a decision without the form token, with another session token, or sent from another site; no code is issued', async () => {
    const victim = await signIn(stack, 'csrf-victim@example.com');
    const attacker = await signIn(stack, 'csrf-attacker@example.com');
    const clientId = await register({ client_name: 'CSRF Target' });
    const { challenge } = pkcePair();
    const consent = await victim.follow(authorize({ client_id: clientId, code_challenge: challenge, code_challenge_method: 'S256' }));
    expect(new URL(consent.url).pathname).toMatch(/^\/oauth\/consent\//);
    const victimToken = Browser.csrfOf(await consent.res.text());
    const attackerToken = Browser.csrfOf(await (await attacker.request('/settings/apps')).text());
    const signedOutToken = Browser.csrfOf(await (await new Browser(stack.baseUrl).request('/signin')).text());
    expect(attackerToken).not.toBe(victimToken);

    const attempts: { form: Record<string, string>; headers?: Record<string, string> }[] = [
      { form: { decision: 'approve' } },
      { form: { decision: 'approve', _csrf: '' } },
      { form: { decision: 'approve', _csrf: attackerToken } },
      { form: { decision: 'approve', _csrf: signedOutToken }, headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', referer: 'https://evil.example/' } },
    ];
    for (const attempt of attempts) {
      const res = await victim.request(consent.url, { form: attempt.form, ...(attempt.headers && { headers: attempt.headers }) });
      expect(res.status, JSON.stringify(attempt)).toBe(403);
      expect(res.headers.get('location')).toBeNull();
    }
    const { rows } = await stack.db.pool.query('SELECT 1 FROM auth.grants WHERE client_id = $1', [clientId]);
    expect(rows).toEqual([]);
    expect(await stack.db.pool.query(`SELECT 1 FROM auth.oauth_records WHERE kind = 'AuthorizationCode' AND payload->>'clientId' = $1`, [clientId]).then((r) => r.rows)).toEqual([]);

    // The request is still open, and the victim's own decision goes through.
    const done = await victim.follow(consent.url, { form: { decision: 'approve', _csrf: victimToken } });
    expect(new URL(done.url).searchParams.get('code')).toBeTruthy();
  });

  it('the consent page cannot be framed', async () => {
    const clientId = await register();
    const { challenge } = pkcePair();
    const consent = await maker.follow(authorize({ client_id: clientId, code_challenge: challenge, code_challenge_method: 'S256' }));
    expect(consent.res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(consent.res.headers.get('x-frame-options')?.toUpperCase()).toBe('DENY');
    await consent.res.body?.cancel();
  });
});

describe('session fixation', () => {
  const cookieOf = (b: Browser) => b.jar.get(SESSION_COOKIE);

  async function sessionOwner(cookie: string): Promise<string | null> {
    const { rows } = await stack.db.pool.query<{ email: string }>(
      'SELECT m.email FROM catalog.sessions s JOIN catalog.makers m ON m.id = s.maker_id WHERE s.token_hash = $1',
      [createHash('sha256').update(cookie).digest()],
    );
    return rows[0]?.email ?? null;
  }

  /** Who a session cookie signs in, as the site itself tells: the account on Connected apps. */
  async function pageOwner(cookie: string): Promise<string | null> {
    const b = new Browser(stack.baseUrl);
    b.jar.set(SESSION_COOKIE, cookie);
    const res = await b.request('/settings/apps');
    if (res.status !== 200) return null;
    const html = await res.text();
    return /fixation-[a-z]+@example\.com/.exec(html)?.[0] ?? 'someone';
  }

  it('a cookie planted before sign-in is replaced, and never signs in the victim', async () => {
    const planted = 'planted-by-the-attacker-0123456789abcdef0123456789';
    const victim = new Browser(stack.baseUrl);
    victim.jar.set(SESSION_COOKIE, planted);
    await signIn(stack, 'fixation-victim@example.com', victim);
    expect(cookieOf(victim)).toBeTruthy();
    expect(cookieOf(victim)).not.toBe(planted);
    expect(await pageOwner(cookieOf(victim)!)).toBe('fixation-victim@example.com');
    expect(await pageOwner(planted)).toBeNull();
    expect(await sessionOwner(planted)).toBeNull();
  });

  it("the attacker's own session planted in the victim's browser is replaced at sign-in and never becomes the victim's", async () => {
    const attacker = await signIn(stack, 'fixation-attacker@example.com');
    const attackerCookie = cookieOf(attacker)!;
    const victim = new Browser(stack.baseUrl);
    victim.jar.set(SESSION_COOKIE, attackerCookie);

    // The victim opens a sign-in link of their own (asked for elsewhere) in that browser.
    const ask = new Browser(stack.baseUrl);
    const form = await ask.request('/signin');
    const before = stack.mails.length;
    await ask.request('/signin', { form: { email: 'fixation-victim2@example.com', _csrf: Browser.csrfOf(await form.text()) } });
    const link = new URL(/https?:\/\/\S+\/signin\/link\/\S+/.exec(stack.mails.slice(before).find((m) => m.to === 'fixation-victim2@example.com')!.text)![0]);
    const confirm = await victim.request(link.pathname);
    expect(confirm.status).toBe(200);
    const done = await victim.request(link.pathname, { form: { _csrf: Browser.csrfOf(await confirm.text()) } });
    expect(done.status).toBe(303);

    expect(cookieOf(victim)).not.toBe(attackerCookie);
    expect(await sessionOwner(cookieOf(victim)!)).toBe('fixation-victim2@example.com');
    // The attacker's token never gains the victim's account (the browser's earlier session ends).
    expect(await sessionOwner(attackerCookie)).not.toBe('fixation-victim2@example.com');
    expect(await pageOwner(attackerCookie)).not.toBe('fixation-victim2@example.com');
  });
});

describe('dynamic registrations', () => {
  it(`are forgotten after ${IDLE_DAYS} days unused`, async () => {
    const clientId = await register({ client_name: 'Idle client' });
    const { challenge } = pkcePair();
    const idleFor = (interval: string) => stack.db.pool.query(`UPDATE auth.oauth_records SET last_used_at = now() - $2::interval WHERE kind = 'Client' AND id_key = $1`, [clientId, interval]);

    // Just inside the limit the client is known, and using it counts as use.
    await idleFor(`${IDLE_DAYS} days - 1 minute`);
    const inside = await authorizationAnswer(authorize({ client_id: clientId, code_challenge: challenge, code_challenge_method: 'S256' }));
    expect(inside.status).toBe(303);
    const { rows } = await stack.db.pool.query<{ idle: boolean }>(`SELECT last_used_at > now() - interval '1 minute' AS idle FROM auth.oauth_records WHERE kind = 'Client' AND id_key = $1`, [clientId]);
    expect(rows[0]?.idle).toBe(true);

    await idleFor(`${IDLE_DAYS} days 1 minute`);
    const { page } = await expectErrorPage(authorize({ client_id: clientId, code_challenge: challenge, code_challenge_method: 'S256' }));
    expect(page.texts('p').join(' ')).toContain('not known');
    const tokenAnswer = await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: 'x' });
    expect(tokenAnswer.body.error).toBe('invalid_client');
  });
});

describe('secrets at rest', () => {
  /** Every row of every table of the service, as JSON text (bytea as hex). */
  async function databaseDump(): Promise<string> {
    const { rows: tables } = await stack.db.pool.query<{ schema: string; name: string }>(
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
       WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    expect(tables.map((t) => `${t.schema}.${t.name}`)).toEqual(expect.arrayContaining(['auth.oauth_records', 'catalog.sessions', 'catalog.sign_in_links']));
    const parts: string[] = [];
    for (const t of tables) {
      const { rows } = await stack.db.pool.query<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM "${t.schema}"."${t.name}" t`);
      parts.push(...rows.map((r) => r.j));
    }
    return parts.join('\n');
  }

  const rowsHolding = (dump: string, secret: string) => dump.split('\n').filter((row) => row.includes(secret));

  it('codes, refresh tokens, sign-in links and sessions are stored only as hashes', async () => {
    const before = stack.mails.length;
    const browser = await signIn(stack, 'hashes@example.com');
    const linkToken = /\/signin\/link\/(\S+)/.exec(stack.mails.slice(before).find((m) => m.to === 'hashes@example.com')!.text)![1]!;
    const sessionToken = browser.jar.get(SESSION_COOKIE)!;

    const clientId = await register({ client_name: 'Hash check' });
    const { verifier, challenge } = pkcePair();
    const consent = await browser.follow(authorize({ client_id: clientId, scope: 'listings:read offline_access', code_challenge: challenge, code_challenge_method: 'S256' }));
    // The library's own browser session and interaction, while the authorization is under way.
    const interaction = new URL(consent.url).pathname.split('/').pop()!;
    expect(browser.jar.get('oauth_interaction')).toBe(interaction);
    expect(rowsHolding(await databaseDump(), interaction)).toEqual([]);

    const done = await browser.follow(consent.url, { form: { _csrf: Browser.csrfOf(await consent.res.text()), decision: 'approve' } });
    const code = new URL(done.url).searchParams.get('code')!;
    const first = (await token({ grant_type: 'authorization_code', client_id: clientId, code, redirect_uri: CALLBACK, code_verifier: verifier })).body;
    const second = (await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: first.refresh_token! })).body;
    expect(second.refresh_token).toBeTruthy();

    const dump = await databaseDump();
    const secrets = { linkToken, sessionToken, code, refresh1: first.refresh_token!, refresh2: second.refresh_token!, interaction };
    for (const [what, secret] of Object.entries(secrets)) expect(rowsHolding(dump, secret), what).toEqual([]);
    // The rows are there, under the hashes: the scan did look at them.
    for (const [what, secret] of Object.entries({ linkToken, sessionToken, code, refresh2: second.refresh_token! })) {
      expect(dump.includes(sha256hex(secret)), what).toBe(true);
    }
  });
});
