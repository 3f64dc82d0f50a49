import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createKey } from '../../../src/auth/consumer-keys/consumer-keys.ts';
import { parsePage } from '../../helpers/html.ts';
import { authorizationRequest, decideConsent, jwtClaims, oauthPost, pkcePair, registerPublicClient, signIn, type Browser } from '../../helpers/oauth.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * RFC 9700 (OAuth 2.0 Security Best Current Practice) attacks, each tried through the real
 * endpoints and refused: redirect URIs that only look registered, a code sent to the wrong
 * client, the metadata a client needs against mix-up, and tokens in query strings. The rest of
 * the list is in oauth-attacks.test.ts (PKCE downgrade, exact redirect matching, code replay, iss
 * on every response, CSRF on the consent page), oauth-answers.test.ts (codes spent or not),
 * oauth-mcp.test.ts (refresh-token reuse revokes the grant, tokens in the MCP URL) and
 * oauth-cimd.test.ts (client metadata documents, one that changes).
 */
const CALLBACK = 'http://127.0.0.1:45678/callback';

let stack: TestStack;
let maker: Browser;

beforeAll(async () => {
  stack = await startTestStack({ realPublicUrl: true, env: { RATE_LIMIT_OTHER_PER_MIN: '100000' } });
  maker = await signIn(stack, 'bcp-maker@example.com');
});

afterAll(async () => {
  await stack?.stop();
});

function register(metadata: Record<string, unknown> = {}) {
  return registerPublicClient(stack.baseUrl, { client_name: 'BCP Target', redirect_uris: [CALLBACK], ...metadata });
}

function authorize(params: Record<string, string | undefined>) {
  return authorizationRequest(stack.baseUrl, { response_type: 'code', redirect_uri: CALLBACK, state: 'st-1', ...params, scope: params.scope ?? 'listings:read' });
}

/** The status of an MCP read call made with this access token. */
async function mcpStatus(accessToken: string): Promise<number> {
  const res = await fetch(`${stack.baseUrl}/api/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_categories', arguments: {} } }),
  });
  await res.body?.cancel();
  return res.status;
}

function token(params: Record<string, string>) {
  return oauthPost(stack.baseUrl, params);
}

/** An approved authorization: the code and everything needed to exchange it. */
async function approvedCode(opts: { clientId?: string; scope?: string } = {}) {
  const clientId = opts.clientId ?? (await register());
  const { verifier, challenge } = pkcePair();
  const back = await decideConsent(maker, authorize({ client_id: clientId, scope: opts.scope, code_challenge: challenge, code_challenge_method: 'S256' }), 'approve');
  const code = back.searchParams.get('code');
  expect(code, back.href).toBeTruthy();
  return { clientId, verifier, code: code!, redirectUri: CALLBACK };
}

function exchange(c: { clientId: string; verifier: string; code: string; redirectUri: string }) {
  return token({ grant_type: 'authorization_code', client_id: c.clientId, code: c.code, redirect_uri: c.redirectUri, code_verifier: c.verifier });
}

/** The authorization endpoint stopped with its own page: no Location, nothing sent to the client. */
async function expectErrorPage(url: string) {
  const res = await fetch(url, { redirect: 'manual' });
  expect(res.status, url).toBe(400);
  expect(res.headers.get('location'), url).toBeNull();
  const html = await res.text();
  expect(parsePage(html).texts('h1'), url).toEqual(['This app cannot connect']);
  return { html };
}

describe('redirect URIs that only look registered (RFC 9700 section 4.1: exact string matching)', () => {
  it('an https redirect with path traversal, userinfo, a fragment or another port stops at the error page', async () => {
    const registered = 'https://app.example/oauth/callback';
    const clientId = await register({ redirect_uris: [registered] });
    const { challenge } = pkcePair();
    const lookalikes = [
      // Path traversal, including one that a URL parser would resolve to the registered path.
      'https://app.example/oauth/callback/../evil',
      'https://app.example/oauth/callback/%2e%2e/evil',
      'https://app.example/oauth/x/../callback',
      'https://app.example/oauth/callback/..%2f..%2fevil',
      // Userinfo: the browser would go to evil.example; or it carries what the client never registered.
      'https://app.example@evil.example/oauth/callback',
      'https://app.example:443@evil.example/oauth/callback',
      'https://evil.example@app.example/oauth/callback',
      // A fragment (RFC 6749 section 3.1.2: never part of a redirect URI).
      'https://app.example/oauth/callback#',
      'https://app.example/oauth/callback#https://evil.example/',
      // Another port, the default one spelled out, another scheme, another case.
      'https://app.example:444/oauth/callback',
      'https://app.example:443/oauth/callback',
      'http://app.example/oauth/callback',
      'https://app.example/OAuth/callback',
    ];
    for (const redirectUri of lookalikes) {
      const { html } = await expectErrorPage(authorize({ client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256' }));
      expect(html, redirectUri).not.toContain('evil.example/');
    }
  });

  it('a loopback redirect is matched on any port, but never with path traversal, userinfo, a fragment or another host', async () => {
    const clientId = await register();
    const { challenge } = pkcePair();
    for (const redirectUri of [
      'http://127.0.0.1:51234/callback/../evil',
      'http://127.0.0.1:51234/x/../callback',
      'http://evil.example@127.0.0.1:51234/callback',
      'http://127.0.0.1:51234@evil.example/callback',
      'http://127.0.0.1:45678@evil.example/callback',
      'http://127.0.0.1:51234/callback#x',
      'http://localhost:51234/callback',
      'http://[::1]:51234/callback',
      'https://127.0.0.1:51234/callback',
    ]) {
      await expectErrorPage(authorize({ client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256' }));
    }
  });

  it('registration refuses a redirect URI with a fragment or userinfo (invalid_redirect_uri)', async () => {
    for (const redirectUri of ['https://app.example/cb#x', 'https://app.example/cb#', 'https://app.example@evil.example/cb', 'https://user:pass@app.example/cb', 'http://evil.example@127.0.0.1/cb', 'https://@app.example/cb', 'com.example.app://user@callback/cb']) {
      const res = await fetch(`${stack.baseUrl}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Refused', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
      });
      expect(res.status, redirectUri).toBe(400);
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error, redirectUri).toBe('invalid_redirect_uri');
    }
  });
});

