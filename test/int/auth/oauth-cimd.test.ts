import type http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parsePage } from '../../helpers/html.ts';
import { Browser, MemoryOAuthClient, signIn } from '../../helpers/oauth.ts';
import { makeSelfSignedCert, startHttpsSite, tableResolver, watchSockets, type SocketWatch, type TestSite } from '../../helpers/site-network.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * Clients that identify themselves by a Client ID Metadata Document: the client_id is an https
 * URL, and the document served there is the client's registration. The documents are served over
 * HTTPS on loopback with a throwaway certificate; host names resolve through a table, so names
 * that lead to private addresses can be fed to the service without a packet leaving loopback.
 */
const CALLBACK = 'http://127.0.0.1:45679/callback';
const DOCUMENT_LIMIT = 5 * 1024;

let stack: TestStack;
let site: TestSite;
let clientOrigin: string;
/** Documents the test site serves, by path; a function may answer the request itself. */
type Answer = (req: http.IncomingMessage, res: http.ServerResponse) => void;
const documents = new Map<string, string | Record<string, unknown> | Answer>();
const held: http.ServerResponse[] = [];

const resolver = tableResolver({
  'client.test': ['127.0.0.1'],
  'intranet.test': ['10.0.0.5'],
  'metadata.test': ['169.254.169.254'],
  'rebind.test': ['127.0.0.1', '10.0.0.5'],
});

beforeAll(async () => {
  const cert = await makeSelfSignedCert(['client.test']);
  site = await startHttpsSite((req, res) => {
    const doc = documents.get(new URL(req.url ?? '/', 'https://client.test').pathname);
    if (doc === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    } else if (typeof doc === 'function') {
      doc(req, res);
    } else {
      const body = typeof doc === 'string' ? doc : JSON.stringify(doc);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    }
  }, cert);
  clientOrigin = `https://client.test:${site.port}`;
  stack = await startTestStack({
    realPublicUrl: true,
    env: { FETCH_ALLOW_LOOPBACK: 'true' },
    fetchOptions: { ca: cert.cert, resolver },
  });
});

afterAll(async () => {
  for (const res of held) res.destroy();
  await stack?.stop();
  await site?.close();
});

function clientDocument(path: string, extra: Record<string, unknown> = {}) {
  return {
    client_id: `${clientOrigin}${path}`,
    client_name: 'Document Assistant',
    client_uri: `${clientOrigin}/`,
    redirect_uris: [CALLBACK],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...extra,
  };
}

/** The JSON text of a document padded to exactly `bytes` bytes. */
function documentOfSize(path: string, bytes: number): string {
  const base = JSON.stringify({ ...clientDocument(path), padding: '' });
  const padded = JSON.stringify({ ...clientDocument(path), padding: 'x'.repeat(bytes - Buffer.byteLength(base)) });
  expect(Buffer.byteLength(padded)).toBe(bytes);
  return padded;
}

