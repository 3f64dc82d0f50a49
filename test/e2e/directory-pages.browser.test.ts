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
    const newest = page.locator('ul.product-list a');
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
    expect(await page.locator('ul.product-list a').allInnerTexts()).toEqual(['Pixel Forge', 'Type Scale']);
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
    expect(tab.offLoopback.sort()).toEqual(['https://cdn.example.com/pixel-forge/cover.png', 'https://cdn.example.com/pixel-forge/logo.png']);
  });

  it('the breadcrumbs back: the listing links its category, the brand links home', async () => {
    const tab = await browser.newTab();
    const { page } = tab;
    await page.goto(`${stack.baseUrl}/products/query-pilot`);
    await page.locator('p.facts').getByRole('link', { name: 'Developer Tools' }).click();
    await page.waitForURL(`${stack.baseUrl}/categories/developer-tools`);
    expect(await page.locator('ul.product-list a').allInnerTexts()).toEqual(['Query Pilot', 'Code Lantern', 'Deploy Kite']);
    await page.getByRole('link', { name: 'Product directory' }).click();
    await page.waitForURL(`${stack.baseUrl}/`);
    tab.expectClean();
    expect(tab.offLoopback).toEqual([]);
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
});
