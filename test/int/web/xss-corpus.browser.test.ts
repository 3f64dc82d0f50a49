import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Element } from 'domhandler';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DESCRIPTION_ALLOWED_TAGS, DESCRIPTION_LINK_REL, DESCRIPTION_LINK_TARGET } from '../../../src/catalog/listings/sanitize-description.ts';
import { LISTING_LIMITS } from '../../../src/contract/listing-limits.ts';
import { hasControlCharacters } from '../../../src/catalog/listings/maker-input.ts';
import { describeInBrowser, screenshot } from '../../helpers/browser.ts';
import { parsePage } from '../../helpers/html.ts';
import { fillAndPost, startMakerSites, startMakerStack, type MakerSites } from '../../helpers/maker-pages.ts';
import { authorizationRequest, Browser as CookieBrowserClass, decideConsent, makerToken, pkcePair, type Browser as CookieBrowser } from '../../helpers/oauth.ts';
import { makerClient, runCatalog, tool, type Json } from '../../helpers/review.ts';
import type { TestStack } from '../../helpers/stack.ts';
import { projectPath } from '../../../src/util/project-file.ts';

/**
 * Script injection, end to end: the attack strings of test/fixtures/xss-vectors.json (OWASP's
 * XSS filter evasion cheat sheet and html5sec.org's vectors, each with its source) written into
 * every field a maker or an import can write, by the three ways in: `catalog import` (NDJSON:
 * categories' names and nouns; listings' name, punchline, description, website, highlights,
 * ideal-for lines, FAQ, promo), the MCP maker tools (a maker's OAuth token, the MCP SDK client:
 * name, punchline, description, social, category, website) and the maker pages (the submission,
 * edit and premium-profile forms, posted with the page's own fields and CSRF token).
 * (It runs the service in this process: what it shows does not depend on the Node.js version,
 * so CI runs it once, not again with the end-to-end tests on Node.js 24 and 26.)
 *
 * Then every page that shows them: home, listing, category, a missing listing's page, the
 * maker's dashboard, submission form and edit pages, the admin's review queue and listing pages,
 * the refused forms shown again, and the e-mails; and, as an app's name comes from whoever
 * registers it, the OAuth consent page and the connected apps page. Each is read twice:
 * - served over HTTP and parsed by Chromium's own HTML parser (DOMParser, where nothing runs):
 *   no element or attribute may exist beyond those the same pages show for harmless listings
 *   and the description's allow-list, no handler attribute, no script-scheme URL, no script
 *   element; and each field shows as the very text sent. That proves the escaping without the
 *   Content-Security-Policy's help, on every page (about 1,100 documents);
 * - opened in Chromium with scripts on and the real headers and CSP, a sample of each kind:
 *   a dialog (the vectors call alert, confirm or prompt), a request to /xss-beacon/ or anywhere
 *   the pages' own markup does not name, a popup, a page error or a CSP violation fails the test.
 * The e-mails are plain text (no HTML part); they are opened as a mail client shows them, under
 * no CSP of ours.
 *
 * Where a field validates (a handle, a category slug, an http(s) address, plain text for
 * makers), a vector it refuses must be refused with a message naming the field; what it accepts
 * comes back from REST and MCP as the very text sent, and the description with nothing outside
 * its allow-list. The last test but one shows the checks fail on a page whose escaping was left
 * out.
 */

interface Vector {
  id: string;
  source: 'owasp' | 'h5sc';
  ref: string;
  vector: string;
}

const CORPUS = JSON.parse(readFileSync(path.join(path.dirname(projectPath('package.json')), 'test/fixtures/xss-vectors.json'), 'utf8')) as { about: string[]; vectors: Vector[] };
const VECTORS = CORPUS.vectors;
const N = VECTORS.length;
const MAKER = 'xss-maker@example.com';
/** Where the e-mails are shown: a loopback address nothing listens on, answered by the test itself. */
const MAIL_ORIGIN = 'http://127.0.0.2:9';
/** The edit, admin listing and missing pages are read for every SAMPLE-th vector (every listing and category page is read). */
const SAMPLE = 4;

/** The vector at position i (wrapping), as a field stores it: surrounding whitespace trimmed. */
const vec = (i: number): string => VECTORS[((i % N) + N) % N]!.vector.trim();
/**
 * The vector at i when a text field of this many characters can hold it. Text with control
 * characters (other than tab and line breaks) is refused by every path; the import's refusal of
 * it is shown by refusedLines.
 */
const fit = (i: number, max: number): string | undefined => (vec(i).length <= max && !hasControlCharacters(vec(i)) ? vec(i) : undefined);
/** A product's website holding the vector in its query, as a site's address may. */
const siteWithVector = (host: string, i: number) => `https://${host}/p?v=${vec(i)}`;

/** Text as an HTML parser reads it back: line breaks normalised, NUL replaced. */
const asParsed = (s: string) => s.replace(/\r\n?/g, '\n').replace(/\0/g, '\uFFFD');

type Line = Record<string, unknown>;

/** The import: a category per vector, a live premium listing per vector, a pending listing per vector. */
function importLines(): Line[] {
  const lines: Line[] = [];
  for (let i = 0; i < N; i++) {
    lines.push({ kind: 'category', slug: `xss-c${i}`, name: fit(i, LISTING_LIMITS.categoryNameMax) ?? `Category ${i}`, noun: fit(i, LISTING_LIMITS.categoryNounMax) ?? 'tools' });
  }
  lines.push({ kind: 'category', slug: 'xss-plain', name: 'Plain tools', noun: 'tools' });
  for (let i = 0; i < N; i++) {
    lines.push({
      kind: 'listing',
      slug: `xss-l${i}`,
      name: fit(i, LISTING_LIMITS.nameMax) ?? `Listing ${i}`,
      punchline: fit(i + 1, LISTING_LIMITS.punchlineMax) ?? `Punchline ${i}`,
      description: VECTORS[i]!.vector,
      website: siteWithVector(`w${i}.example`, i),
      logo: siteWithVector(`logo${i}.example`, i + 8),
      category: `xss-c${i}`,
      highlights: [fit(i + 2, LISTING_LIMITS.profileItemMax) ?? `Highlight ${i}`],
      ideal_for: [fit(i + 3, LISTING_LIMITS.profileItemMax) ?? `Ideal for ${i}`],
      faq: [
        { question: fit(i + 4, LISTING_LIMITS.faqQuestionMax) ?? `Question ${i}?`, answer: fit(i + 5, LISTING_LIMITS.faqAnswerMax) ?? `Answer ${i}.` },
        { question: fit(i, LISTING_LIMITS.faqQuestionMax) ?? `Another question ${i}?`, answer: fit(i, LISTING_LIMITS.faqAnswerMax) ?? `Another answer ${i}.` },
      ],
      promo: { code: fit(i, LISTING_LIMITS.promoCodeMax) ?? `CODE${i}`, discount: fit(i + 6, LISTING_LIMITS.promoDiscountMax) ?? '10 % off', url: siteWithVector(`promo${i}.example`, i + 7), expires_at: null },
      plan: 'premium',
      status: 'live',
      maker_email: MAKER,
    });
  }
  for (let i = 0; i < N; i++) {
    lines.push({
      kind: 'listing',
      slug: `xss-p${i}`,
      name: fit(i, LISTING_LIMITS.nameMax) ?? `Pending ${i}`,
      punchline: fit(i + 2, LISTING_LIMITS.punchlineMax) ?? `Pending punchline ${i}`,
      description: VECTORS[(i + 1) % N]!.vector,
      website: siteWithVector(`q${i}.example`, i + 3),
      category: `xss-c${i}`,
      status: 'pending',
      maker_email: MAKER,
    });
  }
  // Harmless listings: the markup every page shows of its own, the baseline of the DOM check.
  const plain = { punchline: 'Plain words', description: '<p>A <a href="https://plain.example/docs">plain</a> <strong>description</strong>.</p>', category: 'xss-plain', maker_email: MAKER };
  lines.push({
    kind: 'listing', slug: 'plain-live', name: 'Plain Live', website: 'https://plain.example/', ...plain, plan: 'premium', status: 'live',
    highlights: ['Fast'], ideal_for: ['Writers'], faq: [{ question: 'Is it plain?', answer: 'Yes.' }], promo: { code: 'PLAIN', discount: '10 % off', url: 'https://plain.example/offer', expires_at: null },
  });
  lines.push({ kind: 'listing', slug: 'plain-pending', name: 'Plain Pending', website: 'https://plain-pending.example/', ...plain, status: 'pending' });
  lines.push({ kind: 'listing', slug: 'plain-rejected', name: 'Plain Rejected', website: 'https://plain-rejected.example/', ...plain, status: 'pending' });
  lines.push({ kind: 'listing', slug: 'plain-changes', name: 'Plain Changes', website: 'https://plain-changes.example/', ...plain, status: 'pending' });
  return lines;
}