describe('a code sent to the wrong client', () => {
  it("client B exchanging client A's code, with A's verifier and redirect, gets invalid_grant; A's code still redeems", async () => {
    const a = await approvedCode({ clientId: await register({ client_name: 'Client A' }) });
    const b = await register({ client_name: 'Client B' });
    const stolen = await token({ grant_type: 'authorization_code', client_id: b, code: a.code, redirect_uri: a.redirectUri, code_verifier: a.verifier });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');
    expect(stolen.body.access_token).toBeUndefined();
    // Not spent: whoever holds a code and its verifier could present it as A, so refusing it to
    // B without spending it keeps a leaked code from locking A out (and B learns nothing).
    const own = await exchange(a);
    expect(own.status).toBe(200);
    expect(jwtClaims(own.body.access_token!).client_id).toBe(a.clientId);
  });
});

describe('mix-up (RFC 9207)', () => {
  it('the metadata names this issuer and promises iss on every authorization response', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const metadata = (await (await fetch(`${stack.baseUrl}${path}`)).json()) as Record<string, unknown>;
      expect(metadata.issuer, path).toBe(stack.baseUrl);
      expect(metadata.authorization_response_iss_parameter_supported, path).toBe(true);
      expect(metadata.authorization_endpoint, path).toBe(`${stack.baseUrl}/oauth/authorize`);
      expect(metadata.token_endpoint, path).toBe(`${stack.baseUrl}/oauth/token`);
    }
  });
});

describe('tokens in the query string (RFC 6750 section 2.3, RFC 9700)', () => {
  it('the REST API refuses ?access_token= with an OAuth access token or a consumer key, and serves the key from the header', async () => {
    const c = await approvedCode();
    const accessToken = (await exchange(c)).body.access_token!;
    const issued = await createKey(stack.db.pool, { name: `query-token-${Date.now()}` });
    // The key reaches every API process's table within moments (NOTIFY).
    await vi.waitFor(async () => {
      const res = await fetch(`${stack.baseUrl}/api/v1/categories`, { headers: { authorization: `Bearer ${issued.key}` } });
      await res.body?.cancel();
      expect(res.status).toBe(200);
    }, { timeout: 10_000, interval: 100 });

    const { rows } = await stack.db.pool.query<{ slug: string }>("SELECT slug FROM catalog.listings WHERE status = 'live' LIMIT 1");
    const paths = ['/api/v1/search', `/api/v1/products/${rows[0]!.slug}`, '/api/v1/categories', '/api/v1/changes', '/api/v1/export'];
    for (const path of paths) {
      for (const [what, value] of [['an access token', accessToken], ['a consumer key', issued.key]] as const) {
        const res = await fetch(`${stack.baseUrl}${path}?access_token=${encodeURIComponent(value)}`);
        const body = await res.text();
        expect(res.status, `${path} with ${what}`).toBe(400);
        expect(body, `${path} with ${what}`).toContain('access_token');
      }
    }
  });
});

describe('reuse of a rotated refresh token (RFC 9700)', () => {
  it('two rotations later, the first refresh token revokes the grant: every refresh token and access token of it stops working', async () => {
    const c = await approvedCode({ clientId: await register({ client_name: 'Rotated App' }), scope: 'listings:read offline_access' });
    const issued = (await exchange(c)).body;
    const refresh = (refreshToken: string) => token({ grant_type: 'refresh_token', client_id: c.clientId, refresh_token: refreshToken });
    const second = (await refresh(issued.refresh_token!)).body;
    const third = (await refresh(second.refresh_token!)).body;
    expect(new Set([issued.refresh_token, second.refresh_token, third.refresh_token]).size).toBe(3);
    for (const t of [issued, second, third]) expect(await mcpStatus(t.access_token!)).toBe(200);
    expect(await (await maker.request('/settings/apps')).text()).toContain('Rotated App');

    // Past the seconds in which a retry gets the same answer (refresh-replay.ts), it is reuse.
    await stack.db.pool.query("UPDATE auth.refresh_replays SET expires_at = now() - interval '1 second'");
    const reuse = await refresh(issued.refresh_token!);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    expect(reuse.body.access_token).toBeUndefined();

    expect((await refresh(third.refresh_token!)).body.error).toBe('invalid_grant');
    for (const t of [issued, second, third]) expect(await mcpStatus(t.access_token!)).toBe(401);
    expect(await (await maker.request('/settings/apps')).text()).not.toContain('Rotated App');
  });
});
