import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVED_ICONS } from '../../../src/contract/service-identity.ts';
import { projectPath } from '../../../src/util/project-file.ts';
import { parsePage } from '../../helpers/html.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { parseXml, type XmlElement } from '../../helpers/xml.ts';

/**
 * The service's icon over real HTTP: /icon.svg and the PNGs at /icons/…, as
 * src/contract/service-identity.ts lists them, with their caching and security headers, and the
 * pages' head linking them.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ seed: false });
});
afterAll(async () => {
  await stack?.stop();
});

const get = (p: string, headers: Record<string, string> = {}) => fetch(`${stack.baseUrl}${p}`, { headers });
const committed = (p: string) => readFileSync(projectPath(`src/web/assets/icons/${path.posix.basename(p)}`));

function elements(root: XmlElement): XmlElement[] {
  return [root, ...root.children.flatMap(elements)];
}

describe('the icons', () => {
  for (const icon of SERVED_ICONS) {
    it(`${icon.path}: 200 with its type, bytes, caching and security headers; 304 for its ETag`, async () => {
      const res = await get(icon.path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(icon.mimeType);
      const body = Buffer.from(await res.arrayBuffer());
      expect(body.equals(committed(icon.path))).toBe(true);
      expect(res.headers.get('content-length')).toBe(String(body.length));
      expect(res.headers.get('cache-control')).toBe('public, max-age=86400');
      const etag = res.headers.get('etag');
      // Strong: no W/ prefix.
      expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
      // Not counted against any budget.
      expect(res.headers.get('ratelimit')).toBeNull();
      expect(res.headers.get('ratelimit-policy')).toBeNull();
      if (icon.mimeType === 'image/svg+xml') {
        // One policy, the icon's own: the pages' policy is replaced, not sent beside it.
        expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'");
      }

      for (const ifNoneMatch of [etag!, `W/${etag!}`, `"other", ${etag!}`, '*']) {
        const again = await get(icon.path, { 'if-none-match': ifNoneMatch });
        expect(again.status, ifNoneMatch).toBe(304);
        expect(await again.text()).toBe('');
        expect(again.headers.get('etag')).toBe(etag);
        expect(again.headers.get('cache-control')).toBe('public, max-age=86400');
      }
      const stale = await get(icon.path, { 'if-none-match': '"0000000000000000"' });
      expect(stale.status).toBe(200);
      await stale.arrayBuffer();
    });
  }

  it('a PNG is of its declared size', async () => {
    for (const icon of SERVED_ICONS.filter((i) => i.mimeType === 'image/png')) {
      const png = Buffer.from(await (await get(icon.path)).arrayBuffer());
      expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
      expect(`${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`, icon.path).toBe(icon.sizes[0]);
    }
  });

  it('the SVG parses as XML and holds no script', async () => {
    const text = await (await get('/icon.svg')).text();
    const root = parseXml(text);
    expect(root).toMatchObject({ name: 'svg', ns: 'http://www.w3.org/2000/svg' });
    const all = elements(root);
    expect(all.map((e) => e.name)).not.toContain('script');
    for (const el of all) for (const name of Object.keys(el.attrs)) expect(name, `<${el.name} ${name}>`).not.toMatch(/^on/i);
  });

  it('HEAD answers the same headers without a body', async () => {
    const res = await fetch(`${stack.baseUrl}/icon.svg`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{16}"$/);
    expect(await res.text()).toBe('');
  });

  it('pages link the SVG, a PNG and the touch icon, and no empty data: icon', async () => {
    for (const p of ['/', '/signin', '/products/no-such-thing']) {
      const html = await (await get(p)).text();
      const page = parsePage(html);
      const links = page.all('link').map((l) => ({ rel: page.attr(l, 'rel'), href: page.attr(l, 'href'), type: page.attr(l, 'type'), sizes: page.attr(l, 'sizes') }));
      const icons = links.filter((l) => l.rel === 'icon' || l.rel === 'apple-touch-icon');
      expect(icons, p).toEqual([
        { rel: 'icon', href: '/icons/icon-48.png', type: 'image/png', sizes: '48x48' },
        { rel: 'icon', href: '/icon.svg', type: 'image/svg+xml', sizes: undefined },
        { rel: 'apple-touch-icon', href: '/icons/icon-192.png', type: undefined, sizes: undefined },
      ]);
      expect(html).not.toContain('data:,');
    }
  });

  it("the pages' policy allows images of this origin", async () => {
    const csp = (await get('/')).headers.get('content-security-policy') ?? '';
    const imgSrc = csp.split(';').find((d) => d.trim().startsWith('img-src'));
    expect(imgSrc?.split(/\s+/)).toContain("'self'");
  });
});