/** Lines the import must refuse, each for the field that holds the vector. */
function refusedLines(): { line: Line; field: string }[] {
  const out: { line: Line; field: string }[] = [];
  const base = (slug: string): Line => ({ kind: 'listing', slug, name: 'Refused', punchline: 'Refused', description: '', website: 'https://refused.example/' });
  for (let i = 0; i < N; i++) out.push({ line: { ...base(`refused-social-${i}`), social: vec(i) }, field: 'social' });
  for (let i = 0; i < N; i++) out.push({ line: { ...base(`refused-category-${i}`), category: vec(i) }, field: 'category' });
  for (let i = 0; i < N; i += 4) out.push({ line: { ...base(`refused-tags-${i}`), tags: [vec(i)] }, field: 'tags.0' });
  for (let i = 2; i < N; i += 4) out.push({ line: { ...base(`refused-labels-${i}`), labels: [vec(i)] }, field: 'labels.0' });
  for (let i = 0; i < N; i++) if (hasControlCharacters(vec(i))) out.push({ line: { ...base(`refused-name-${i}`), name: vec(i) }, field: 'name' });
  const schemes = ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', ' javascript:alert(1)', 'java\tscript:alert(1)', 'vbscript:msgbox(1)', 'data:text/html,<script>alert(1)</script>', 'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==', '//xss.rocks/xss.js', '/xss-beacon/x'];
  // The vectors that are addresses of a script scheme themselves (the polyglot starts "javascript:").
  for (let i = 0; i < N; i++) if (/^\s*(javascript|data|vbscript):/i.test(vec(i))) schemes.push(vec(i));
  schemes.forEach((url, k) => {
    out.push({ line: { ...base(`refused-website-${k}`), website: url }, field: 'website' });
    out.push({ line: { ...base(`refused-logo-${k}`), logo: url }, field: 'logo' });
    out.push({ line: { ...base(`refused-promo-${k}`), promo: { code: 'X', discount: 'Y', url } }, field: 'promo.url' });
  });
  return out;
}

