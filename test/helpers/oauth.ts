import { createHash, randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { parsePage } from './html.ts';
import type { TestStack } from './stack.ts';

/**
 * The browser half of the OAuth flow without a browser: a cookie jar that follows redirects by
 * hand, sign-in through the e-mailed link, and the consent form. The client half is the MCP SDK's
 * own (an OAuthClientProvider below, driven by StreamableHTTPClientTransport).
 */

export class CookieJar {
  private readonly cookies = new Map<string, string>();

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

export class Browser {
  readonly jar = new CookieJar();

  constructor(readonly origin: string) {}

  async request(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Response> {
    const target = new URL(url, this.origin);
    const headers: Record<string, string> = { ...init.headers };
    // Cookies go only to the service itself, as a browser would scope them.
    if (target.origin === this.origin && this.jar.header()) headers.cookie = this.jar.header();
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(target, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    if (target.origin === this.origin) this.jar.take(res);
    return res;
  }

  /** Follows redirects on the service's origin; stops at the first answer that is not one, or that leaves the origin. */
  async follow(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<{ res: Response; url: string }> {
    let res = await this.request(url, init);
    let at = new URL(url, this.origin).href;
    for (let hops = 0; hops < 10 && res.status >= 300 && res.status < 400; hops++) {
      const next = new URL(res.headers.get('location')!, at).href;
      if (new URL(next).origin !== this.origin) return { res, url: next };
      at = next;
      res = await this.request(next);
    }
    return { res, url: at };
  }

  /** The CSRF token of the first form on a page. */
  static csrfOf(html: string): string {
    const page = parsePage(html);
    const input = page.all('input').find((i) => page.attr(i, 'name') === '_csrf');
    if (!input) throw new Error('no CSRF field on the page');
    return page.attr(input, 'value')!;
  }
}

/** Signs a maker in through the e-mailed link, as a person would. Returns the browser. */
export async function signIn(stack: TestStack, email: string, browser = new Browser(stack.baseUrl)): Promise<Browser> {
  const form = await browser.request('/signin');
  const mailsBefore = stack.mails.length;
  const sent = await browser.request('/signin', { form: { email, _csrf: Browser.csrfOf(await form.text()) } });
  if (sent.status !== 200) throw new Error(`asking for a sign-in link answered ${sent.status}`);
  const mail = stack.mails.slice(mailsBefore).find((m) => m.to === email);
  if (!mail) throw new Error(`no sign-in mail to ${email}`);
  const link = /https?:\/\/\S+\/signin\/link\/\S+/.exec(mail.text)![0];
  const confirm = await browser.request(link);
  const done = await browser.request(link, { form: { _csrf: Browser.csrfOf(await confirm.text()) } });
  if (done.status !== 303) throw new Error(`using the sign-in link answered ${done.status}`);
  return browser;
}

/**
 * Opens an authorization URL in the signed-in browser and answers the consent page. Returns
 * the URL the browser is finally sent to (the client's redirect URI with code or error).
 */
export async function decideConsent(browser: Browser, authorizationUrl: string, decision: 'approve' | 'deny'): Promise<URL> {
  const consent = await browser.follow(authorizationUrl);
  if (new URL(consent.url).origin !== browser.origin) return new URL(consent.url);
  if (!new URL(consent.url).pathname.startsWith('/oauth/consent/')) throw new Error(`expected the consent page, got ${consent.url} (${consent.res.status})`);
  const html = await consent.res.text();
  const done = await browser.follow(consent.url, { form: { _csrf: Browser.csrfOf(html), decision } });
  return new URL(done.url);
}

/** An OAuth client as an MCP host keeps it: in memory, redirecting by handing the URL to the test. */
export class MemoryOAuthClient implements OAuthClientProvider {
  private info: OAuthClientInformationMixed | undefined;
  private savedTokens: OAuthTokens | undefined;
  private verifier = '';
  authorizationUrl: URL | undefined;
  readonly clientMetadataUrl?: string;

  constructor(
    private readonly metadata: OAuthClientMetadata,
    opts: { clientMetadataUrl?: string } = {},
  ) {
    if (opts.clientMetadataUrl) this.clientMetadataUrl = opts.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.metadata.redirect_uris[0]!;
  }

  get clientMetadata(): OAuthClientMetadata {
    return this.metadata;
  }

  clientInformation() {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }

  tokens() {
    return this.savedTokens;
  }

  saveTokens(tokens: OAuthTokens) {
    this.savedTokens = tokens;
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }
}

const MAKER_CALLBACK = 'http://127.0.0.1:45679/callback';

/**
 * A maker's access token for the MCP endpoint, through the real flow: dynamic registration, the
 * maker signed in by e-mailed link, consent approved, code exchanged with PKCE.
 */
export async function makerToken(stack: TestStack, email: string, scope = 'listings:read listings:write offline_access', browser?: Browser): Promise<{ accessToken: string; refreshToken: string | undefined; browser: Browser }> {
  const signedIn = browser ?? (await signIn(stack, email));
  const registered = await fetch(`${stack.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Maker test app', redirect_uris: [MAKER_CALLBACK], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' }),
  });
  const { client_id } = (await registered.json()) as { client_id: string };
  const { verifier, challenge } = pkcePair();
  const url = authorizationRequest(stack.baseUrl, { client_id, response_type: 'code', redirect_uri: MAKER_CALLBACK, scope, state: 'x', code_challenge: challenge, code_challenge_method: 'S256' });
  const back = await decideConsent(signedIn, url, 'approve');
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code: ${back.href}`);
  const res = await fetch(`${stack.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id, redirect_uri: MAKER_CALLBACK, code_verifier: verifier }),
  });
  const tokens = (await res.json()) as { access_token?: string; refresh_token?: string };
  if (!tokens.access_token) throw new Error(`no token: ${JSON.stringify(tokens)}`);
  return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token, browser: signedIn };
}

/** A PKCE verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** An authorization request URL on the service; undefined parameters are left out. */
export function authorizationRequest(baseUrl: string, params: Record<string, string | undefined>): string {
  const url = new URL(`${baseUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

/** A form POST to the token endpoint (or another OAuth endpoint), answered as JSON. */
export async function oauthPost(
  baseUrl: string,
  params: Record<string, string>,
  opts: { path?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: Record<string, string> }> {
  const res = await fetch(`${baseUrl}${opts.path ?? '/oauth/token'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...opts.headers },
    body: new URLSearchParams(params),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, string>) : {} };
}

/** Dynamic client registration of a public client; returns the client id. */
export async function registerPublicClient(baseUrl: string, metadata: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', ...metadata }),
  });
  const body = (await res.json()) as { client_id?: string };
  if (res.status !== 201 || !body.client_id) throw new Error(`registration answered ${res.status}: ${JSON.stringify(body)}`);
  return body.client_id;
}

/** The claims of a JWT, read without checking it. */
export function jwtClaims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}
