import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Category, Product } from '../../src/contract/schemas.ts';
import { contentSecurityPolicy } from '../../src/web/csp.ts';
import { ListingHead } from '../../src/web/directory/structured-data.tsx';
import { describeInBrowser, type Tab } from '../helpers/browser.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/**
 * The listing page's JSON-LD in Chromium, under the pages' Content-Security-Policy (which
 * allows no inline script): a `<script type="application/ld+json">` is a data block, so the
 * browser neither runs it nor reports a violation, and reads back the JSON that was meant, even
 * when a listing's text tries to close the element.
 */
describeInBrowser('structured data in a browser', (browser) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ env: { SITE_URL: '' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const csp = () => contentSecurityPolicy({ publicUrl: stack.service.config.publicUrl });
  const jsonLdIn = (tab: Tab) => tab.page.locator('script[type="application/ld+json"]').allTextContents();

  /** Serves `head` at a path of the service's own origin, with the pages' policy. */
  async function probe(tab: Tab, head: string): Promise<void> {
    const url = `${stack.baseUrl}/structured-data-probe`;
    await tab.page.route(url, (route) =>
      route.fulfill({
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': csp() },
        body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>probe</title>${head}</head><body><p>probe</p></body></html>`,
      }),
    );
    await tab.page.goto(url);
  }

  it('a data block is neither run nor refused, and its text is the JSON meant, whatever the listing says', async () => {
    const product = (await (await fetch(`${stack.baseUrl}/api/v1/products/pixel-forge`)).json()) as Product;
    const category = ((await (await fetch(`${stack.baseUrl}/api/v1/categories`)).json()) as { categories: Category[] }).categories.find((c) => c.slug === 'design');
    const name = `</script><script>window.__ran = 1</script><!-- \u2028 & -->`;
    const tab = await browser.newTab();
    await probe(tab, renderToString(h(ListingHead, { product: { ...product, name }, category, pageUrl: `${stack.baseUrl}/products/pixel-forge` })));
    const blocks = await jsonLdIn(tab);
    expect(blocks).toHaveLength(1);
    expect(JSON.parse(blocks[0]!)).toMatchObject({ '@type': 'SoftwareApplication', name, applicationCategory: 'Design' });
    expect(await tab.page.locator('script').count()).toBe(1);
    expect(await tab.page.evaluate('window.__ran')).toBeUndefined();
    tab.expectClean();
  });

  it('the same policy refuses an inline script: the check above can fail', async () => {
    const tab = await browser.newTab();
    await probe(tab, '<script>window.__ran = 1</script>');
    expect(await tab.page.evaluate('window.__ran')).toBeUndefined();
    await expect.poll(() => tab.cspViolations.map((v) => v.directive)).toContain('script-src-elem');
  });

  it('the listing page carries its JSON-LD and link previews, with no console error and no violation', async () => {
    const tab = await browser.newTab();
    const res = await tab.page.goto(`${stack.baseUrl}/products/pixel-forge`);
    expect(res?.status()).toBe(200);
    const blocks = await jsonLdIn(tab);
    expect(blocks).toHaveLength(1);
    const publicUrl = stack.service.config.publicUrl;
    expect(JSON.parse(blocks[0]!)).toEqual({
      '@context': 'https://schema.org',
      '@type': 'SoftwareApplication',
      name: 'Pixel Forge',
      description: 'Generate crisp illustrations from a sketch',
      url: `${publicUrl}/products/pixel-forge`,
      image: 'https://cdn.example.com/pixel-forge/cover.png',
      applicationCategory: 'Design',
      datePublished: '2026-10-20T12:00:00.000Z',
    });
    expect(await tab.page.locator('meta[property="og:url"]').getAttribute('content')).toBe(`${publicUrl}/products/pixel-forge`);
    expect(await tab.page.locator('meta[name="twitter:card"]').getAttribute('content')).toBe('summary_large_image');
    tab.expectClean();
  });
});