describeInBrowser('script injection through every field, shown on every page', (browser) => {
  let sites: MakerSites;
  let stack: TestStack;
  let dir: string;
  let maker: Client;
  let reader: Client;
  let web: CookieBrowser;
  /** Tag names and attribute names the pages show of their own for harmless listings. */
  let ownMarkup: Set<string> | undefined;
  /** Off-loopback images the service's own markup names (the makers' sites' covers). */
  const ownImages = new Set<string>();
  const makerSlugs: string[] = [];
  /** A listing the maker submitted with a harmless text, its site's cover shown. */
  let mcpBaseSlug: string | undefined;
  const started = Date.now();

  beforeAll(async () => {
    sites = await startMakerSites();
    stack = await startMakerStack({ RATE_LIMIT_PAGES_PER_MIN: '100000' });
    dir = await mkdtemp(path.join(os.tmpdir(), 'xss-corpus-'));
    expect((await runCatalog(stack, ['admin', 'grant', MAKER])).code).toBe(0);
    const token = await makerToken(stack, MAKER);
    web = token.browser;
    maker = await makerClient(stack, token.accessToken);
    reader = new Client({ name: 'xss-reader', version: '1.0.0' });
    await reader.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/api/mcp`)));
  }, 120_000);

  afterAll(async () => {
    await maker?.close();
    await reader?.close();
    await stack?.stop();
    await sites?.site.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    console.log(`xss corpus: ${N} vectors, ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  it(`the corpus holds at least 150 vectors, each from a named source`, () => {
    expect(N).toBeGreaterThanOrEqual(150);
    expect(new Set(VECTORS.map((v) => v.id)).size).toBe(N);
    for (const v of VECTORS) {
      expect(['owasp', 'h5sc']).toContain(v.source);
      expect(v.ref).not.toBe('');
      expect(v.vector.trim()).not.toBe('');
    }
    expect(VECTORS.filter((v) => v.source === 'owasp').length).toBeGreaterThan(50);
    expect(VECTORS.filter((v) => v.source === 'h5sc').length).toBeGreaterThan(50);
  });

  it('catalog import refuses a vector in a handle, a category slug or a non-http(s) address, and text with control characters, naming the line and field', async () => {
    const refused = refusedLines();
    const file = path.join(dir, 'refused.ndjson');
    await writeFile(file, refused.map((r) => JSON.stringify(r.line)).join('\n') + '\n');
    const run = await runCatalog(stack, ['import', file]);
    expect(run.code).toBe(1);
    const output = run.stdout + run.stderr;
    refused.forEach((r, k) => {
      const prefix = `line ${k + 1}: ${r.field}: `;
      expect(output, `line ${k + 1} (${JSON.stringify(r.line[r.field.split('.')[0]!])})`).toContain(prefix);
    });
    // Nothing of a refused file is written.
    expect((await fetch(`${stack.baseUrl}/api/v1/products/refused-social-0`)).status).toBe(404);
  }, 60_000);

  it('catalog import takes every vector in every text field, and REST and MCP serve them as text', async () => {
    const file = path.join(dir, 'vectors.ndjson');
    const lines = importLines();
    await writeFile(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const run = await runCatalog(stack, ['import', file]);
    expect(run.stderr + run.stdout, 'the import').toContain('imported');
    expect(run.code).toBe(0);
    await stack.settle();

    for (const line of lines.filter((l) => l.kind === 'listing' && l.status === 'live')) {
      const res = await fetch(`${stack.baseUrl}/api/v1/products/${String(line.slug)}`);
      expect(res.status).toBe(200);
      const product = (await res.json()) as Json;
      expectServedAsSent(product, line);
      const viaMcp = await reader.callTool({ name: 'get_product', arguments: { slug: line.slug } });
      expect(viaMcp.isError ?? false).toBe(false);
      expect(viaMcp.structuredContent).toEqual(product);
      for (const img of [product.logo, product.cover]) if (typeof img === 'string') ownImages.add(withoutFragment(img));
    }
    const categories = ((await (await fetch(`${stack.baseUrl}/api/v1/categories`)).json()) as { categories: Json[] }).categories;
    for (const line of lines.filter((l) => l.kind === 'category')) {
      expect(categories.find((c) => c.slug === line.slug)).toMatchObject({ name: line.name, noun: line.noun });
    }
  }, 120_000);

  it('search answers a vector as a query with results, never a server error', async () => {
    for (let i = 0; i < N; i++) {
      const res = await fetch(`${stack.baseUrl}/api/v1/search?${new URLSearchParams({ q: vec(i).slice(0, 200) })}`);
      expect([200, 400], `${VECTORS[i]!.id}`).toContain(res.status);
      const body = (await res.json()) as Json;
      if (res.status === 200) for (const p of body.products as Json[]) expect(typeof p.name).toBe('string');
      else expect(body.code).toBe('BAD_REQUEST');
    }
    // A category's results, over REST and MCP: the listing's name and punchline as sent.
    for (let i = 0; i < N; i += 12) {
      const expected = { name: fit(i, LISTING_LIMITS.nameMax) ?? `Listing ${i}`, punchline: fit(i + 1, LISTING_LIMITS.punchlineMax) ?? `Punchline ${i}` };
      const found = (await (await fetch(`${stack.baseUrl}/api/v1/search?category=xss-c${i}`)).json()) as { products: Json[] };
      expect(found.products.map((p) => ({ name: p.name, punchline: p.punchline })), `xss-c${i}`).toEqual([expected]);
      const viaMcp = await reader.callTool({ name: 'search_products', arguments: { category: `xss-c${i}` } });
      expect(viaMcp.structuredContent, `xss-c${i} over MCP`).toEqual(found);
    }
  }, 60_000);

  it('the MCP maker tools refuse markup in plain-text fields with a tool error naming the field, and store what they accept as sent', async () => {
    const plainFields = { punchline: 'Written by tools', description: 'Plain.', category: 'xss-plain' };
    // Four listings to edit at once (each edit of a website reads the site).
    const bases: string[] = [];
    for (let k = 0; k < 4; k++) {
      const submitted = await tool(maker, 'submit_product', { website: sites.url('good.example', `/mcp-base-${k}`), name: `MCP Base ${k}`, ...plainFields });
      expect(submitted.body.outcome).toBe('published');
      bases.push((submitted.body.listing as Json).slug as string);
    }
    mcpBaseSlug = bases[0];
    const written = new Map<string, Json>();
    await inParallel(VECTORS.map((_, i) => i), 4, async (i, lane) => {
      const v = vec(i);
      const fields: Json = { name: fit(i, LISTING_LIMITS.nameMax) ?? 'Too long', punchline: fit(i + 1, LISTING_LIMITS.punchlineMax) ?? 'Too long', description: VECTORS[i]!.vector, social: v, category: v };
      const answer = await tool(maker, 'update_listing', { slug: bases[lane]!, ...fields });
      expect(answer.ok, VECTORS[i]!.id).toBe(false);
      // Tags are slugs: a submission's tag list refuses a vector.
      const tagged = await tool(maker, 'submit_product', { website: sites.url('good.example', `/mcp-tags-${i}`), tags: [v] });
      expect(tagged.ok, VECTORS[i]!.id).toBe(false);
      expect(((tagged.body.data as Json).issues as { path: string[] }[]).map((issue) => issue.path[0])).toEqual(['tags']);
      expect(answer.body.code).toBe('BAD_REQUEST');
      const issues = ((answer.body.data as Json | undefined)?.issues ?? []) as { path: string[]; message: string }[];
      const refused = new Set(issues.map((issue) => issue.path[0]!));
      // Each refusal names its field.
      for (const issue of issues) expect(issue.message, VECTORS[i]!.id).toMatch(new RegExp(`^${issue.path[0]}\\b`));
      // A handle and a category slug never take a vector.
      expect(refused.has('social') && refused.has('category'), VECTORS[i]!.id).toBe(true);
      // What was not refused is written by itself, through a new submission with its own site
      // (the vector in its address too), and served as sent.
      const rest: Json = Object.fromEntries(Object.entries(fields).filter(([k]) => !refused.has(k) && k !== 'social' && k !== 'category'));
      if (Object.keys(rest).length === 0) return;
      const website = `${sites.url('good.example', `/mcp-${i}`)}?v=${encodeURIComponent(v)}`;
      const made = await tool(maker, 'submit_product', { website, name: `MCP ${i}`, ...plainFields, ...rest });
      expect(made.ok, `${VECTORS[i]!.id}: ${JSON.stringify(made.body)}`).toBe(true);
      expect(made.body.outcome).toBe('published');
      written.set((made.body.listing as Json).slug as string, { name: `MCP ${i}`, ...plainFields, ...rest });
    });
    expect(written.size).toBeGreaterThan(0);
    makerSlugs.push(...written.keys());

    // Every address with a vector in its path or query is a website, read and checked as any is.
    await inParallel(VECTORS.map((_, i) => i), 4, async (i, lane) => {
      const website = `${sites.url('good.example', `/site-${i}`)}?v=${vec(i)}`;
      const answer = await tool(maker, 'update_listing', { slug: bases[lane]!, website });
      // An accepted address is kept as the URL parser writes it (percent-encoded), less its fragment.
      const expected = new URL(website.trim());
      expected.hash = '';
      if (answer.ok) expect((answer.body.listing as Json).website, VECTORS[i]!.id).toBe(expected.href);
      else expect((answer.body.data as { issues: { path: string[] }[] }).issues[0]!.path, VECTORS[i]!.id).toEqual(['website']);
    });
    for (const website of ['javascript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox(1)', 'JAVASCRIPT:alert(1)//good.example']) {
      const answer = await tool(maker, 'update_listing', { slug: bases[0]!, website });
      expect(answer.ok, website).toBe(false);
      expect(answer.body.code).toBe('BAD_REQUEST');
      expect(String(((answer.body.data as Json).issues as { message: string }[])[0]!.message)).toMatch(/http:\/\/ or https:\/\//);
    }
    await stack.settle();
    for (const [made, fields] of written) {
      const res = await fetch(`${stack.baseUrl}/api/v1/products/${made}`);
      expect(res.status).toBe(200);
      const product = (await res.json()) as Json;
      expect({ name: product.name, punchline: product.punchline }).toEqual({ name: String(fields.name).trim(), punchline: String(fields.punchline).trim() });
      expectDescriptionAllowed(product.description as string);
    }
  }, 120_000);

  /** A tab in Chromium with everything a script could do being watched. */
  interface Watched {
    page: Page;
    context: BrowserContext;
    /** Dialogs, beacon requests, popups. */
    ran: string[];
    /** Page errors, CSP violations, console errors other than the browser noting an error status. */
    errors(): string[];
  }

  async function watchedTab(opts: { signedIn?: boolean } = {}): Promise<Watched> {
    const tab = await browser.newTab();
    const ran: string[] = [];
    const { page, context } = tab;
    page.on('dialog', (d) => {
      ran.push(`dialog ${d.type()}: ${d.message()} on ${page.url()}`);
      void d.dismiss().catch(() => undefined);
    });
    context.on('page', (p) => ran.push(`popup ${p.url()}`));
    const service = new URL(stack.baseUrl);
    context.on('request', (req) => {
      const url = new URL(req.url());
      const own = url.origin === service.origin && !url.pathname.startsWith('/xss-beacon');
      const ownImage = ownImages.has(withoutFragment(url.href)) || (req.resourceType() === 'image' && url.protocol === 'https:' && /^cdn\.[a-z]+\.example$/.test(url.hostname));
      // The e-mails and the parser's blank page are shown at a made-up loopback address of their own.
      const mailView = url.origin === MAIL_ORIGIN && (url.pathname.startsWith('/mail/') || url.pathname === '/blank');
      if (!own && !ownImage && !mailView) ran.push(`request ${req.url()} from ${page.url()}`);
    });
    if (opts.signedIn) {
      const cookies = web.jar
        .header()
        .split('; ')
        .filter(Boolean)
        .map((pair) => {
          const eq = pair.indexOf('=');
          return { name: pair.slice(0, eq), value: pair.slice(eq + 1), url: stack.baseUrl };
        });
      await context.addCookies(cookies);
    }
    return {
      page,
      context,
      ran,
      errors: () => [
        ...tab.consoleErrors.filter((e) => !/^Failed to load resource: the server responded with a status of (400|404)/.test(e)),
        ...tab.pageErrors.map((e) => `page error: ${e}`),
        ...tab.cspViolations.map((v) => `CSP: ${JSON.stringify(v)}`),
      ],
    };
  }

  /**
   * Reads documents with Chromium's own HTML parser: the page the tab shows (htmls null), or
   * served pages parsed by DOMParser (no script runs there, so the check stands without the CSP).
   * For each: what it holds that neither the pages' own markup nor the description's allow-list
   * explains, and what it shows as text (its text, title, inputs' and textareas' values).
   */
  async function readDocuments(page: Page, htmls: string[] | null): Promise<{ injected: string[]; text: string }[]> {
    return page.evaluate(
      ({ htmls, own, allowedTags, rel, target }) => {
        const ownSet = new Set(own);
        const URL_ATTRS = new Set(['href', 'src', 'action', 'formaction', 'data', 'poster', 'background', 'srcdoc', 'xlink:href', 'dynsrc', 'lowsrc', 'codebase']);
        // The pages' own scripts, in the head only: one structured-data block (never run; its JSON
        // must parse, or text broke out of it) and the search page's file of this origin.
        const ownScript = (el: globalThis.Element, doc: Document) =>
          el.localName === 'script' &&
          el.parentElement === doc.head &&
          ((el.getAttribute('type') === 'application/ld+json' && !el.hasAttribute('src') && el.attributes.length === 1) ||
            (/^\/assets\/search\.[0-9a-f]{12}\.js$/.test(el.getAttribute('src') ?? '') && el.attributes.length === 2 && el.hasAttribute('defer') && el.textContent === ''));
        const analyze = (doc: Document) => {
          const out = new Set<string>();
          const dataBlocks = Array.from(doc.scripts).filter((s) => ownScript(s, doc) && s.hasAttribute('type'));
          if (dataBlocks.length > 1) out.add(`${dataBlocks.length} structured-data blocks`);
          for (const block of dataBlocks) {
            try {
              JSON.parse(block.textContent ?? '');
            } catch {
              out.add(`structured data that is not JSON: ${(block.textContent ?? '').slice(0, 60)}`);
            }
          }
          for (const el of Array.from(doc.querySelectorAll('*'))) {
            if (ownScript(el, doc)) continue;
            const name = el.namespaceURI === 'http://www.w3.org/1999/xhtml' ? el.localName : `${el.namespaceURI}:${el.localName}`;
            const inDescription = el.parentElement?.closest('.description') != null;
            for (const a of Array.from(el.attributes)) {
              if (/^on/i.test(a.name)) out.add(`handler <${name} ${a.name}="${a.value.slice(0, 60)}">`);
              // eslint-disable-next-line no-control-regex -- a URL's leading control characters are ignored by browsers
              if (URL_ATTRS.has(a.name.toLowerCase()) && /^[\s\0-\x1f]*(javascript|vbscript|data|livescript):/i.test(a.value.replace(/[\t\n\r]/g, ''))) {
                out.add(`script URL <${name} ${a.name}="${a.value.slice(0, 60)}">`);
              }
            }
            if (inDescription) {
              if (!allowedTags.includes(name)) out.add(`<${name}> inside the description`);
              for (const a of Array.from(el.attributes)) {
                const ok = name === 'a' && (a.name === 'href' ? /^(https?:\/\/|mailto:)/i.test(a.value) : a.name === 'rel' ? a.value === rel : a.name === 'target' && a.value === target);
                if (!ok) out.add(`<${name} ${a.name}="${a.value.slice(0, 60)}"> inside the description`);
              }
              continue;
            }
            if (!ownSet.has(name)) out.add(`<${name}> (${el.outerHTML.slice(0, 80)})`);
            for (const a of Array.from(el.attributes)) if (!ownSet.has(`${name}@${a.name}`)) out.add(`<${name} ${a.name}="${a.value.slice(0, 60)}">`);
          }
          const scripts = Array.from(doc.scripts).filter((el) => !ownScript(el, doc)).length;
          if (scripts > 0) out.add(`${scripts} <script> element(s)`);
          const parts = [doc.title, doc.body?.textContent ?? ''];
          for (const el of Array.from(doc.querySelectorAll('input'))) parts.push(el.getAttribute('value') ?? '');
          for (const el of Array.from(doc.querySelectorAll('textarea'))) parts.push(el.defaultValue);
          for (const el of Array.from(doc.querySelectorAll('meta[content]'))) parts.push(el.getAttribute('content') ?? '');
          return { injected: [...out], text: parts.join('\n\u0001\n') };
        };
        if (htmls === null) return [analyze(document)];
        return htmls.map((html) => analyze(new DOMParser().parseFromString(html, 'text/html')));
      },
      { htmls, own: [...ownMarkup!], allowedTags: [...DESCRIPTION_ALLOWED_TAGS] as string[], rel: DESCRIPTION_LINK_REL, target: DESCRIPTION_LINK_TARGET },
    );
  }

  /** Every element name and attribute name on the page, each attribute with its element: `a`, `a@href`. */
  async function markupOf(page: Page): Promise<string[]> {
    return page.evaluate(() => {
      const out = new Set<string>();
      for (const el of Array.from(document.querySelectorAll('*'))) {
        const name = el.namespaceURI === 'http://www.w3.org/1999/xhtml' ? el.localName : `${el.namespaceURI}:${el.localName}`;
        // The head's own scripts are checked one by one (readDocuments), never learnt as markup.
        if (name === 'script' && el.parentElement === document.head) continue;
        out.add(name);
        for (const a of Array.from(el.attributes)) out.add(`${name}@${a.name}`);
      }
      return [...out];
    });
  }

  /**
   * Posts a form of the page the tab is on as Chromium would, its fields as the page has them
   * but for `values` (a list sends a field several times; a field the form lacks is added, as a
   * forged post would), and waits for the answer.
   */
  async function postForm(w: Watched, action: string, values: Record<string, string | string[]>): Promise<number | undefined> {
    const [response] = await Promise.all([
      w.page.waitForNavigation({ waitUntil: 'load' }),
      w.page.evaluate(
        ({ action, values }) => {
          const form = Array.from(document.forms).find((f) => f.getAttribute('action') === action);
          if (!form) throw new Error(`no form posting to ${action}`);
          const entries: [string, string][] = [];
          for (const [name, value] of (new FormData(form) as unknown as { entries(): Iterable<[string, unknown]> }).entries()) if (!(name in values)) entries.push([name, String(value)]);
          for (const [name, value] of Object.entries(values)) for (const v of Array.isArray(value) ? value : [value]) entries.push([name, v]);
          const forged = document.createElement('form');
          forged.method = 'post';
          forged.action = action;
          forged.enctype = 'application/x-www-form-urlencoded';
          for (const [name, value] of entries) {
            const field = document.createElement('textarea');
            field.name = name;
            field.value = value;
            forged.append(field);
          }
          document.body.append(forged);
          forged.submit();
        },
        { action, values },
      ),
    ]);
    return response?.status();
  }

  /** What the pages show of their own, read once from harmless listings, refused forms included. */
  async function learnOwnMarkup(): Promise<void> {
    await learnOwnMarkupOnce();
    await openParser();
  }

  async function learnOwnMarkupOnce(): Promise<void> {
    if (ownMarkup) return;
    const base = await watchedTab({ signedIn: true });
    const own = new Set<string>();
    const urls = ['/', '/products/plain-live', '/categories/xss-plain', '/products/no-such-listing', '/search?q=plain', '/search?q=p', '/search?q=plain&category=xss-plain&page=2&limit=1', '/dashboard', '/dashboard/new', '/dashboard/listings/plain-live', '/dashboard/listings/plain-pending', '/admin/review', '/admin/listings/plain-pending'];
    if (mcpBaseSlug) urls.push(`/products/${mcpBaseSlug}`);
    for (const url of urls) {
      await base.page.goto(`${stack.baseUrl}${url}`);
      for (const m of await markupOf(base.page)) own.add(m);
    }
    await base.page.goto(`${stack.baseUrl}/dashboard/new`);
    expect(await postForm(base, '/dashboard/new', { website: 'https://plain-refused.example/', name: 'Plain', social: 'not a handle', category: 'no-such-category' })).toBe(400);
    for (const m of await markupOf(base.page)) own.add(m);
    await base.page.goto(`${stack.baseUrl}/dashboard/listings/plain-live`);
    expect(await postForm(base, '/dashboard/listings/plain-live/profile', { promo_code: 'PLAIN', promo_discount: '', faq_question: ['Plain?'], faq_answer: [''] })).toBe(400);
    for (const m of await markupOf(base.page)) own.add(m);
    await base.page.goto(`${stack.baseUrl}/dashboard/listings/plain-live`);
    expect(await postForm(base, '/dashboard/listings/plain-live', { name: '', social: 'not a handle' })).toBe(400);
    for (const m of await markupOf(base.page)) own.add(m);
    // The pages run no script and carry no handler of their own.
    expect([...own].filter((m) => /script|^on|@on/.test(m))).toEqual([]);
    ownMarkup = own;
  }

  /** A tab of this test for reading served pages with Chromium's parser (tabs close after each test). */
  async function openParser(): Promise<void> {
    parser = await watchedTab();
    await parser.page.route(`${MAIL_ORIGIN}/blank`, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: '<!doctype html><title>parser</title>' }));
    await parser.page.goto(`${MAIL_ORIGIN}/blank`);
  }

  let parser: Watched | undefined;
  let pagesRead = 0;
  let pagesOpened = 0;

  /** Shows each text as sent, in the text of one page or of several read together. */
  function expectShown(shown: string, texts: (string | undefined)[], where: string): void {
    for (const t of texts) if (t !== undefined) expect(shown.includes(asParsed(t)), `${where} shows ${JSON.stringify(t.slice(0, 80))} as text`).toBe(true);
  }

  /** Checks served pages, given as URL → [status, HTML], with Chromium's parser; returns what each shows as text. */
  async function checkServed(served: Map<string, { status: number; html: string }>, expectedStatus: number): Promise<Map<string, string>> {
    const shown = new Map<string, string>();
    const entries = [...served];
    for (let k = 0; k < entries.length; k += 20) {
      const batch = entries.slice(k, k + 20);
      const read = await readDocuments(parser!.page, batch.map(([, r]) => r.html));
      batch.forEach(([url, r], j) => {
        pagesRead++;
        expect(r.status, url).toBe(expectedStatus);
        expect(read[j]!.injected, url).toEqual([]);
        shown.set(url, read[j]!.text);
      });
    }
    return shown;
  }

  /** Fetches pages as the signed-in maker (and admin) and checks them with Chromium's parser. */
  async function checkPages(urls: string[], expectedStatus = 200): Promise<Map<string, string>> {
    const served = new Map<string, { status: number; html: string }>();
    const queue = [...urls];
    await Promise.all(
      [0, 1, 2].map(async () => {
        for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
          const res = await web.request(url);
          served.set(url, { status: res.status, html: await res.text() });
        }
      }),
    );
    return checkServed(new Map(urls.map((u) => [u, served.get(u)!])), expectedStatus);
  }

  /** Opens pages in Chromium, with their real headers and CSP, scripts on: nothing may run, nothing be injected. */
  async function openPages(w: Watched, urls: string[], expectedStatus = 200): Promise<void> {
    for (const url of urls) {
      const res = await w.page.goto(`${stack.baseUrl}${url}`, { waitUntil: 'load' });
      pagesOpened++;
      expect(res?.status(), url).toBe(expectedStatus);
      expect((await readDocuments(w.page, null))[0]!.injected, url).toEqual([]);
    }
  }

  it('the maker pages refuse markup in every field with the form shown again, its values as text and nothing run', async () => {
    await learnOwnMarkup();
    const website = (i: number) => `${sites.url('good.example', `/form-${i}`)}?v=${vec(i)}`;
    const submission = (a: number) => ({ website: website(a + 4), name: vec(a), punchline: vec(a + 1), social: vec(a + 2), tags: vec(a + 3), category: vec(a + 4), description: [0, 1, 2, 3, 4].map((k) => vec(a + k)).join('\n\n') });
    const profile = (a: number) => {
      const rows = Array.from({ length: LISTING_LIMITS.faqMax }, (_, k) => a + k);
      return {
        highlights: rows.slice(0, LISTING_LIMITS.profileItemsMax).map((k) => vec(k)).join('\n'),
        ideal_for: rows.slice(LISTING_LIMITS.faqMax - LISTING_LIMITS.profileItemsMax).map((k) => vec(k)).join('\n'),
        faq_question: rows.map((k) => fit(k + 1, LISTING_LIMITS.faqQuestionMax) ?? 'Too long?'),
        faq_answer: rows.map((k) => vec(k)),
        promo_code: fit(a, LISTING_LIMITS.promoCodeMax) ?? 'CODE',
        promo_discount: fit(a + 1, LISTING_LIMITS.promoDiscountMax) ?? '10 %',
        promo_url: `https://promo.example/?v=${vec(a + 2)}`,
      };
    };
    // Posted as a browser posts them (the page's own fields and CSRF token, the cookie jar), then
    // read with Chromium's parser: the submission form with each vector in one of its text
    // inputs and in its description, the edit form, and the premium profile with every vector
    // in its lines, questions and answers.
    const served = new Map<string, { status: number; html: string }>();
    const posts: [string, () => Promise<Response>][] = [];
    for (let a = 0; a < N; a += 5) posts.push([`submission ${a}`, () => fillAndPost(web, '/dashboard/new', '/dashboard/new', submission(a))]);
    for (let i = 0; i < N; i += 24) {
      posts.push([`edit ${i}`, () => fillAndPost(web, '/dashboard/listings/plain-live', '/dashboard/listings/plain-live', { website: website(i), name: vec(i), punchline: vec(i + 1), social: vec(i + 2), description: vec(i + 3) })]);
    }
    for (let a = 0; a < N; a += LISTING_LIMITS.faqMax) posts.push([`profile ${a}`, () => fillAndPost(web, '/dashboard/listings/plain-live', '/dashboard/listings/plain-live/profile', profile(a))]);
    for (const [what, send] of posts) {
      const res = await send();
      served.set(what, { status: res.status, html: await res.text() });
    }
    const shown = await checkServed(served, 400);
    for (let a = 0; a < N; a += 5) {
      const v = submission(a);
      expect(shown.get(`submission ${a}`)).toMatch(/Social/);
      expectShown(shown.get(`submission ${a}`)!, [v.name, v.punchline, v.social, v.description], `the refused submission form ${a}`);
    }
    for (let a = 0; a < N; a += LISTING_LIMITS.faqMax) {
      const v = profile(a);
      expect(shown.get(`profile ${a}`)).toContain('must be plain text, without HTML or scripts');
      expectShown(shown.get(`profile ${a}`)!, [...v.faq_question, ...v.faq_answer, v.promo_code, v.promo_discount], `the refused profile form ${a}`);
    }

    // A few of the same posts made by Chromium itself, its page rendered with scripts on.
    const w = await watchedTab({ signedIn: true });
    for (const a of [0, 145]) {
      await w.page.goto(`${stack.baseUrl}/dashboard/new`);
      expect(await postForm(w, '/dashboard/new', submission(a))).toBe(400);
      expect((await readDocuments(w.page, null))[0]!.injected).toEqual([]);
    }
    await viewportShot(w.page, 'xss-submission-refused');
    await w.page.goto(`${stack.baseUrl}/dashboard/listings/plain-live`);
    expect(await postForm(w, '/dashboard/listings/plain-live/profile', profile(0))).toBe(400);
    expect((await readDocuments(w.page, null))[0]!.injected).toEqual([]);
    await viewportShot(w.page, 'xss-profile-refused');
    expect(w.ran).toEqual([]);
    expect(w.errors()).toEqual([]);
  }, 180_000);

  it('every page that shows the vectors: nothing injected (Chromium\'s parser), each field as text, and nothing runs when opened', async () => {
    await learnOwnMarkup();
    const names = (prefix: string) => Array.from({ length: N }, (_, i) => fit(i, LISTING_LIMITS.nameMax) ?? `${prefix} ${i}`);
    const categoryNames = Array.from({ length: N }, (_, i) => fit(i, LISTING_LIMITS.categoryNameMax));
    const all = Array.from({ length: N }, (_, i) => i);
    const sample = all.filter((i) => i % SAMPLE === 0);

    const shown = await checkPages(['/', '/dashboard/new', '/dashboard']);
    expectShown(shown.get('/')!, categoryNames, 'the home page');
    // Every category's name is a choice of the submission form.
    expectShown(shown.get('/dashboard/new')!, categoryNames, 'the submission form');
    expectShown(shown.get('/dashboard')!, [...names('Listing'), ...names('Pending')], 'the dashboard');

    const queue = await checkPages(Array.from({ length: Math.ceil((N + 1) / 50) }, (_, k) => `/admin/review?page=${k + 1}`));
    expectShown([...queue.values()].join('\n'), [...names('Pending'), ...Array.from({ length: N }, (_, i) => fit(i + 2, LISTING_LIMITS.punchlineMax))], 'the review queue');

    // Each listing's page: every field of its import line.
    const listings = await checkPages(all.map((i) => `/products/xss-l${i}`));
    for (const i of all) {
      expectShown(listings.get(`/products/xss-l${i}`)!, [fit(i, LISTING_LIMITS.nameMax), fit(i + 1, LISTING_LIMITS.punchlineMax), fit(i, LISTING_LIMITS.categoryNameMax), fit(i + 2, LISTING_LIMITS.profileItemMax), fit(i + 3, LISTING_LIMITS.profileItemMax), fit(i + 4, LISTING_LIMITS.faqQuestionMax), fit(i + 5, LISTING_LIMITS.faqAnswerMax), fit(i, LISTING_LIMITS.promoCodeMax), fit(i + 6, LISTING_LIMITS.promoDiscountMax)], `/products/xss-l${i}`);
    }
    // The listings the MCP tools wrote.
    await checkPages(makerSlugs.map((slug) => `/products/${slug}`));
    const categories = await checkPages(all.map((i) => `/categories/xss-c${i}`));
    for (const i of all) expectShown(categories.get(`/categories/xss-c${i}`)!, [fit(i, LISTING_LIMITS.categoryNameMax), fit(i, LISTING_LIMITS.nameMax), fit(i + 1, LISTING_LIMITS.punchlineMax)], `/categories/xss-c${i}`);
    const edits = await checkPages(sample.flatMap((i) => [`/dashboard/listings/xss-l${i}`, `/dashboard/listings/xss-p${(i + 1) % N}`]));
    for (const i of sample) {
      expectShown(edits.get(`/dashboard/listings/xss-l${i}`)!, [fit(i, LISTING_LIMITS.nameMax), fit(i + 1, LISTING_LIMITS.punchlineMax), fit(i + 2, LISTING_LIMITS.profileItemMax), fit(i + 4, LISTING_LIMITS.faqQuestionMax), vec(i + 5)], `the edit page of xss-l${i}`);
    }
    await checkPages(sample.map((i) => `/admin/listings/xss-p${(i + 2) % N}`));
    // A missing listing's or category's page repeats the slug asked for.
    await checkPages(sample.flatMap((i) => [`/products/${encodeURIComponent(vec(i + 3).slice(0, 150))}`, `/categories/${encodeURIComponent(vec(i + 1).slice(0, 150))}`]), 404);
    // The search page shows its words back (the box, the title), the listings they find, and
    // the API's refusal of words it does not take: each vector as a query, as taken or refused.
    const searches = new Map<number, string[]>([[200, []], [400, []]]);
    for (const i of sample) {
      const path = `/search?q=${encodeURIComponent(vec(i).slice(0, 120))}`;
      searches.get((await fetch(`${stack.baseUrl}/api/v1${path}`)).status)!.push(path);
    }
    expect(searches.get(200)!.length).toBeGreaterThan(0);
    for (const [status, paths] of searches) {
      const shownSearches = await checkPages(paths, status);
      for (const path of paths) expectShown(shownSearches.get(path)!, [new URLSearchParams(path.slice('/search?'.length)).get('q')!.trim()], path);
    }

    // Every description as REST serves it, parsed by Chromium inside a description's place.
    const descriptions: string[] = [];
    for (const slug of [...all.map((i) => `xss-l${i}`), ...makerSlugs]) descriptions.push(((await (await fetch(`${stack.baseUrl}/api/v1/products/${slug}`)).json()) as Json).description as string);
    const parsed = await readDocuments(parser!.page, descriptions.map((d) => `<!doctype html><title>d</title><div class="description">${d}</div>`));
    parsed.forEach((r, k) => expect(r.injected, descriptions[k]!.slice(0, 200)).toEqual([]));

    // Opened in Chromium as a visitor, maker or admin opens them: with their headers and CSP,
    // scripts on, a sample of each kind.
    const w = await watchedTab({ signedIn: true });
    const few = all.filter((i) => i % 24 === 0);
    await openPages(w, ['/', '/dashboard', '/admin/review', ...few.flatMap((i) => [`/products/xss-l${i}`, `/categories/xss-c${i}`, `/dashboard/listings/xss-l${i}`]), ...makerSlugs.slice(0, 4).map((slug) => `/products/${slug}`), `/admin/listings/xss-p1`]);
    await openPages(w, few.slice(0, 4).map((i) => `/products/${encodeURIComponent(vec(i + 3).slice(0, 150))}`), 404);
    await w.page.goto(`${stack.baseUrl}/products/xss-l1`);
    await screenshot(w.page, 'xss-listing');
    await w.page.goto(`${stack.baseUrl}/admin/review`);
    await viewportShot(w.page, 'xss-review-queue');
    expect(w.ran).toEqual([]);
    expect(w.errors()).toEqual([]);
    expect(parser!.ran).toEqual([]);
    expect(parser!.errors()).toEqual([]);
    console.log(`pages read with Chromium's parser: ${pagesRead}; opened: ${pagesOpened}`);
  }, 180_000);

  it('an app\'s name from dynamic client registration, on the consent page and the connected apps page: text, nothing injected', async () => {
    await learnOwnMarkup();
    const callback = 'http://127.0.0.1:45680/callback';
    const authorize = (clientId: string) =>
      authorizationRequest(stack.baseUrl, { client_id: clientId, response_type: 'code', redirect_uri: callback, scope: 'listings:read', state: 'x', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
    // Each app registers from an address of its own (registrations are limited per address).
    let registrations = 0;
    const register = (name: string) =>
      fetch(`${stack.baseUrl}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.18.200.${++registrations}` },
        body: JSON.stringify({ client_name: name, redirect_uris: [callback], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' }),
      });
    // The pages' own markup, with a harmless app's name.
    const plainId = ((await (await register('Plain App')).json()) as { client_id: string }).client_id;
    const base = await watchedTab({ signedIn: true });
    await base.page.goto(new URL((await web.follow(authorize(plainId))).url).href);
    for (const m of await markupOf(base.page)) ownMarkup!.add(m);
    expect((await decideConsent(web, authorize(plainId), 'approve')).searchParams.get('code')).toBeTruthy();
    await base.page.goto(`${stack.baseUrl}/settings/apps`);
    for (const m of await markupOf(base.page)) ownMarkup!.add(m);

    const served = new Map<string, { status: number; html: string }>();
    const names = new Map<string, string>();
    for (let i = 0; i < N; i += 8) {
      const res = await register(vec(i));
      const body = (await res.json()) as { client_id?: string; error?: string; error_description?: string };
      if (res.status !== 201) {
        // A refused name is refused in words, as RFC 7591 says.
        expect(res.status, VECTORS[i]!.id).toBe(400);
        expect(body.error, VECTORS[i]!.id).toBe('invalid_client_metadata');
        continue;
      }
      const consent = await web.follow(authorize(body.client_id!));
      expect(new URL(consent.url).pathname, VECTORS[i]!.id).toMatch(/^\/oauth\/consent\//);
      served.set(`consent ${VECTORS[i]!.id}`, { status: consent.res.status, html: await consent.res.text() });
      names.set(`consent ${VECTORS[i]!.id}`, vec(i));
      if (i % 48 === 0) expect((await decideConsent(web, authorize(body.client_id!), 'approve')).searchParams.get('code'), VECTORS[i]!.id).toBeTruthy();
    }
    const apps = await web.request('/settings/apps');
    served.set('apps', { status: apps.status, html: await apps.text() });
    const shown = await checkServed(served, 200);
    for (const [what, name] of names) expectShown(shown.get(what)!, [name], what);
    expect(names.size).toBeGreaterThan(0);
    expect(parser!.ran).toEqual([]);
  }, 60_000);

  it('the checks see what they look for: a listing page with its name left unescaped, opened without CSP, fails them', async () => {
    await learnOwnMarkup();
    // h5sc-37: <!--<img src="--><img src=x onerror=alert(1)//">
    const i = VECTORS.findIndex((v) => v.id === 'h5sc-37');
    const res = await web.request(`/products/xss-l${i}`);
    const html = await res.text();
    const escaped = (await readDocuments(parser!.page, [html]))[0]!;
    expect(escaped.injected).toEqual([]);
    // The same page as a careless template would write it: the name as markup.
    const broken = html.replace('<h1>', `<h1>${vec(i)}`);
    expect((await readDocuments(parser!.page, [broken]))[0]!.injected).toEqual(expect.arrayContaining([expect.stringMatching(/^handler <img onerror=/)]));
    // And opened at an address without CSP: the vector runs, which the watch reports.
    const w = await watchedTab();
    await w.page.route(`${MAIL_ORIGIN}/mail/broken`, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: broken }));
    await w.page.goto(`${MAIL_ORIGIN}/mail/broken`);
    await expect.poll(() => w.ran).toEqual(expect.arrayContaining([expect.stringMatching(/^dialog alert: 1 on /)]));
  });

  it('review decisions: their e-mails opened as a mail client shows them (plain text, no CSP) and their feedback on the maker\'s and admin\'s pages, nothing run or injected', async () => {
    const csrf = CookieBrowserClass.csrfOf(await (await web.request('/admin/review')).text());
    const before = stack.mails.length;
    const actions = ['approve', 'reject', 'request_changes'] as const;
    // An admin's feedback is any text but control characters.
    const feedback = (i: number) => (i % 3 === 0 ? '' : hasControlCharacters(vec(i + 1)) ? 'Plain feedback.' : vec(i + 1));
    for (let i = 0; i < N; i++) {
      const res = await web.request(`/admin/listings/xss-p${i}/decisions`, { form: { _csrf: csrf, action: actions[i % 3]!, from: 'queue', feedback: feedback(i) } });
      expect(res.status, `decision on xss-p${i}`).toBe(303);
    }
    await expect.poll(() => stack.mails.length - before, { timeout: 20_000 }).toBe(N);
    const mails = stack.mails.slice(before);
    // A mail is a subject and a plain-text body: no HTML part a client would render.
    for (const mail of mails) expect(Object.keys(mail).sort()).toEqual(['subject', 'text', 'to']);
    // A mail client shows a plain-text mail as text, under no CSP of ours: the whole mailbox in one view.
    const w = await watchedTab();
    const mailbox = mails.map((m) => `Subject: ${m.subject}\nTo: ${m.to}\n\n${m.text}`).join('\n\n----\n\n');
    await w.page.route(`${MAIL_ORIGIN}/mail/inbox`, (route) => route.fulfill({ status: 200, contentType: 'text/plain; charset=utf-8', body: mailbox }));
    const res = await w.page.goto(`${MAIL_ORIGIN}/mail/inbox`);
    expect(res?.headers()['content-security-policy']).toBeUndefined();
    expect(await w.page.evaluate(() => Array.from(document.body.querySelectorAll('*')).map((e) => e.localName))).toEqual(['pre']);
    expect(await w.page.evaluate(() => document.body.textContent)).toBe(asParsed(mailbox));
    await viewportShot(w.page, 'xss-mails');
    for (let i = 0; i < N; i++) {
      const mail = mails.find((m) => new RegExp(`/xss-p${i}(?!\\d)`).test(m.text));
      expect(mail, `the mail about xss-p${i}`).toBeDefined();
      expect(mail!.subject).toContain(fit(i, LISTING_LIMITS.nameMax) ?? `Pending ${i}`);
      if (i % 3 !== 0) expect(mail!.text).toContain(feedback(i).replace(/\r\n?/g, '\n'));
    }
    // The feedback as the maker and the admin see it: the edit pages and the listing's history,
    // read with Chromium's parser against the same pages of listings given harmless feedback.
    await learnOwnMarkup();
    for (const [slug, action] of [['plain-rejected', 'reject'], ['plain-changes', 'request_changes']] as const) {
      expect((await web.request(`/admin/listings/${slug}/decisions`, { form: { _csrf: csrf, action, from: 'queue', feedback: 'Plain feedback.' } })).status).toBe(303);
      const base = await watchedTab({ signedIn: true });
      for (const url of [`/dashboard/listings/${slug}`, `/admin/listings/${slug}`, '/dashboard']) {
        await base.page.goto(`${stack.baseUrl}${url}`);
        for (const m of await markupOf(base.page)) ownMarkup!.add(m);
      }
    }
    const decided = Array.from({ length: N }, (_, i) => i).filter((i) => i % 3 !== 0);
    const pages = await checkPages([...decided.flatMap((i) => [`/dashboard/listings/xss-p${i}`, `/admin/listings/xss-p${i}`]), '/dashboard']);
    for (const i of decided) {
      for (const url of [`/dashboard/listings/xss-p${i}`, `/admin/listings/xss-p${i}`]) expectShown(pages.get(url)!, [feedback(i).replace(/\r\n?/g, '\n')], url);
    }
    expect(parser!.ran).toEqual([]);
    expect(w.ran).toEqual([]);
    expect(w.errors()).toEqual([]);
  }, 120_000);
});

/** Runs `work` over the items in `lanes` lanes at once; each call learns its lane. */
async function inParallel<T>(items: T[], lanes: number, work: (item: T, lane: number) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item, lane);
    }),
  );
}

