import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { InvalidGrantError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationServerMetadata, OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_BODY_LIMIT } from '../../../src/http/oauth-routes.ts';
import { decideConsent, oauthPost, pkcePair, signIn, type Browser } from '../../helpers/oauth.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * What the token, revocation and registration endpoints answer, driven by the MCP SDK's own
 * OAuth client functions wherever they can make the request: the scope of a token answer that
 * carries a refresh token, a code spent by a wrong PKCE verifier, and Cache-Control: no-store on
 * every answer of the three endpoints, whatever its status.
 */
const CALLBACK = 'http://127.0.0.1:45690/callback';
const MAKER_SCOPES = 'listings:read listings:write offline_access';

let stack: TestStack;
let mcpUrl: URL;
let metadata: AuthorizationServerMetadata;
let maker: Browser;

/** Every answer the SDK's requests got from the three endpoints, with its Cache-Control. */
const answers: { path: string; status: number; cacheControl: string | null }[] = [];
const recordingFetch: FetchLike = async (url, init) => {
  const res = await fetch(url, init);
  answers.push({ path: new URL(String(url)).pathname, status: res.status, cacheControl: res.headers.get('cache-control') });
  return res;
};

beforeAll(async () => {
  stack = await startTestStack({ realPublicUrl: true, env: { RATE_LIMIT_OTHER_PER_MIN: '100000' } });
  mcpUrl = new URL(`${stack.baseUrl}/api/mcp`);
  metadata = (await discoverAuthorizationServerMetadata(stack.baseUrl, { fetchFn: recordingFetch }))!;
  maker = await signIn(stack, 'answers-maker@example.com');
});

afterAll(async () => {
  await stack?.stop();
});

function register(name = 'SDK client'): Promise<OAuthClientInformationFull> {
  return registerClient(stack.baseUrl, {
    metadata,
    clientMetadata: { client_name: name, redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' },
    scope: MAKER_SCOPES,
    fetchFn: recordingFetch,
  });
}

/** The SDK starts an authorization, the maker approves it: the code and the SDK's verifier. */
async function approved(clientInformation: OAuthClientInformationFull, scope = MAKER_SCOPES) {
  const { authorizationUrl, codeVerifier } = await startAuthorization(stack.baseUrl, { metadata, clientInformation, redirectUrl: CALLBACK, scope, resource: mcpUrl });
  const back = await decideConsent(maker, authorizationUrl.href, 'approve');
  const code = back.searchParams.get('code');
  expect(code, back.href).toBeTruthy();
  return { code: code!, codeVerifier };
}

function exchange(clientInformation: OAuthClientInformationFull, code: string, codeVerifier: string, redirectUri = CALLBACK) {
  return exchangeAuthorization(stack.baseUrl, { metadata, clientInformation, authorizationCode: code, codeVerifier, redirectUri, resource: mcpUrl, fetchFn: recordingFetch });
}

async function mcpStatus(accessToken: string): Promise<number> {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'my_listings', arguments: {} } }),
  });
  await res.body?.cancel();
  return res.status;
}

async function connectedApps(): Promise<string> {
  return (await maker.request('/settings/apps')).text();
}

describe('a token answer that carries a refresh token', () => {
  it('lists offline_access in scope, from the code and from every refresh', async () => {
    const client = await register();
    const { code, codeVerifier } = await approved(client);
    const tokens = await exchange(client, code, codeVerifier);
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.scope).toBe(MAKER_SCOPES);

    const refreshed = await refreshAuthorization(stack.baseUrl, { metadata, clientInformation: client, refreshToken: tokens.refresh_token!, resource: mcpUrl, fetchFn: recordingFetch });
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.scope).toBe(MAKER_SCOPES);
    // A retry of the same refresh within seconds gets the very same answer, scope included.
    const retried = await refreshAuthorization(stack.baseUrl, { metadata, clientInformation: client, refreshToken: tokens.refresh_token!, resource: mcpUrl, fetchFn: recordingFetch });
    expect(retried).toEqual(refreshed);
    expect(await mcpStatus(refreshed.access_token)).toBe(200);
  });

  it('and an answer without one names only what the access token carries', async () => {
    const client = await register('Read-only app');
    const { code, codeVerifier } = await approved(client, 'listings:read');
    const tokens = await exchange(client, code, codeVerifier);
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.scope).toBe('listings:read');
  });
});

