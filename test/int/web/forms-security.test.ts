import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOrCreateMaker } from '../../../src/auth/makers.ts';
import { SESSION_COOKIE } from '../../../src/auth/sessions.ts';
import { FLASH_COOKIE } from '../../../src/web/flash.ts';
import { CSRF_COOKIE } from '../../../src/web/maker-session.ts';
import { parsePage } from '../../helpers/html.ts';
import { MakerBrowser, draftClaimPath, formEntries, startMakerSites, type Entries, type MakerSites } from '../../helpers/maker-pages.ts';
import { Browser, authorizationRequest, pkcePair, registerPublicClient } from '../../helpers/oauth.ts';
import { tableResolver } from '../../helpers/site-network.ts';
import { makerListing } from '../../helpers/payments.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * Forms and sessions, from the service's own route table: every route that takes a POST, PUT,
 * PATCH or DELETE is found in it (so a form added later cannot be forgotten) and is either
 *
 * - a form of the cookie-session pages (FORMS below): it refuses a post whose browser names
 *   another origin (Origin, or Sec-Fetch-Site without one), a post without its CSRF token, with a
 *   token of another browser or a made-up one, and, unless it is a signed-out form for a stated
 *   reason, a post without a session; the same post with all of them right goes through;
 * - a route that refuses the method outright (405), cookies or not;
 * - or exempt for a stated reason (EXEMPT below): endpoints that never read a cookie.
 *
 * What the service requires of Origin (src/web/maker-session.ts, crossSiteForm): when a browser
 * sends one it must be this service's origin; a post with no Origin and no Sec-Fetch-Site (no
 * browser, or a very old one) is let through to the CSRF token, which a page of another site
 * cannot read.
 *
 * Then the cookies every flow sets (the pages', and the authorization server's), on an http and
 * an https PUBLIC_URL; and a CSRF cookie and token planted before sign-in.
 */

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface Route {
  method: string;
  path: string;
}

/**
 * Every route of the app and its methods, read from Fastify's own route tree (printRoutes: one
 * node a line, four characters of indentation a level, each node the continuation of its parent).
 */
function routeTable(app: FastifyInstance): Route[] {
  const routes: Route[] = [];
  const prefixes: string[] = [];
  for (const line of app.printRoutes().split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.*)$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    const node = /^(.*?)(?: \(([A-Z, ]+)\))?$/.exec(m[2]!)!;
    const path = (depth > 0 ? prefixes[depth - 1]! : '') + node[1]!;
    prefixes.length = depth;
    prefixes[depth] = path;
    if (node[2]) for (const method of node[2].split(', ')) routes.push({ method, path });
  }
  return routes;
}

/** A browser on an address of its own that keeps every Set-Cookie line it was sent. */
class RecordingBrowser extends MakerBrowser {
  readonly setCookies: string[] = [];

  constructor(
    origin: string,
    private readonly extraHeaders: Record<string, string> = {},
  ) {
    super(origin);
  }