/** A screenshot of what the window shows (a whole page of 288 listings takes long to draw), kept as screenshot() keeps them. */
async function viewportShot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(path.dirname(projectPath('package.json')), 'test-artifacts', 'screenshots', `${name}.png`) });
}

/** A served Product holds each field as the import line sent it; the description only the allow-list. */
function expectServedAsSent(product: Json, line: Line): void {
  expect(product.logo, `${String(line.slug)}.logo`).toBe(line.logo === undefined ? null : asUrl(line.logo as string));
  for (const key of ['name', 'punchline', 'highlights', 'ideal_for', 'faq'] as const) {
    expect(product[key], `${String(line.slug)}.${key}`).toEqual(trimDeep(line[key]));
  }
  // An address is kept as sent, less the tabs and line breaks every URL parser drops.
  expect(product.website, `${String(line.slug)}.website`).toBe(asUrl(line.website as string));
  const promo = line.promo as Json;
  expect(product.promo).toEqual({ code: String(promo.code).trim(), discount: String(promo.discount).trim(), url: asUrl(promo.url as string), expires_at: null });
  expectDescriptionAllowed(product.description as string);
}

/** An address as a browser requests it: parsed, without its fragment. */
function withoutFragment(address: string): string {
  const url = new URL(address);
  url.hash = '';
  return url.href;
}

