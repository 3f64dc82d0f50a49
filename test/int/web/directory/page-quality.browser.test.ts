import { createRequire } from 'node:module';
import type { AxeResults, RunOptions } from 'axe-core';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeInBrowser, screenshot } from '../../../helpers/browser.ts';
import { startTestStack, type TestStack } from '../../../helpers/stack.ts';

/**
 * Every kind of public page, at a desktop and a phone width, held to what can be measured from
 * outside: axe-core finds no serious or critical accessibility violation, the page is no wider
 * than the window, and the page logs no error and asks for nothing that fails. Each page is
 * visited twice: once with its Content-Security-Policy bypassed so axe-core can be injected, and
 * once with the policy enforced, for the console, the requests, the width and a screenshot
 * (test-artifacts/screenshots/page-<name>-<width>.png).
 */

const AXE_PATH = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** WCAG 2.0, 2.1 and 2.2 at levels A and AA, and axe's best practices. */
const AXE_OPTIONS: RunOptions = {
  runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
  resultTypes: ['violations'],
};

const WIDTHS = [1280, 390] as const;

interface PageUnderTest {
  name: string;
  path: string;
  status: number;
}

/** The fixture catalog's pages (test/helpers/fixtures.ts). */
const PAGES: PageUnderTest[] = [
  { name: 'home', path: '/', status: 200 },
  { name: 'search', path: '/search?q=forge', status: 200 },
  { name: 'search-bad-page', path: '/search?q=forge&page=999', status: 400 },
  { name: 'search-refused', path: '/search?limit=0', status: 400 },
  { name: 'category', path: '/categories/design', status: 200 },
  // premium, with a valid promo, a profile, a logo and a cover
  { name: 'listing-premium', path: '/products/pixel-forge', status: 200 },
  // free, with an HTML description
  { name: 'listing-free', path: '/products/query-pilot', status: 200 },
  { name: 'not-found', path: '/products/no-such-thing', status: 404 },
  { name: 'signin', path: '/signin', status: 200 },
  { name: 'api-docs', path: '/api/v1/docs', status: 200 },
];

/** One line per serious or critical violation: what is wrong, where, and how to fix it. */
function seriousViolations(results: AxeResults): string[] {
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) =>
      v.nodes.map((node) => `${v.id} (${v.impact}): ${v.help} at ${node.target.join(' ')}: ${node.failureSummary?.replace(/\s+/g, ' ') ?? ''} (${v.helpUrl})`),
    );
}

async function runAxe(page: Page): Promise<AxeResults> {
  await page.addScriptTag({ path: AXE_PATH });
  return page.evaluate(
    (options) => (window as unknown as { axe: { run(context: Document, options: RunOptions): Promise<AxeResults> } }).axe.run(document, options),
    AXE_OPTIONS,
  );
}

interface Trouble {
  /** Console errors, but Chromium's note that the document itself answered with the status it means. */
  consoleErrors: string[];
  /** The page's own resources that failed or were answered with 400 or more. */
  failedRequests: string[];
}

/** Watches the page's console and requests from now on; `status` is the document's own. */
function watch(page: Page, url: string, status: number): Trouble {
  const trouble: Trouble = { consoleErrors: [], failedRequests: [] };
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const own = message.location().url === url && message.text().startsWith(`Failed to load resource: the server responded with a status of ${status} `);
    if (!own) trouble.consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('requestfailed', (request) => trouble.failedRequests.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText ?? 'failed'}`));
  page.on('response', (response) => {
    const request = response.request();
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) return;
    if (response.status() >= 400) trouble.failedRequests.push(`${request.method()} ${response.url()}: ${response.status()}`);
  });
  return trouble;
}

/**
 * A failure for each icon the page links (`rel="icon"`, `rel="apple-touch-icon"`; else
 * /favicon.ico, which a browser asks for instead) that does not answer with an image type. Chromium's
 * own requests for them never reach the test (the harness routes requests, which keeps Chromium
 * from asking), so the test asks in its place.
 */
async function missingIcon(page: Page): Promise<string[]> {
  const icons = await page.evaluate(() => {
    const linked = Array.from(document.querySelectorAll<HTMLLinkElement>('link[rel~="icon"], link[rel="apple-touch-icon"]')).map((l) => l.href);
    return linked.length > 0 ? linked : [new URL('/favicon.ico', location.href).href];
  });
  const missing: string[] = [];
  for (const icon of icons) {
    // An icon in the page itself (the API reference's empty one) asks for nothing.
    if (icon.startsWith('data:')) continue;
    const res = await page.request.get(icon);
    const type = res.headers()['content-type'] ?? '';
    if (res.status() >= 400 || !type.startsWith('image/')) missing.push(`GET ${icon} (the page's icon): ${res.status()} ${type}`);
  }
  return missing;
}

describeInBrowser('page quality: accessibility, width, console and requests', (browser) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ env: { SITE_URL: '', RATE_LIMIT_PAGES_PER_MIN: '10000', RATE_LIMIT_SEARCH_PER_MIN: '10000', RATE_LIMIT_OTHER_PER_MIN: '10000' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('the checks notice what they look for', async () => {
    // Guards the tests below: a picture without a text alternative asked from a missing address,
    // and a box wider than the window, must show in each check, or a pass would prove nothing.
    const tab = await browser.newTab({ bypassCSP: true });
    const { page } = tab;
    await page.setViewportSize({ width: 390, height: 800 });
    const url = `${stack.baseUrl}/`;
    const trouble = watch(page, url, 200);
    await page.goto(url);
    await page.evaluate(() => {
      document.body.append(Object.assign(document.createElement('img'), { src: '/no-such-image.png', width: 10, height: 10 }));
      document.body.append(Object.assign(document.createElement('div'), { style: 'width: 600px; height: 1px' }));
    });
    await expect.poll(() => trouble.failedRequests).toEqual([`GET ${stack.baseUrl}/no-such-image.png: 404`]);
    await expect.poll(() => trouble.consoleErrors.length).toBe(1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeGreaterThan(390);
    expect(seriousViolations(await runAxe(page)).map((v) => v.split(' ')[0])).toContain('image-alt');
  });

  for (const target of PAGES) {
    for (const width of WIDTHS) {
      it(`${target.name} (${target.path}) at ${width} px`, async () => {
        const url = `${stack.baseUrl}${target.path}`;

        const axeTab = await browser.newTab({ bypassCSP: true });
        await axeTab.page.setViewportSize({ width, height: 800 });
        expect((await axeTab.page.goto(url))?.status()).toBe(target.status);
        expect(seriousViolations(await runAxe(axeTab.page))).toEqual([]);

        const tab = await browser.newTab();
        const { page } = tab;
        await page.setViewportSize({ width, height: 800 });
        const trouble = watch(page, url, target.status);
        expect((await page.goto(url))?.status()).toBe(target.status);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
        // What the page asks for after its load event is still watched while the screenshot is taken.
        await screenshot(page, `page-${target.name}-${width}`);
        trouble.failedRequests.push(...(await missingIcon(page)));
        expect({ ...trouble, pageErrors: tab.pageErrors, cspViolations: tab.cspViolations }).toEqual({
          consoleErrors: [],
          failedRequests: [],
          pageErrors: [],
          cspViolations: [],
        });
      });
    }
  }
});
