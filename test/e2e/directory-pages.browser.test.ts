import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeInBrowser, screenshot } from '../helpers/browser.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/**
 * The directory pages in Chromium, as a visitor uses them: from the home page to a category, from
 * the category to a listing, by clicking links. The pages' Content-Security-Policy is enforced
 * by the browser, so a clean run shows the stylesheet loads and nothing on the pages is refused.
 */
describeInBrowser('the directory pages in a browser', (browser) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ env: { SITE_URL: '' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('home → category → listing, styled, with no console error and no CSP violation', async () => {
    const tab = await browser.newTab();
    const { page } = tab;

    const home = await page.goto(`${stack.baseUrl}/`);
    expect(home?.status()).toBe(200);
    expect(await page.title()).toBe('Product directory');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Product directory');
    expect(await page.getByRole('link', { name: 'Sign in' }).getAttribute('href')).toBe('/signin');
    const newest = page.locator('ul.product-list .product-card-title a');
    expect(await newest.allInnerTexts()).toEqual(['Pixel Forge', 'Type Scale', 'Query Pilot', 'Code Lantern', 'Deploy Kite', 'Note Garden', 'Nullish Widget']);
    // The stylesheet applied: system font, and the header's surface colour.
    expect(await page.evaluate('getComputedStyle(document.body).fontFamily')).toContain('system-ui');
    expect(await page.evaluate("getComputedStyle(document.querySelector('.site-header')).borderBottomStyle")).toBe('solid');
    await screenshot(page, 'directory-home');

    // The header's Categories link leads to the home page's list.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Categories' }).click();
    await page.waitForURL(`${stack.baseUrl}/#categories`);
    await page.locator('#categories + ul').getByRole('link', { name: 'Design' }).click();
    await page.waitForURL(`${stack.baseUrl}/categories/design`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Design');
    expect(await page.locator('p.lead').innerText()).toBe('2 resources, newest first');
    expect(await page.locator('ul.product-list .product-card-title a').allInnerTexts()).toEqual(['Pixel Forge', 'Type Scale']);
    await screenshot(page, 'directory-category');

    await page.getByRole('link', { name: 'Pixel Forge' }).click();
    await page.waitForURL(`${stack.baseUrl}/products/pixel-forge`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Pixel Forge');
    expect(await page.getByText('Generate crisp illustrations from a sketch').first().isVisible()).toBe(true);
    expect(await page.getByRole('link', { name: 'Visit Pixel Forge' }).getAttribute('href')).toBe('https://pixelforge.example.com');
    expect(await page.locator('.promo').innerText()).toContain('FORGE20');
    expect(await page.getByRole('heading', { name: 'Highlights' }).isVisible()).toBe(true);
    expect(await page.locator('.description strong').innerText()).toBe('vector illustrations');
    await screenshot(page, 'directory-listing');

    tab.expectClean();
    // The listing's logo and cover live on a CDN: asked for, answered locally, never fetched.
    expect([...new Set(tab.offLoopback)].sort()).toEqual(['https://cdn.example.com/pixel-forge/cover.png', 'https://cdn.example.com/pixel-forge/logo.png']);
  });

  it('the breadcrumbs back: the listing links its category, the brand links home', async () => {
    const tab = await browser.newTab();
    const { page } = tab;
    await page.goto(`${stack.baseUrl}/products/query-pilot`);
    await page.locator('p.facts').getByRole('link', { name: 'Developer Tools' }).click();
    await page.waitForURL(`${stack.baseUrl}/categories/developer-tools`);
    expect(await page.locator('ul.product-list .product-card-title a').allInnerTexts()).toEqual(['Query Pilot', 'Code Lantern', 'Deploy Kite']);
    await page.getByRole('link', { name: 'Product directory' }).click();
    await page.waitForURL(`${stack.baseUrl}/`);
    tab.expectClean();
    // The home page may ask for the newest listing's logo before the test ends (it is on the CDN,
    // answered locally); nothing else leaves loopback.
    expect(tab.offLoopback.filter((url) => url !== 'https://cdn.example.com/pixel-forge/logo.png')).toEqual([]);
  });

  it('searching from the header works with JavaScript off: a plain form, results from the server', async () => {
    const tab = await browser.newTab({ javaScriptEnabled: false });
    const { page } = tab;
    await page.goto(`${stack.baseUrl}/products/pixel-forge`);
    await page.getByRole('searchbox', { name: 'Search listings' }).fill('scale');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(`${stack.baseUrl}/search?q=scale`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Search results');
    expect(await page.locator('ul.product-list .product-card-title a').allInnerTexts()).toEqual(['Type Scale']);
    await page.getByRole('navigation', { name: 'Categories' }).getByRole('link', { name: 'Productivity' }).click();
    await page.waitForURL(`${stack.baseUrl}/search?q=scale&category=productivity`);
    expect(await page.getByRole('status').innerText()).toBe('No live listing matches.');
    await page.getByRole('link', { name: 'Remove the filter Words: “scale”' }).click();
    await page.waitForURL(`${stack.baseUrl}/search?category=productivity`);
    expect(await page.locator('ul.product-list .product-card-title a').allInnerTexts()).toEqual(['Note Garden']);
    await screenshot(page, 'directory-search-no-script');
    tab.expectClean();
  });

  it('with JavaScript on, the search page follows the box as one types, without leaving the page', async () => {
    const tab = await browser.newTab();
    const { page } = tab;
    await page.goto(`${stack.baseUrl}/search`);
    expect(await page.locator('ul.product-list .product-card-title a').count()).toBe(7);
    // Marks this document: a navigation would lose the mark.
    await page.evaluate('window.__sameDocument = true');
    await page.getByRole('searchbox', { name: 'Search listings' }).pressSequentially('pilot', { delay: 30 });
    await expect.poll(() => page.locator('ul.product-list .product-card-title a').allInnerTexts()).toEqual(['Query Pilot']);
    await expect.poll(() => page.url()).toBe(`${stack.baseUrl}/search?q=pilot`);
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    expect(await page.title()).toBe('Search: pilot · Product directory');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Search results');
    // The categories to narrow by keep the words typed; a screen reader hears the new count.
    expect(await page.getByRole('navigation', { name: 'Categories' }).getByRole('link', { name: 'Design' }).getAttribute('href')).toBe('/search?q=pilot&category=design');
    expect(await page.locator('#search-announce').textContent()).toBe('1 listing, newest first');
    await screenshot(page, 'directory-search-live');
    tab.expectClean();
    // Words the search would refuse are not sent as one types; the form sends them, and the page
    // says why, with the box, the filters and the categories still there.
    await page.getByRole('searchbox', { name: 'Search listings' }).fill('x'.repeat(101));
    await page.waitForTimeout(600);
    expect(await page.locator('ul.product-list .product-card-title a').allInnerTexts()).toEqual(['Query Pilot']);
    await page.getByRole('searchbox', { name: 'Search listings' }).press('Enter');
    await page.waitForURL(/\/search\?q=x{101}$/);
    expect(await page.getByRole('alert').innerText()).toContain('q: ');
    expect(await page.getByRole('searchbox', { name: 'Search listings' }).inputValue()).toBe('x'.repeat(101));
  });

  it('the harness notices what the policy refuses', async () => {
    // Guards the assertions above: an inline style, which the pages' policy forbids, must show
    // up as a violation and a console error, or "no violation" would prove nothing.
    const tab = await browser.newTab();
    const { page } = tab;
    await page.goto(`${stack.baseUrl}/`);
    await page.evaluate("document.head.appendChild(Object.assign(document.createElement('style'), { textContent: 'body { color: red }' }))");
    await expect.poll(() => tab.cspViolations.map((v) => v.directive)).toContain('style-src-elem');
    await expect.poll(() => tab.consoleErrors.some((m) => m.includes('Content Security Policy'))).toBe(true);
    expect(() => tab.expectClean()).toThrow();
  });

  it('an inline script is refused, whatever page it would be injected into', async () => {
    const tab = await browser.newTab();
    const { page } = tab;
    await page.goto(`${stack.baseUrl}/search?q=forge`);
    await page.evaluate("document.body.appendChild(Object.assign(document.createElement('script'), { textContent: 'window.__ran = true' }))");
    await expect.poll(() => tab.cspViolations.map((v) => v.directive)).toContain('script-src-elem');
    expect(await page.evaluate('window.__ran === true')).toBe(false);
  });
});