describe('a code redeemed with a wrong verifier', () => {
  it('is spent: the right verifier afterwards gets invalid_grant, and the authorization leaves Connected apps', async () => {
    const client = await register('Guessed App');
    const { code, codeVerifier } = await approved(client);
    expect(await connectedApps()).toContain('Guessed App');
    await expect(exchange(client, code, pkcePair().verifier)).rejects.toBeInstanceOf(InvalidGrantError);
    await expect(exchange(client, code, codeVerifier)).rejects.toBeInstanceOf(InvalidGrantError);
    expect(await connectedApps()).not.toContain('Guessed App');
  });

  it('is spent when no verifier is sent either', async () => {
    const client = await register();
    const { code, codeVerifier } = await approved(client);
    const missing = await oauthPost(stack.baseUrl, { grant_type: 'authorization_code', client_id: client.client_id, code, redirect_uri: CALLBACK });
    expect(missing.body.error).toBe('invalid_grant');
    await expect(exchange(client, code, codeVerifier)).rejects.toBeInstanceOf(InvalidGrantError);
  });

  it('is not spent by another client presenting it, nor by its own client with the right verifier and another redirect_uri', async () => {
    const client = await register('Patient App');
    const stranger = await register('Stranger');
    const { code, codeVerifier } = await approved(client);
    await expect(exchange(stranger, code, pkcePair().verifier)).rejects.toBeInstanceOf(InvalidGrantError);
    await expect(exchange(client, code, codeVerifier, 'http://127.0.0.1:45690/elsewhere')).rejects.toBeInstanceOf(InvalidGrantError);
    const tokens = await exchange(client, code, codeVerifier);
    expect(await mcpStatus(tokens.access_token)).toBe(200);
  });

  it('once redeemed, revokes nothing: a wrong verifier proves nothing, so it cannot disconnect the app', async () => {
    const client = await register('Redeemed App');
    const { code, codeVerifier } = await approved(client);
    const tokens = await exchange(client, code, codeVerifier);
    await expect(exchange(client, code, pkcePair().verifier)).rejects.toBeInstanceOf(InvalidGrantError);
    expect(await mcpStatus(tokens.access_token)).toBe(200);
    expect(await connectedApps()).toContain('Redeemed App');
    // With its own verifier, a second redemption is a replay: the grant is revoked.
    await expect(exchange(client, code, codeVerifier)).rejects.toBeInstanceOf(InvalidGrantError);
    expect(await mcpStatus(tokens.access_token)).toBe(401);
  });
});