  override async request(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Response> {
    const res = await super.request(url, { ...init, headers: { ...this.extraHeaders, ...init.headers } });
    this.setCookies.push(...res.headers.getSetCookie());
    return res;
  }

  /** Posts url-encoded entries (a field may repeat) with this browser's cookies. */
  async postEntries(path: string, entries: Entries, headers: Record<string, string> = {}): Promise<Response> {
    const res = await fetch(new URL(path, this.origin), {
      method: 'POST',
      headers: { ...this.extraHeaders, 'x-forwarded-for': this.address, 'content-type': 'application/x-www-form-urlencoded', cookie: this.jar.header(), ...headers },
      body: new URLSearchParams(entries).toString(),
      redirect: 'manual',
    });
    this.jar.take(res);
    this.setCookies.push(...res.headers.getSetCookie());
    return res;
  }
}

let counter = 0;
const newEmail = (what: string) => `forms-${what}-${++counter}-${Date.now()}@example.com`;

/** Signs a browser in through the e-mailed link (its path, whatever PUBLIC_URL's host is). */
async function signInAt(stack: TestStack, browser: Browser, email: string): Promise<void> {
  const form = await browser.request('/signin');
  const before = stack.mails.length;
  const asked = await browser.request('/signin', { form: { email, _csrf: Browser.csrfOf(await form.text()) } });
  expect(asked.status).toBe(200);
  const mail = stack.mails.slice(before).find((m) => m.to === email);
  const link = new URL(/https?:\/\/\S+\/signin\/link\/\S+/.exec(mail!.text)![0]).pathname;
  const confirm = await browser.request(link);
  const done = await browser.request(link, { form: { _csrf: Browser.csrfOf(await confirm.text()) } });
  expect(done.status).toBe(303);
}

/** A CSRF token for the browser's next form: from a signed-in page, or the sign-in page. */
async function tokenOf(browser: Browser): Promise<string> {
  const apps = await browser.request('/settings/apps');
  if (apps.status === 200) return Browser.csrfOf(await apps.text());
  await apps.body?.cancel();
  return Browser.csrfOf(await (await browser.request('/signin')).text());
}

let stack: TestStack;
let sites: MakerSites;
let routes: Route[];
/** A real claim link's path (a draft's): a made-up one is refused before the session is looked at. */
let claimPath: string;
/** A signed-in maker whose form tokens stand for "a token of another browser". */
let other: RecordingBrowser;

beforeAll(async () => {
  sites = await startMakerSites();
  stack = await startTestStack({
    realPublicUrl: true,
    // A maker's site without images, on loopback: a submission of it waits as a draft.
    fetchOptions: { resolver: tableResolver({ 'bare.example': ['127.0.0.1'] }) },
    env: {
      FETCH_ALLOW_LOOPBACK: 'true',
      TRUST_PROXY: 'true',
      RATE_LIMIT_OTHER_PER_MIN: '100000',
      // Stripe configured, so its webhook route is in the table too (nothing here calls Stripe).
      STRIPE_SECRET_KEY: 'sk_test_formssecurity',
      STRIPE_WEBHOOK_SECRET: 'whsec_formssecurity',
      STRIPE_API_BASE: 'http://127.0.0.1:9',
    },
  });
  routes = routeTable(stack.service.app);
  claimPath = await draftClaimPath(stack, {
    website: sites.url('bare.example', '/forms-security'),
    name: 'Drafted App',
    punchline: 'Drafted by an assistant',
    description: 'It works.',
    category: 'design',
    pricing_model: 'paid',
    product_type: 'digital_product',
  });
  other = new RecordingBrowser(stack.baseUrl);
  await signInAt(stack, other, newEmail('other'));
});

afterAll(async () => {
  await stack?.stop();
  await sites?.site.close();
});

type Who = 'maker' | 'admin' | 'anyone';

interface FormRoute {
  /** Who posts it: a signed-in maker, an admin, or anyone (a signed-out form). */
  who: Who;
  /** A concrete address of the route (a function when it exists only once the service runs). */
  path: string | (() => string);
  /** The form's fields besides the token. */
  fields?: Record<string, string>;
  /** For a form anyone may post: why it needs no session. */
  withoutSession?: string;
}

/** Every form of the cookie-session pages (src/web/makers, src/web/admin). */
const FORMS: Record<string, FormRoute> = {
  'POST /signin': { who: 'anyone', path: '/signin', fields: { email: 'asked-for-a-link@example.com' }, withoutSession: 'asks for a sign-in link: the form of someone not signed in' },
  'POST /signin/link/:token': { who: 'anyone', path: '/signin/link/not-a-real-link-token', withoutSession: 'signs in: the e-mailed link in the address is the credential' },
  'POST /signout': { who: 'anyone', path: '/signout', withoutSession: 'ends the session the browser has; without one there is nothing to end' },
  'POST /pay/:paymentId': {
    who: 'anyone',
    path: '/pay/00000000-0000-4000-8000-000000000000',
    withoutSession: "the payment link is the capability: an unguessable id sent to the maker, who may pay from any browser; it pays that listing's plan and nothing else",
  },
  'POST /oauth/consent/:uid': { who: 'maker', path: '/oauth/consent/no-such-interaction', fields: { decision: 'approve' } },
  'POST /settings/apps/:grantId/disconnect': { who: 'maker', path: '/settings/apps/no-such-grant/disconnect' },
  'POST /dashboard/new': { who: 'maker', path: '/dashboard/new', fields: { name: 'Forged' } },
  'POST /claim/:token': { who: 'maker', path: () => claimPath, fields: { name: 'Forged' } },
  'POST /dashboard/listings/:slug': { who: 'maker', path: '/dashboard/listings/no-such-listing', fields: { name: 'Forged' } },
  'POST /dashboard/listings/:slug/profile': { who: 'maker', path: '/dashboard/listings/no-such-listing/profile' },
  'POST /dashboard/listings/:slug/verify': { who: 'maker', path: '/dashboard/listings/no-such-listing/verify' },
  'POST /dashboard/listings/:slug/upgrade': { who: 'maker', path: '/dashboard/listings/no-such-listing/upgrade' },
  'POST /admin/listings/:slug/decisions': { who: 'admin', path: '/admin/listings/no-such-listing/decisions', fields: { action: 'approve' } },
  'POST /admin/keys': { who: 'admin', path: '/admin/keys', fields: { name: '' } },
  'POST /admin/keys/:name/rotate': { who: 'admin', path: '/admin/keys/no-such-key/rotate' },
  'POST /admin/keys/:name/revoke': { who: 'admin', path: '/admin/keys/no-such-key/revoke' },
};

/** State-changing routes that never read a cookie, and why each needs no form token. */
const EXEMPT: Record<string, string> = {
  'POST /api/mcp':
    'MCP: authenticated by the Authorization header only (an OAuth access token or a consumer key); a cookie is never a credential there, and a foreign browser Origin is refused (src/mcp/origin.ts)',
  'POST /oauth/token': 'OAuth token endpoint: no cookie is read; a code is redeemed only with its PKCE verifier, a refresh token is its own credential (test/int/auth/oauth-attacks.test.ts)',
  'POST /oauth/revoke': 'OAuth revocation (RFC 7009): no cookie is read; a client revokes only its own tokens',
  'POST /oauth/register': 'dynamic client registration (RFC 7591): no cookie is read; open to anyone by design, limited per address',
  'POST /payments/stripe/webhook': "Stripe's webhook: no cookie is read; the Stripe-Signature header over the raw body is the credential",
};

/** The page a refused form answers with (src/web/page-errors.tsx). */
async function expectFormRefused(res: Response, what: string): Promise<void> {
  expect(res.status, what).toBe(403);
  expect(res.headers.get('location'), what).toBeNull();
  expect(parsePage(await res.text()).texts('h1'), what).toEqual(['This form has expired']);
}

describe('the route table', () => {
  it('is read whole: known routes of every part of the app are in it', () => {
    const names = routes.map((r) => `${r.method} ${r.path}`);
    for (const known of ['GET /healthz', 'GET /api/v1/products/:slug', 'POST /api/mcp', 'POST /oauth/token', 'POST /signin', 'POST /dashboard/listings/:slug/verify', 'POST /admin/keys/:name/rotate']) {
      expect(names).toContain(known);
    }
  });

  it('every state-changing route is a form tested below, refuses the method (405), or is exempt for a stated reason', async () => {
    const changing = routes.filter((r) => STATE_CHANGING.has(r.method));
    const names = changing.map((r) => `${r.method} ${r.path}`);
    // No entry outlives its route.
    for (const listed of [...Object.keys(FORMS), ...Object.keys(EXEMPT)]) expect(names, `${listed} is listed but not a route`).toContain(listed);

    const maker = new RecordingBrowser(stack.baseUrl);
    await signInAt(stack, maker, newEmail('table'));
    const unaccounted: string[] = [];
    let refusing = 0;
    for (const route of changing) {
      const name = `${route.method} ${route.path}`;
      if (name in FORMS || name in EXEMPT) continue;
      // Anything else must refuse the method itself, even to a signed-in browser on this site.
      const res = await fetch(`${stack.baseUrl}${route.path.replace(/:[A-Za-z]+/g, 'x').replace(/\*$/, 'x')}`, {
        method: route.method,
        headers: { cookie: maker.jar.header(), origin: stack.baseUrl },
        redirect: 'manual',
      });
      await res.body?.cancel();
      if (res.status === 405) refusing++;
      else unaccounted.push(`${name} answered ${res.status}: add it to FORMS (a cookie-session form) or EXEMPT (with the reason it needs no CSRF token)`);
    }
    expect(unaccounted).toEqual([]);
    // The read-only API, the MCP endpoint's other methods, the OAuth endpoints' other methods.
    expect(refusing).toBeGreaterThan(30);
  });
});

describe('each cookie-session form', () => {
  /** A browser as `who` needs it: signed in (an admin made so), or not signed in at all. */
  async function browserFor(who: Who): Promise<RecordingBrowser> {
    const browser = new RecordingBrowser(stack.baseUrl);
    if (who === 'anyone') return browser;
    const email = newEmail(who);
    await signInAt(stack, browser, email);
    if (who === 'admin') await stack.db.pool.query('UPDATE catalog.makers SET is_admin = true WHERE email = $1', [email]);
    return browser;
  }

  function post(browser: RecordingBrowser, form: FormRoute, token: string | undefined, headers: Record<string, string> = {}): Promise<Response> {
    const entries: Entries = Object.entries(form.fields ?? {});
    if (token !== undefined) entries.push(['_csrf', token]);
    return browser.postEntries(typeof form.path === 'string' ? form.path : form.path(), entries, headers);
  }

  it.each(Object.keys(FORMS))('%s refuses another origin, a missing or wrong token, and no session; with all of them right it goes through', async (name) => {
    const form = FORMS[name]!;
    const browser = await browserFor(form.who);
    const token = await tokenOf(browser);

    // Another site's page posting it, the token somehow known.
    await expectFormRefused(await post(browser, form, token, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }), 'a foreign Origin');
    await expectFormRefused(await post(browser, form, token, { origin: 'null' }), 'Origin: null');
    await expectFormRefused(await post(browser, form, token, { origin: stack.baseUrl.replace('http:', 'https:') }), 'the same host on another scheme');
    await expectFormRefused(await post(browser, form, token, { 'sec-fetch-site': 'cross-site' }), 'Sec-Fetch-Site: cross-site without Origin');
    await expectFormRefused(await post(browser, form, token, { 'sec-fetch-site': 'same-site' }), 'Sec-Fetch-Site: same-site without Origin');

    // This site, without the right token.
    await expectFormRefused(await post(browser, form, undefined, { origin: stack.baseUrl }), 'no token');
    await expectFormRefused(await post(browser, form, '', { origin: stack.baseUrl }), 'an empty token');
    await expectFormRefused(await post(browser, form, 'made-up-token', { origin: stack.baseUrl }), 'a made-up token');
    await expectFormRefused(await post(browser, form, await tokenOf(other), { origin: stack.baseUrl }), "another browser's token");

    // Without a session: a browser that never signed in, with a valid token of its own.
    if (form.who !== 'anyone') {
      const stranger = new RecordingBrowser(stack.baseUrl);
      const res = await post(stranger, form, await tokenOf(stranger), { origin: stack.baseUrl });
      if (form.who === 'admin') {
        expect(res.status).toBe(403);
        expect(parsePage(await res.text()).texts('h1')).toEqual(['For admins only']);
      } else {
        expect(res.status).toBe(303);
        expect(res.headers.get('location')).toMatch(/^\/signin\?return_to=/);
      }
      // A maker who is not an admin is no admin.
      if (form.who === 'admin') {
        const maker = await browserFor('maker');
        const refused = await post(maker, form, await tokenOf(maker), { origin: stack.baseUrl });
        expect(refused.status).toBe(403);
        expect(parsePage(await refused.text()).texts('h1')).toEqual(['For admins only']);
      }
    } else {
      expect(form.withoutSession).toBeTruthy();
    }

    // The same post from this site with its token goes through to the page's own answer: a
    // browser's Origin, and (decided above) none at all.
    const sameSite: Record<string, string>[] = [{ origin: stack.baseUrl, 'sec-fetch-site': 'same-origin' }, {}];
    for (const headers of sameSite) {
      const res = await post(browser, form, await tokenOf(browser), headers);
      expect(res.status, JSON.stringify(headers)).not.toBe(403);
      expect(res.status, JSON.stringify(headers)).toBeLessThan(500);
      if (form.who !== 'anyone') expect(res.headers.get('location') ?? '', JSON.stringify(headers)).not.toMatch(/^\/signin/);
      await res.body?.cancel();
    }
  });
});