function authorizeUrl(clientId: string, extra: Record<string, string> = {}) {
  const url = new URL(`${stack.baseUrl}/oauth/authorize`);
  const params = {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: CALLBACK,
    scope: 'listings:read',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    state: 'st',
    ...extra,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.href;
}

/**
 * Asks the authorization endpoint about a client; the answer must be the error page, not a
 * redirect. Returns what the page says.
 */
async function expectRefusedAtAuthorization(clientId: string): Promise<string> {
  const res = await fetch(authorizeUrl(clientId), { redirect: 'manual' });
  expect(res.status).toBe(400);
  expect(res.headers.get('location')).toBeNull();
  expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  const page = parsePage(await res.text());
  expect(page.texts('h1')).toEqual(['This app cannot connect']);
  return page.texts('p').join(' ');
}

describe('the MCP SDK client registered by its metadata document', () => {
  it('goes 401 → discovery → consent naming the app as its document does → token → tool call, fetching the document once', async () => {
    documents.set('/oauth/client.json', clientDocument('/oauth/client.json'));
    const clientId = `${clientOrigin}/oauth/client.json`;
    const metadata = (await (await fetch(`${stack.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata.client_id_metadata_document_supported).toBe(true);

    const browser = await signIn(stack, 'cimd-maker@example.com');
    const provider = new MemoryOAuthClient(
      { client_name: 'Document Assistant', redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' },
      { clientMetadataUrl: clientId },
    );
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/api/mcp`), { authProvider: provider });
    const client = new Client({ name: 'cimd-test', version: '1.0.0' });
    await client.connect(transport);
    await expect(client.callTool({ name: 'my_listings', arguments: {} })).rejects.toBeInstanceOf(UnauthorizedError);
    // No registration: the SDK uses its document's URL as the client id.
    expect(provider.clientInformation()?.client_id).toBe(clientId);
    expect(provider.authorizationUrl!.searchParams.get('client_id')).toBe(clientId);

    const consent = await browser.follow(provider.authorizationUrl!.href);
    expect(new URL(consent.url).pathname).toMatch(/^\/oauth\/consent\//);
    const html = await consent.res.text();
    const page = parsePage(html);
    expect(page.texts('h1')).toEqual(['Connect Document Assistant to your account?']);
    const facts = Object.fromEntries(page.all('dt').map((dt, i) => [page.text(dt), page.text(page.all('dd')[i]!)]));
    expect(facts.App).toBe('Document Assistant');
    expect(facts['Its site']).toBe(`client.test:${site.port}`);
    expect(facts['How it identifies itself']).toBe(`By a description it publishes at ${clientId}, fetched by this directory.`);
    expect(facts['After you decide']).toBe(`You go back to ${CALLBACK}`);

    const done = await browser.follow(consent.url, { form: { _csrf: Browser.csrfOf(html), decision: 'approve' } });
    const back = new URL(done.url);
    expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
    expect(back.searchParams.get('iss')).toBe(stack.baseUrl);
    await transport.finishAuth(back.searchParams.get('code')!);
    expect(provider.tokens()?.access_token).toBeTruthy();

    const mine = await client.callTool({ name: 'my_listings', arguments: {} });
    expect(mine).toBeDefined();
    const categories = await client.callTool({ name: 'list_categories', arguments: {} });
    expect(categories.isError).toBeFalsy();
    await client.close();

    const apps = parsePage(await (await browser.request('/settings/apps')).text());
    expect(apps.texts('td').join(' ')).toContain('Document Assistant');
    // Authorization, consent page, token exchange: the document was fetched once and cached.
    expect(site.requests.filter((r) => r === '/oauth/client.json')).toEqual(['/oauth/client.json']);
  });
});

describe('documents that are refused', () => {
  let watch: SocketWatch;
  afterEach(() => {
    watch?.restore();
  });

  it.each([
    ['a name resolving to a private address', 'https://intranet.test/oauth/client.json', 'intranet.test'],
    ['a name resolving to the cloud metadata address', 'https://metadata.test/latest/client.json', 'metadata.test'],
    ['a name resolving to loopback and a private address', 'https://rebind.test/oauth/client.json', 'rebind.test'],
  ])('%s, before any connection is made', async (_what, clientId, host) => {
    watch = watchSockets();
    const callsBefore = resolver.calls.length;
    expect(await expectRefusedAtAuthorization(clientId)).toMatch(new RegExp(`Its description's address is refused: We do not connect to ${host}: its address is [^.]+, not a public website\\.`));
    // The guard looked the name up, judged the answer, and dialed nothing.
    expect(resolver.calls.slice(callsBefore)).toContain(host);
    expect(watch.violations).toEqual([]);
    expect(watch.sockets.filter((s) => s.host === host).flatMap((s) => s.dialed)).toEqual([]);
    expect(watch.dialed().filter((a) => !a.startsWith('127.'))).toEqual([]);
  });

  it.each([
    ['a private address', 'https://10.0.0.5/oauth/client.json'],
    ['the cloud metadata address', 'https://169.254.169.254/latest/client.json'],
    ['an IPv4-mapped private address', 'https://[::ffff:10.0.0.5]/oauth/client.json'],
  ])('an address literal: %s, without even opening a socket', async (_what, clientId) => {
    watch = watchSockets();
    expect(await expectRefusedAtAuthorization(clientId)).toMatch(/Its description's address is refused: We do not connect to \S+: it is [^.]+, not a public website\./);
    expect(watch.sockets).toEqual([]);
    expect(watch.violations).toEqual([]);
  });

  it('a document that redirects elsewhere (the redirect is not followed)', async () => {
    documents.set('/moved.json', (_req, res) => res.writeHead(302, { location: 'https://169.254.169.254/latest/client.json' }).end());
    watch = watchSockets();
    expect(await expectRefusedAtAuthorization(`${clientOrigin}/moved.json`)).toContain(
      "Its description's address answered with HTTP status 302 instead of the description (redirects are not followed).",
    );
    expect(watch.violations).toEqual([]);
    expect(watch.dialed().filter((a) => !a.startsWith('127.'))).toEqual([]);
  });

  it('a document whose client_id is not its own URL', async () => {
    documents.set('/impostor.json', clientDocument('/oauth/client.json', { client_name: 'Impostor' }));
    expect(await expectRefusedAtAuthorization(`${clientOrigin}/impostor.json`)).toContain('(client_id metadata document client_id does not match the expected value)');
    expect(site.requests).toContain('/impostor.json');
  });

  it(`a document of ${DOCUMENT_LIMIT} bytes is read; one byte more is refused, announced or not`, async () => {
    documents.set('/at-limit.json', documentOfSize('/at-limit.json', DOCUMENT_LIMIT));
    const atLimit = await fetch(authorizeUrl(`${clientOrigin}/at-limit.json`), { redirect: 'manual' });
    expect(atLimit.status).toBe(303);
    expect(new URL(atLimit.headers.get('location')!, stack.baseUrl).pathname).toMatch(/^\/oauth\/consent\//);

    documents.set('/too-large.json', documentOfSize('/too-large.json', DOCUMENT_LIMIT + 1));
    expect(await expectRefusedAtAuthorization(`${clientOrigin}/too-large.json`)).toContain('Its description is larger than 5 KB, the most this directory reads.');

    // Without a Content-Length, the body is counted as it arrives.
    const streamed = documentOfSize('/too-large-streamed.json', DOCUMENT_LIMIT + 1);
    documents.set('/too-large-streamed.json', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(streamed.slice(0, 4000));
      res.end(streamed.slice(4000));
    });
    expect(await expectRefusedAtAuthorization(`${clientOrigin}/too-large-streamed.json`)).toContain('Its description is larger than 5 KB');
  });

  it('a document that is not found, not JSON, or never answers, each saying why', async () => {
    expect(await expectRefusedAtAuthorization(`${clientOrigin}/missing.json`)).toContain('answered with HTTP status 404 instead of the description');
    documents.set('/not-json.json', 'this is not JSON');
    expect(await expectRefusedAtAuthorization(`${clientOrigin}/not-json.json`)).toContain('Its description is not JSON.');
    documents.set('/silent.json', (_req, res) => {
      held.push(res);
    });
    expect(await expectRefusedAtAuthorization(`${clientOrigin}/silent.json`)).toContain('Its description did not arrive in time.');
  });
});

describe('a document that changes after first use', () => {
  const NEW_CALLBACK = 'https://client.test/oauth/new-callback';

  /** Where the authorization endpoint sends a browser for this redirect: the consent step, or its error page. */
  async function outcome(clientId: string, redirectUri: string): Promise<'consent' | 'refused'> {
    const res = await fetch(authorizeUrl(clientId, { redirect_uri: redirectUri }), { redirect: 'manual' });
    await res.body?.cancel();
    if (res.status === 303 && new URL(res.headers.get('location')!, stack.baseUrl).pathname.startsWith('/oauth/consent/')) return 'consent';
    expect(res.status, redirectUri).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    return 'refused';
  }

  /** Runs `fn` with the clock of this process (the service's too) `seconds` ahead, as if that time had passed. */
  async function later<T>(seconds: number, fn: () => Promise<T>): Promise<T> {
    const now = Date.now.bind(Date);
    const spy = vi.spyOn(Date, 'now').mockImplementation(() => now() + seconds * 1000);
    try {
      return await fn();
    } finally {
      spy.mockRestore();
    }
  }

  function served(doc: Record<string, unknown>, maxAge?: number): Answer {
    return (_req, res) => {
      const body = JSON.stringify(doc);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(maxAge !== undefined && { 'cache-control': `max-age=${maxAge}` }) });
      res.end(body);
    };
  }

  it('its redirect_uris change: the first document rules for 60 s, then only the new one (the old redirect is refused)', async () => {
    const path = '/changing.json';
    const clientId = `${clientOrigin}${path}`;
    const fetches = () => site.requests.filter((r) => r === path).length;
    documents.set(path, served(clientDocument(path, { redirect_uris: [CALLBACK] })));
    expect(await outcome(clientId, CALLBACK)).toBe('consent');
    expect(fetches()).toBe(1);

    // The client (or whoever took over its site) replaces the document.
    documents.set(path, served(clientDocument(path, { redirect_uris: [NEW_CALLBACK] })));
    // Without a Cache-Control the document is kept for the least cache time, 60 s.
    expect(await outcome(clientId, NEW_CALLBACK)).toBe('refused');
    expect(await outcome(clientId, CALLBACK)).toBe('consent');
    expect(await later(59, () => outcome(clientId, CALLBACK))).toBe('consent');
    expect(fetches()).toBe(1);

    await later(61, async () => {
      expect(await outcome(clientId, CALLBACK)).toBe('refused');
      expect(await outcome(clientId, NEW_CALLBACK)).toBe('consent');
    });
    expect(fetches()).toBe(2);
  });

  it("its max-age is honoured (here 10 minutes), and a change to a refused document ends the client's use", async () => {
    const path = '/changing-max-age.json';
    const clientId = `${clientOrigin}${path}`;
    const fetches = () => site.requests.filter((r) => r === path).length;
    documents.set(path, served(clientDocument(path, { redirect_uris: [CALLBACK] }), 600));
    expect(await outcome(clientId, CALLBACK)).toBe('consent');
    // The new document names a redirect with userinfo: not a client this service will serve.
    documents.set(path, served(clientDocument(path, { redirect_uris: ['https://client.test@evil.test/callback'] }), 600));
    expect(await later(61, () => outcome(clientId, CALLBACK))).toBe('consent');
    expect(await later(599, () => outcome(clientId, CALLBACK))).toBe('consent');
    expect(fetches()).toBe(1);
    const said = await later(601, async () => {
      const res = await fetch(authorizeUrl(clientId), { redirect: 'manual' });
      expect(res.status).toBe(400);
      return parsePage(await res.text()).texts('p').join(' ');
    });
    expect(said).toContain('must not carry a user name or password');
    // Fetched again once the time ran out (a refused document is not kept: each request asks anew).
    expect(fetches()).toBeGreaterThanOrEqual(2);
  });
});
