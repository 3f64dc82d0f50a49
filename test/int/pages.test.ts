import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../helpers/stack.ts';
import { NOT_LIVE_SLUGS } from '../helpers/fixtures.ts';

/** The directory pages that the `url` of every product and category points to. */
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ env: { SITE_URL: '' } });
});
afterAll(async () => {
  await stack?.stop();
});

async function page(path: string) {
  const res = await fetch(`${stack.baseUrl}${path}`);
  return { res, html: await res.text() };
}

describe('directory pages', () => {
  it('every product url opens its listing page, which links back to the product site', async () => {
    const search = (await (await fetch(`${stack.baseUrl}/api/v1/search?limit=50`)).json()) as {
      products: Array<{ slug: string; name: string; url: string; website: string }>;
    };
    expect(search.products.length).toBeGreaterThan(0);
    for (const p of search.products) {
      // SITE_URL defaults to PUBLIC_URL, so the url names this service's page
      expect(p.url).toBe(`http://catalog.test/products/${p.slug}`);
      const { res, html } = await page(new URL(p.url).pathname);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(html).toContain(`<h1>${p.name}</h1>`);
      expect(html).toContain(`href="${p.website}"`);
    }
  });

  it('shows the premium profile and the promo as the API does', async () => {
    const { html } = await page('/products/pixel-forge');
    expect(html).toContain('Sketch to vector in seconds');
    expect(html).toContain('FORGE20');
    const free = await page('/products/type-scale');
    expect(free.html).not.toContain('Should not show');
    expect(free.html).not.toContain('OLD10');
  });

  it.each([...NOT_LIVE_SLUGS, 'no-such-listing'])('answers 404 for %s', async (slug) => {
    const { res, html } = await page(`/products/${slug}`);
    expect(res.status).toBe(404);
    expect(html).toContain(`No live listing has the slug &#39;${slug}&#39;`);
  });

  it('a category page lists its live listings newest first; an unknown category is 404', async () => {
    const { res, html } = await page('/categories/developer-tools');
    expect(res.status).toBe(200);
    const order = ['query-pilot', 'code-lantern', 'deploy-kite'].map((s) => html.indexOf(`/products/${s}"`));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(html).toContain('3 tools');
    expect((await page('/categories/empty-shelf')).html).toContain('No live listings here yet.');
    expect((await page('/categories/nope')).res.status).toBe(404);
  });

  it('escapes what it shows', async () => {
    await stack.db.pool.query(`UPDATE catalog.listings SET name = '<script>alert(1)</script> & Co' WHERE slug = 'deploy-kite'`);
    await stack.settle();
    const { html } = await page('/products/deploy-kite');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co');
    expect(html).not.toContain('<script>alert(1)');
  });

  it('the home page links the newest listings and every category', async () => {
    const { res, html } = await page('/');
    expect(res.status).toBe(200);
    expect(html).toContain('/products/pixel-forge');
    expect(html).toContain('/categories/empty-shelf');
  });
});