describe('exempt routes read no cookie', () => {
  it('a session cookie calls no maker tool on /api/mcp, and a foreign Origin is refused there', async () => {
    const maker = new RecordingBrowser(stack.baseUrl);
    await signInAt(stack, maker, newEmail('mcp'));
    const call = await fetch(`${stack.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { cookie: maker.jar.header(), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'my_listings', arguments: {} } }),
    });
    expect(call.status).toBe(401);
    expect(call.headers.get('www-authenticate')).toMatch(/^Bearer /);
    await call.body?.cancel();
    // From a browser page of another site, the endpoint refuses the Origin itself.
    const foreign = await fetch(`${stack.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { cookie: maker.jar.header(), origin: 'https://evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_categories', arguments: {} } }),
    });
    expect(foreign.status).toBe(403);
    await foreign.body?.cancel();
  });

  it("Stripe's webhook changes nothing without its signature", async () => {
    const res = await fetch(`${stack.baseUrl}/payments/stripe/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'checkout.session.completed', data: { object: {} } }),
    });
    expect(res.status).toBe(400);
    await res.body?.cancel();
  });
});

/**
 * Every cookie a maker meets: the CSRF cookie (a form page), the session (sign-in), the flash
 * (a saved edit), and the authorization server's interaction, resume and session cookies (an
 * OAuth approval). Returns the Set-Cookie lines by cookie name.
 */
async function cookiesOfEveryFlow(target: TestStack, browser: RecordingBrowser): Promise<Map<string, string[][]>> {
  const email = newEmail('cookies');
  await signInAt(target, browser, email);
  const maker = await findOrCreateMaker(target.db.pool, email);
  const listing = await makerListing(target, email);
  expect(listing.makerId).toBe(maker.id);
  const edit = `/dashboard/listings/${listing.slug}`;
  const page = await browser.request(edit);
  expect(page.status).toBe(200);
  const saved = await browser.postEntries(edit, formEntries(await page.text(), edit));
  expect(saved.status, await saved.clone().text()).toBe(303);

  const callback = 'http://127.0.0.1:45682/callback';
  const clientId = await registerPublicClient(target.baseUrl, { client_name: 'Cookie check', redirect_uris: [callback] });
  const { challenge } = pkcePair();
  const asked = await browser.request(
    authorizationRequest(target.baseUrl, { client_id: clientId, response_type: 'code', redirect_uri: callback, scope: 'listings:read', state: 's', code_challenge: challenge, code_challenge_method: 'S256' }),
  );
  expect(asked.status).toBe(303);
  const consentPath = new URL(asked.headers.get('location')!, target.baseUrl).pathname;
  const consent = await browser.request(consentPath);
  expect(consent.status).toBe(200);
  const decided = await browser.request(consentPath, { form: { _csrf: Browser.csrfOf(await consent.text()), decision: 'approve' } });
  expect(decided.status).toBe(303);
  // The library sends the browser on to its resume step, on PUBLIC_URL's origin.
  const resumed = await browser.request(new URL(decided.headers.get('location')!, target.baseUrl).pathname);
  expect(resumed.status).toBe(303);
  expect(new URL(resumed.headers.get('location')!).searchParams.get('code')).toBeTruthy();

  const byName = new Map<string, string[][]>();
  for (const line of browser.setCookies) {
    const [pair, ...attributes] = line.split(';');
    const name = pair!.slice(0, pair!.indexOf('=')).trim();
    byName.set(name, [...(byName.get(name) ?? []), attributes.map((a) => a.trim().toLowerCase())]);
  }
  return byName;
}

const EVERY_COOKIE = [CSRF_COOKIE, SESSION_COOKIE, FLASH_COOKIE, 'oauth_interaction', 'oauth_resume', 'oauth_session'];

describe('cookies', () => {
  it('every cookie is HttpOnly and SameSite=Lax, with a path and no domain; not Secure on an http PUBLIC_URL', async () => {
    const cookies = await cookiesOfEveryFlow(stack, new RecordingBrowser(stack.baseUrl));
    expect([...cookies.keys()]).toEqual(expect.arrayContaining(EVERY_COOKIE));
    for (const [name, lines] of cookies) {
      for (const attributes of lines) {
        expect(attributes, name).toEqual(expect.arrayContaining(['httponly', 'samesite=lax']));
        expect(attributes.some((a) => a.startsWith('path=/')), name).toBe(true);
        expect(attributes.some((a) => a.startsWith('domain=')), name).toBe(false);
        expect(attributes, name).not.toContain('secure');
      }
    }
  });

  describe('behind an https proxy (PUBLIC_URL https, TRUST_PROXY, X-Forwarded-Proto: https)', () => {
    let https: TestStack;
    beforeAll(async () => {
      https = await startTestStack({ env: { PUBLIC_URL: 'https://catalog.test', TRUST_PROXY: 'true', RATE_LIMIT_OTHER_PER_MIN: '100000' } });
    });
    afterAll(async () => {
      await https?.stop();
    });

    it('every cookie is Secure as well as HttpOnly and SameSite=Lax', async () => {
      const cookies = await cookiesOfEveryFlow(https, new RecordingBrowser(https.baseUrl, { 'x-forwarded-proto': 'https' }));
      expect([...cookies.keys()]).toEqual(expect.arrayContaining(EVERY_COOKIE));
      for (const [name, lines] of cookies) {
        for (const attributes of lines) expect(attributes, name).toEqual(expect.arrayContaining(['secure', 'httponly', 'samesite=lax']));
      }
    });
  });
});

describe('session fixation', () => {
  it("a CSRF cookie and token planted before sign-in (by a sibling site, say) are refused once the victim signs in", async () => {
    // The attacker's own signed-out cookie and token, set in the victim's browser.
    const attacker = new RecordingBrowser(stack.baseUrl);
    const plantedToken = await tokenOf(attacker);
    const plantedCookie = attacker.jar.get(CSRF_COOKIE)!;
    expect(plantedCookie).toBeTruthy();
    const victim = new RecordingBrowser(stack.baseUrl);
    victim.jar.set(CSRF_COOKIE, plantedCookie);
    // Signed out, the planted pair is a valid pair (that is what a signed-out form checks).
    const before = await victim.postEntries('/signin', [['email', newEmail('planted')], ['_csrf', plantedToken]]);
    expect(before.status).toBe(200);

    await signInAt(stack, victim, newEmail('victim'));
    expect(victim.jar.get(SESSION_COOKIE)).toBeTruthy();
    await expectFormRefused(await victim.postEntries('/dashboard/new', [['name', 'Forged'], ['_csrf', plantedToken]]), 'a token from before sign-in');
    // The victim's own forms work.
    const own = await victim.postEntries('/settings/apps/no-such-grant/disconnect', [['_csrf', await tokenOf(victim)]]);
    expect(own.status).toBe(303);
  });
});
