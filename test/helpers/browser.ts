import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page, type Route } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../src/util/project-file.ts';

/**
 * Pages in a real browser: Debian's Chromium driven by playwright-core.
 *
 * Usage (see test/e2e/directory-pages.browser.test.ts):
 *
 *   describeInBrowser('the directory', (browser) => {
 *     it('opens a listing', async () => {
 *       const tab = await browser.newTab();
 *       await tab.page.goto(`${baseUrl}/products/pixel-forge`);
 *       await expect(tab.page.getByRole('heading', { level: 1 })).toHaveText(...)   // or read text
 *       await screenshot(tab.page, 'listing');
 *       tab.expectClean();   // no console error, page error or CSP violation
 *     });
 *   });
 *
 * Each test gets a fresh context (cookies, storage, cache), closed after the test; the browser
 * is launched once per file with a fresh profile and closed after it.
 *
 * The browser may only talk to loopback. Requests elsewhere (a listing's logo on a CDN, say)
 * never leave the machine: images are answered with a blank PNG so pages render as they
 * would, anything else is refused, and both are listed in `tab.offLoopback`. Underneath, every
 * other address goes to a proxy on a closed loopback port and host names resolve to nothing,
 * so even Chromium's own background requests cannot reach the network.
 */

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const SCREENSHOT_DIR = path.join(path.dirname(projectPath('package.json')), 'test-artifacts', 'screenshots');

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-domain-reliability',
  '--disable-client-side-phishing-detection',
  '--no-pings',
  // Nothing but loopback: see above. Chromium sends loopback addresses past the proxy itself.
  '--proxy-server=http://127.0.0.1:9',
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1 , EXCLUDE [::1]',
];

/** A 1×1 transparent PNG, the answer to every off-loopback image request. */
const BLANK_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

/** Reports CSP violations to the test. Injected by the browser's debugging protocol, which CSP does not govern. */
const CSP_LISTENER = `document.addEventListener('securitypolicyviolation', (e) => {
  window.__reportCspViolation({ directive: e.effectiveDirective, blockedUri: e.blockedURI, sourceFile: e.sourceFile, line: e.lineNumber, sample: e.sample });
});`;

interface CspViolation {
  directive: string;
  blockedUri: string;
  sourceFile: string;
  line: number;
  sample: string;
}

export interface Tab {
  readonly page: Page;
  readonly context: BrowserContext;
  /** Console messages of type error (failed loads, CSP refusals and script errors among them). */
  readonly consoleErrors: string[];
  /** Uncaught exceptions in the page. */
  readonly pageErrors: string[];
  readonly cspViolations: CspViolation[];
  /** URLs the page asked for beyond loopback, answered locally or refused. */
  readonly offLoopback: string[];
  /** Fails the test when the page logged an error, threw, or broke its Content-Security-Policy. */
  expectClean(): void;
}

export interface BrowserHarness {
  /** The browser of this file; launched before its first test. */
  browser(): Browser;
  /** A fresh context and page for this test, closed after it. */
  newTab(opts?: TabOptions): Promise<Tab>;
}

/** Why browser tests cannot run here, or undefined when they can. */
function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  return `Chromium is not installed at ${CHROMIUM_PATH}: run \`apt-get install -y chromium\` (as root), or set CHROMIUM_PATH`;
}

function isCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci !== 'false';
}

async function launchBrowser(): Promise<Browser> {
  const missing = chromiumMissing();
  if (missing) throw new Error(missing);
  // launch() gives the browser a fresh temporary profile and removes it on close.
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

function isLoopback(url: string): boolean {
  let host: string;
  try {
    const u = new URL(url);
    if (u.protocol === 'data:' || u.protocol === 'about:' || u.protocol === 'blob:') return true;
    host = u.hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

interface TabOptions {
  /** false: the page runs no script at all, as for a visitor who turned JavaScript off. */
  javaScriptEnabled?: boolean;
  /**
   * true: the page's Content-Security-Policy is not applied, so a test can inject a script of
   * its own (axe-core). Such a tab proves nothing about the policy: check it in another.
   */
  bypassCSP?: boolean;
}

async function openTab(browser: Browser, opts: TabOptions = {}): Promise<Tab> {
  const context = await browser.newContext({ javaScriptEnabled: opts.javaScriptEnabled ?? true, bypassCSP: opts.bypassCSP ?? false });
  context.setDefaultTimeout(15_000);
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];
  const cspViolations: CspViolation[] = [];
  const offLoopback: string[] = [];

  await context.route(
    (url) => !isLoopback(url.href),
    async (route: Route) => {
      const request = route.request();
      offLoopback.push(request.url());
      if (request.resourceType() === 'image') await route.fulfill({ status: 200, contentType: 'image/png', body: BLANK_PNG });
      else await route.abort('blockedbyclient');
    },
  );
  await context.exposeBinding('__reportCspViolation', (_source, violation: CspViolation) => {
    cspViolations.push(violation);
  });
  await context.addInitScript({ content: CSP_LISTENER });

  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));

  return {
    page,
    context,
    consoleErrors,
    pageErrors,
    cspViolations,
    offLoopback,
    expectClean() {
      expect({ consoleErrors, pageErrors, cspViolations }).toEqual({ consoleErrors: [], pageErrors: [], cspViolations: [] });
    },
  };
}

/** Saves a full-page PNG as test-artifacts/screenshots/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const file = path.join(SCREENSHOT_DIR, `${name.replace(/[^a-zA-Z0-9._-]+/g, '-')}.png`);
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Launches the browser before the scope's tests, closes each test's tab after it and the browser at the end. */
function useBrowser(): BrowserHarness {
  let browser: Browser | undefined;
  const open: Tab[] = [];
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterEach(async () => {
    for (const tab of open.splice(0)) await tab.context.close();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    browser() {
      if (!browser) throw new Error('the browser is not running: call this inside a test');
      return browser;
    },
    async newTab(opts?: TabOptions) {
      const tab = await openTab(this.browser(), opts);
      open.push(tab);
      return tab;
    },
  };
}

/**
 * A describe block whose tests run in Chromium. Without Chromium the block fails under CI (a
 * browser test silently skipped in CI would prove nothing) and is skipped elsewhere, saying
 * so in one line.
 */
export function describeInBrowser(name: string, body: (browser: BrowserHarness) => void): void {
  const missing = chromiumMissing();
  if (!missing) {
    describe(name, () => body(useBrowser()));
  } else if (isCi()) {
    describe(name, () => {
      it('needs Chromium', () => {
        throw new Error(missing);
      });
    });
  } else {
    console.warn(`[browser tests skipped] ${name}: ${missing}`);
    describe.skip(name, () => body(useBrowser()));
  }
}