function asUrl(sent: string): string {
  return sent.trim().replace(/[\t\n\r]/g, '');
}

function trimDeep(value: unknown): unknown {
  if (typeof value === 'string') return value.trim();
  if (Array.isArray(value)) return value.map(trimDeep);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, trimDeep(v)]));
  return value;
}

/** A served description: only allow-listed elements, links with an http(s) or mailto href and our own rel and target. */
function expectDescriptionAllowed(html: string): void {
  const page = parsePage(`<div id="d">${html}</div>`);
  const root = page.byId('d')!;
  const elements: Element[] = [];
  const walk = (node: Element) => {
    for (const child of node.children) {
      if (child.type === 'tag' || child.type === 'script' || child.type === 'style') {
        elements.push(child as Element);
        walk(child as Element);
      } else if (child.type === 'comment' || child.type === 'cdata' || child.type === 'directive') {
        throw new Error(`a ${child.type} in a description: ${html.slice(0, 200)}`);
      }
    }
  };
  walk(root);
  for (const el of elements) {
    expect(DESCRIPTION_ALLOWED_TAGS as readonly string[], html.slice(0, 200)).toContain(el.name);
    for (const [attr, value] of Object.entries(el.attribs)) {
      const ok = el.name === 'a' && (attr === 'href' ? /^(https?:\/\/[^/]|mailto:)/i.test(value) : attr === 'rel' ? value === DESCRIPTION_LINK_REL : attr === 'target' && value === DESCRIPTION_LINK_TARGET);
      expect(ok, `<${el.name} ${attr}="${value}"> in ${html.slice(0, 200)}`).toBe(true);
    }
  }
}
