import type http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Element } from 'domhandler';
import { afterAll, beforeAll } from 'vitest';
import { Browser, signIn } from './oauth.ts';
import { parsePage, type ParsedPage } from './html.ts';
import { startSite, tableResolver, type TestSite } from './site-network.ts';
import { startTestStack, type TestStack } from './stack.ts';

/**
 * The maker pages as a person uses them, without a browser: forms read from the served page
 * (every field with the value the page gives it, as a browser would send it), changed where the
 * test types, and posted with the page's own CSRF token through the signed-in cookie jar.
 *
 * Makers' sites are served on loopback under real-looking names (an injected resolver maps them
 * to 127.0.0.1; nothing leaves the machine). A site answers by host and path:
 * - `bare.example`: a page without any image (the automatic check holds such a listing);
 * - a path set in `site.pages`: that HTML; a path in `site.failing`: HTTP 500;
 * - anything else: a complete page with a cover image and an icon (published at once).
 */
export interface MakerSites {
  site: TestSite;
  /** host + path → the HTML to serve, e.g. 'good.example/badge-1'. */
  pages: Map<string, string>;
  /** host + path answered with HTTP 500. */
  failing: Set<string>;
  /** An address of a maker's site, e.g. http://good.example:PORT/path. */
  url(host: string, path?: string): string;
}

const SITE_HOSTS = ['good.example', 'bare.example', 'other.example', 'badge.example'];

export async function startMakerSites(): Promise<MakerSites> {
  const pages = new Map<string, string>();
  const failing = new Set<string>();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const host = (req.headers.host ?? '').split(':')[0]!;
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/favicon.ico') return res.writeHead(404).end();
    if (failing.has(host + path)) return res.writeHead(500, { 'content-type': 'text/plain' }).end('down');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    const custom = pages.get(host + path);
    if (custom !== undefined) return res.end(custom);
    if (host === 'bare.example') return res.end('<!doctype html><title>Bare</title><p>No images here.</p>');
    res.end(
      `<!doctype html><html><head><title>${host} app</title><meta name="description" content="What ${host} does">` +
        `<meta property="og:image" content="https://cdn.${host}/cover.png"><link rel="apple-touch-icon" href="/touch.png"></head><body>Hello</body></html>`,
    );
  };
  const site = await startSite(handler);
  return { site, pages, failing, url: (host, path = '/') => `http://${host}:${site.port}${path}` };
}

/** The whole service on a real port, fetching makers' sites from `startMakerSites`. */
export async function startMakerStack(env: Record<string, string> = {}): Promise<TestStack> {
  return startTestStack({
    realPublicUrl: true,
    env: {
      FETCH_ALLOW_LOOPBACK: 'true',
      TRUST_PROXY: 'true',
      DRAFT_CAP_PER_DAY: '1000',
      RATE_LIMIT_OTHER_PER_MIN: '100000',
      RATE_LIMIT_SEARCH_PER_MIN: '100000',
      ...env,
    },
    // inside.example resolves to a private address: submissions naming it are refused unfetched.
    fetchOptions: { resolver: tableResolver({ ...Object.fromEntries(SITE_HOSTS.map((h) => [h, ['127.0.0.1']])), 'inside.example': ['10.0.0.5'] }) },
  });
}

let ipCounter = 0;
let browserCounter = 0;

/**
 * A browser on an address of its own (X-Forwarded-For; the stack trusts the proxy), as makers
 * come from different networks: the per-address sign-in limit then never interferes.
 */
/**
 * A test file's makers' sites and service, started before its tests and stopped after, with a
 * new signed-in maker and a website of its own per use (so duplicates never get in the way).
 */
export function useMakerPages(opts: { makerPrefix: string; sitePrefix: string }) {
  let stack: TestStack | undefined;
  let sites: MakerSites | undefined;
  beforeAll(async () => {
    sites = await startMakerSites();
    stack = await startMakerStack();
  });
  afterAll(async () => {
    await stack?.stop();
    await sites?.site.close();
  });
  let mailbox = 0;
  let pathCounter = 0;
  const pages = {
    get stack(): TestStack {
      if (!stack) throw new Error('the maker pages are not started');
      return stack;
    },
    get sites(): MakerSites {
      if (!sites) throw new Error('the makers\' sites are not started');
      return sites;
    },
    newMaker: () => signInMaker(pages.stack, `${opts.makerPrefix}${++mailbox}-${Date.now()}@example.com`),
    freshSite: (host = 'good.example', prefix = opts.sitePrefix) => pages.sites.url(host, `/${prefix}-${++pathCounter}`),
  };
  return pages;
}

export class MakerBrowser extends Browser {
  readonly address: string;

  constructor(origin: string) {
    super(origin);
    browserCounter++;
    this.address = `198.18.${Math.floor(browserCounter / 250)}.${(browserCounter % 250) + 1}`;
  }