describe('Cache-Control: no-store', () => {
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const origin = 'https://app.example';

  async function answer(path: string, init: RequestInit): Promise<{ path: string; status: number; cacheControl: string | null }> {
    const res = await fetch(`${stack.baseUrl}${path}`, init);
    await res.body?.cancel();
    return { path, status: res.status, cacheControl: res.headers.get('cache-control') };
  }

  function expectNoStore(seen: readonly { path: string; status: number; cacheControl: string | null }[]): void {
    for (const a of seen) expect(a.cacheControl, `${a.path} ${a.status}`).toBe('no-store');
  }

  it('is on every answer the SDK got from the token and registration endpoints, refusals included', () => {
    const fromClientEndpoints = answers.filter((a) => a.path === '/oauth/token' || a.path === '/oauth/register');
    expect(new Set(fromClientEndpoints.map((a) => a.status))).toEqual(new Set([200, 201, 400]));
    expectNoStore(fromClientEndpoints);
  });

  it('is on every status the token, revocation and registration endpoints answer, preflights included', async () => {
    const client = await register();
    const preflight = () => ({ method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
    const seen = [
      // token: 400s, 401, 405, a body over the limit, and CORS
      await answer('/oauth/token', { method: 'POST', headers: form, body: `grant_type=password&client_id=${client.client_id}` }),
      await answer('/oauth/token', { method: 'POST', headers: form, body: 'grant_type=refresh_token&client_id=no-such-client&refresh_token=x' }),
      await answer('/oauth/token', { method: 'POST', headers: { ...form, origin: 'null' }, body: `grant_type=refresh_token&client_id=${client.client_id}&refresh_token=x` }),
      await answer('/oauth/token', { method: 'GET' }),
      await answer('/oauth/token', { method: 'POST', headers: form, body: `grant_type=refresh_token&refresh_token=${'x'.repeat(TOKEN_BODY_LIMIT)}` }),
      await answer('/oauth/token', preflight()),
      await answer('/oauth/token', { method: 'OPTIONS' }),
      // revocation: 200, 400, 401, 405, and CORS
      await answer('/oauth/revoke', { method: 'POST', headers: form, body: `token=not-a-token&client_id=${client.client_id}` }),
      await answer('/oauth/revoke', { method: 'POST', headers: form, body: `client_id=${client.client_id}` }),
      await answer('/oauth/revoke', { method: 'POST', headers: form, body: 'token=x&client_id=no-such-client' }),
      await answer('/oauth/revoke', { method: 'POST', headers: form, body: 'token=x' }),
      await answer('/oauth/revoke', { method: 'GET' }),
      await answer('/oauth/revoke', preflight()),
      // registration: 201, 400, 405, and CORS
      await answer('/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' }) }),
      await answer('/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['http://app.example/cb'] }) }),
      await answer('/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'not json' }),
      await answer('/oauth/register', { method: 'GET' }),
      await answer('/oauth/register', preflight()),
    ];
    expect(seen.map((a) => `${a.path} ${a.status}`)).toEqual([
      '/oauth/token 400',
      '/oauth/token 401',
      '/oauth/token 400',
      '/oauth/token 405',
      '/oauth/token 400',
      '/oauth/token 204',
      '/oauth/token 404',
      '/oauth/revoke 200',
      '/oauth/revoke 400',
      '/oauth/revoke 401',
      '/oauth/revoke 400',
      '/oauth/revoke 405',
      '/oauth/revoke 204',
      '/oauth/register 201',
      '/oauth/register 400',
      '/oauth/register 400',
      '/oauth/register 405',
      '/oauth/register 204',
    ]);
    expectNoStore(seen);
  });

  it('is on the answers of a failing authorization server (500) and of the registration limit (429)', async () => {
    const client = await register();
    const { code } = await approved(client);
    const pool = stack.db.pool;
    const seen = [];
    // The Connected apps table gone: the library answers the wrong verifier, then revoking the
    // code's grant fails after it, past the library's own error handling.
    await pool.query('ALTER TABLE auth.grants RENAME TO grants_away');
    try {
      seen.push(await answer('/oauth/token', { method: 'POST', headers: form, body: new URLSearchParams({ grant_type: 'authorization_code', client_id: client.client_id, code, redirect_uri: CALLBACK, code_verifier: pkcePair().verifier }).toString() }));
    } finally {
      await pool.query('ALTER TABLE auth.grants_away RENAME TO grants');
    }
    // The authorization server's own records gone: every endpoint fails inside the library.
    await pool.query('ALTER TABLE auth.oauth_records RENAME TO oauth_records_away');
    try {
      seen.push(await answer('/oauth/token', { method: 'POST', headers: form, body: `grant_type=refresh_token&client_id=${client.client_id}&refresh_token=x` }));
      seen.push(await answer('/oauth/revoke', { method: 'POST', headers: form, body: `token=x&client_id=${client.client_id}` }));
      seen.push(await answer('/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' }) }));
    } finally {
      await pool.query('ALTER TABLE auth.oauth_records_away RENAME TO oauth_records');
    }
    expect(seen.map((a) => a.status)).toEqual([500, 500, 500, 500]);
    expectNoStore(seen);

    // The registration limit: registrations from this address until one is refused.
    let limited;
    for (let i = 0; i < 40 && !limited; i++) {
      const res = await answer('/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' }) });
      if (res.status === 429) limited = res;
    }
    expect(limited?.status).toBe(429);
    expectNoStore([limited!]);
  });
});