  override request(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Response> {
    return super.request(url, { ...init, headers: { 'x-forwarded-for': this.address, ...init.headers } });
  }
}

/** A maker signed in by e-mailed link, in a browser of their own. */
export async function signInMaker(stack: TestStack, email: string): Promise<MakerBrowser> {
  const browser = new MakerBrowser(stack.baseUrl);
  await signIn(stack, email, browser);
  return browser;
}

/**
 * Saves a private draft the way an assistant does: submit_product over MCP without sign-in,
 * from an address of its own (so the per-address draft limit never interferes). Returns the
 * claim link's path.
 */
export async function draftClaimPath(stack: TestStack, args: Record<string, unknown>): Promise<string> {
  ipCounter++;
  const client = new Client({ name: 'maker-pages-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/api/mcp`), { requestInit: { headers: { 'x-forwarded-for': `198.51.100.${ipCounter}` } } }));
  try {
    const result = await client.callTool({ name: 'submit_product', arguments: args });
    const body = result.structuredContent as { outcome: string; claim_link: { url: string } | null };
    if (body.outcome !== 'draft_saved' || !body.claim_link) throw new Error(`expected a draft, got ${JSON.stringify(result)}`);
    return new URL(body.claim_link.url).pathname;
  } finally {
    await client.close();
  }
}

export type Entries = [string, string][];

/** The form posting to `action`: every field a browser would send, with the page's values. */
export function formEntries(html: string, action: string): Entries {
  const page = parsePage(html);
  const form = page.all('form').find((f) => page.attr(f, 'action') === action);
  if (!form) throw new Error(`no form posting to ${action} on the page: ${page.all('form').map((f) => page.attr(f, 'action')).join(', ')}`);
  const entries: Entries = [];
  for (const el of collect(form)) {
    const name = page.attr(el, 'name');
    if (!name) continue;
    if (el.name === 'input') {
      const type = page.attr(el, 'type') ?? 'text';
      if (type === 'submit' || type === 'button' || type === 'reset') continue;
      if ((type === 'checkbox' || type === 'radio') && page.attr(el, 'checked') === undefined) continue;
      entries.push([name, page.attr(el, 'value') ?? '']);
    } else if (el.name === 'textarea') {
      entries.push([name, page.text(el).replace(/^\n/, '')]);
    } else if (el.name === 'select') {
      const options = page.all('option', el);
      const chosen = options.find((o) => page.attr(o, 'selected') !== undefined) ?? options[0];
      entries.push([name, chosen ? (page.attr(chosen, 'value') ?? page.text(chosen)) : '']);
    }
  }
  return entries;
}

/** The form's controls in document order. */
function collect(root: Element): Element[] {
  const out: Element[] = [];
  const walk = (node: Element) => {
    for (const child of node.children) {
      if (child.type !== 'tag') continue;
      const el = child as Element;
      if (el.name === 'input' || el.name === 'textarea' || el.name === 'select') out.push(el);
      else walk(el);
    }
  };
  walk(root);
  return out;
}

/** Entries with some fields typed over: a list replaces every value of a field sent several times. */
export function typed(entries: Entries, changes: Record<string, string | string[]>): Entries {
  const out: Entries = [];
  const done = new Set<string>();
  for (const [name, value] of entries) {
    const change = changes[name];
    if (change === undefined) {
      out.push([name, value]);
      continue;
    }
    if (done.has(name)) continue;
    done.add(name);
    for (const v of Array.isArray(change) ? change : [change]) out.push([name, v]);
  }
  for (const [name, change] of Object.entries(changes)) {
    if (!done.has(name)) for (const v of Array.isArray(change) ? change : [change]) out.push([name, v]);
  }
  return out;
}

/** Posts url-encoded entries (repeated names kept) through the browser's cookie jar. */
export async function post(browser: Browser, path: string, entries: Entries): Promise<Response> {
  const target = new URL(path, browser.origin);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (browser instanceof MakerBrowser) headers['x-forwarded-for'] = browser.address;
  if (browser.jar.header()) headers.cookie = browser.jar.header();
  const res = await fetch(target, { method: 'POST', headers, body: new URLSearchParams(entries).toString(), redirect: 'manual' });
  browser.jar.take(res);
  return res;
}

/** Opens `pagePath`, fills the form posting to `action` with `changes`, and posts it. */
export async function fillAndPost(browser: Browser, pagePath: string, action: string, changes: Record<string, string | string[]> = {}): Promise<Response> {
  const res = await browser.request(pagePath);
  if (res.status !== 200) throw new Error(`${pagePath} answered ${res.status}`);
  return post(browser, action, typed(formEntries(await res.text(), action), changes));
}

export interface ShownErrors {
  /** The error summary's entries, in order; each links to its field. */
  summary: { text: string; href: string | undefined }[];
  /** Field id (without "field-") → the message shown next to it. */
  fields: Record<string, string>;
}

/** What a page shows of a refused form. */
export function shownErrors(html: string): ShownErrors {
  const page = parsePage(html);
  const box = page.all('div').find((d) => (page.attr(d, 'class') ?? '').split(' ').includes('error-summary'));
  const summary = box ? page.all('li', box).map((li) => ({ text: page.text(li).trim(), href: page.all('a', li)[0] ? page.attr(page.all('a', li)[0]!, 'href') : undefined })) : [];
  const fields: Record<string, string> = {};
  for (const p of page.all('p')) {
    const id = page.attr(p, 'id');
    if (id?.startsWith('field-') && id.endsWith('-error')) fields[id.slice('field-'.length, -'-error'.length)] = page.text(p).replace(/^Error: /, '').trim();
  }
  return { summary, fields };
}

/** The value a field shows (input value, textarea text or selected option). */
export function shownValue(html: string, id: string): string | undefined {
  const page = parsePage(html);
  const el = page.byId(id);
  if (!el) return undefined;
  if (el.name === 'textarea') return page.text(el).replace(/^\n/, '');
  if (el.name === 'select') {
    const chosen = page.all('option', el).find((o) => page.attr(o, 'selected') !== undefined);
    return chosen ? page.attr(chosen, 'value') : '';
  }
  return page.attr(el, 'value') ?? '';
}

export function notices(page: ParsedPage): string[] {
  return page.all('div').filter((d) => (page.attr(d, 'class') ?? '').split(' ').includes('notice')).map((d) => page.text(d).trim());
}

export { Browser, parsePage };
