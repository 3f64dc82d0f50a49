import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { atomFeed, type AtomEntry } from '../../../../src/web/directory/atom.ts';
import { buildSitemap, isoDateTime, SITEMAP_LIMITS, type SitemapUrl } from '../../../../src/web/directory/sitemap.ts';
import { xmlEscape } from '../../../../src/web/directory/xml.ts';
import { childNamed, childrenNamed, parseXml, textOf } from '../../../helpers/xml.ts';

/** The hand-written XML of the sitemap and the feeds, read back by a strict XML parser. */

const wrap = (value: string) => `<?xml version="1.0"?><r a="${xmlEscape(value)}">${xmlEscape(value)}</r>`;

describe('xmlEscape', () => {
  it('escapes the five characters of markup, in text and in attributes', () => {
    expect(xmlEscape(`<script>&"'</script>]]>`)).toBe('&lt;script&gt;&amp;&quot;&apos;&lt;/script&gt;]]&gt;');
    const hostile = `</r><r x="1">&amp; ' " ]]> <!-- -->`;
    const r = parseXml(wrap(hostile));
    expect(r.text).toBe(hostile);
    expect(r.attrs.a).toBe(hostile);
  });

  it('leaves plain values as they are, and keeps any character XML allows', () => {
    expect(xmlEscape('https://catalog.test/products/pixel-forge')).toBe('https://catalog.test/products/pixel-forge');
    const text = 'Café — 日本語 😀 tab\there';
    expect(parseXml(wrap(text)).text).toBe(text);
  });

  it('drops the characters XML 1.0 forbids (which no escape can make well-formed)', () => {
    expect(xmlEscape('a\u0000b\u0001c\u001fd\ufffee\uffffg')).toBe('abcdeg');
    // A lone surrogate is dropped; a pair (an emoji) is kept.
    expect(xmlEscape('x\ud800y\udc00z😀')).toBe('xyz😀');
  });

  it('always gives well-formed XML whose text is the input less forbidden characters', () => {
    const allowed = /[\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const kept = [...s].filter((c) => allowed.test(c)).join('');
        const r = parseXml(wrap(s));
        // A parser turns a carriage return in text into a newline, and in an attribute into a space.
        expect(r.text).toBe(kept.replace(/\r\n?/g, '\n'));
        expect(r.attrs.a).toBe(kept.replace(/\r\n|[\r\n\t]/g, ' '));
      }),
      { numRuns: 100 },
    );
  });
});

const urls = (n: number): SitemapUrl[] => Array.from({ length: n }, (_, i) => ({ loc: `https://catalog.test/products/p-${i}`, lastmod: '2026-01-02T03:04:05.000Z' }));
const partUrl = (n: number) => `https://catalog.test/sitemaps/${n}.xml`;

function locs(xml: string): string[] {
  const set = parseXml(xml);
  expect(set.name).toBe('urlset');
  expect(set.ns).toBe('http://www.sitemaps.org/schemas/sitemap/0.9');
  return childrenNamed(set, 'url').map((u) => textOf(u, 'loc'));
}

describe('buildSitemap', () => {
  it('writes every URL in one urlset, lastmod when known', () => {
    const built = buildSitemap([{ loc: 'https://catalog.test/' }, ...urls(2)], partUrl);
    expect(built.kind).toBe('urlset');
    if (built.kind !== 'urlset') return;
    const set = parseXml(built.file);
    const [home, first] = childrenNamed(set, 'url');
    expect(childrenNamed(home!, 'lastmod')).toEqual([]);
    expect(textOf(first!, 'lastmod')).toBe('2026-01-02T03:04:05.000Z');
    expect(locs(built.file)).toEqual(['https://catalog.test/', 'https://catalog.test/products/p-0', 'https://catalog.test/products/p-1']);
  });

  it('an empty catalog is an empty urlset', () => {
    const built = buildSitemap([], partUrl);
    expect(built.kind === 'urlset' && locs(built.file)).toEqual([]);
  });

  it('exactly the URL limit is one file; one more makes an index of parts within the limit', () => {
    const limits = { maxUrls: 3, maxBytes: SITEMAP_LIMITS.maxBytes };
    expect(buildSitemap(urls(3), partUrl, limits).kind).toBe('urlset');
    const built = buildSitemap(urls(7), partUrl, limits);
    expect(built.kind).toBe('index');
    if (built.kind !== 'index') return;
    const index = parseXml(built.index);
    expect(index.name).toBe('sitemapindex');
    expect(index.ns).toBe('http://www.sitemaps.org/schemas/sitemap/0.9');
    expect(childrenNamed(index, 'sitemap').map((s) => textOf(s, 'loc'))).toEqual([partUrl(1), partUrl(2), partUrl(3)]);
    expect(built.parts.map((p) => locs(p).length)).toEqual([3, 3, 1]);
    expect(built.parts.flatMap(locs)).toEqual(urls(7).map((u) => u.loc));
  });

  it('a file is full when one more URL would pass the byte limit', () => {
    const single = buildSitemap(urls(5), partUrl);
    if (single.kind !== 'urlset') throw new Error('expected one file');
    const size = Buffer.byteLength(single.file);
    expect(buildSitemap(urls(5), partUrl, { maxUrls: 50_000, maxBytes: size }).kind).toBe('urlset');
    const split = buildSitemap(urls(5), partUrl, { maxUrls: 50_000, maxBytes: size - 1 });
    expect(split.kind).toBe('index');
    if (split.kind !== 'index') return;
    expect(split.parts.map((p) => locs(p).length)).toEqual([4, 1]);
    for (const p of split.parts) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(size - 1);
  });

  it('escapes locations', () => {
    const built = buildSitemap([{ loc: 'https://catalog.test/search?q=a&tag=b' }], partUrl);
    expect(built.kind === 'urlset' && locs(built.file)).toEqual(['https://catalog.test/search?q=a&tag=b']);
  });
});

describe('isoDateTime', () => {
  it('writes a time exactly as toISOString does', () => {
    for (const ms of [0, -1, 1, 86_399_999, Date.parse('2026-10-20T12:00:00Z'), Date.parse('1969-12-31T23:59:59.999Z'), -62_198_755_200_000, 8.64e15, -8.64e15, 1.5]) {
      expect(isoDateTime(ms), String(ms)).toBe(new Date(ms).toISOString());
    }
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => isoDateTime(ms) === new Date(ms).toISOString()),
      { numRuns: 2000 },
    );
  });
});

describe('atomFeed', () => {
  const hostile = `<script>&"'</script>]]>\u0001`;
  const entry: AtomEntry = {
    id: 'urn:uuid:0a4f5f4e-6f0e-4b8e-9b1a-000000000001',
    title: hostile,
    link: 'https://catalog.test/products/x',
    published: '2026-01-02T03:04:05.000Z',
    updated: '2026-01-02T03:04:05.000Z',
    author: { name: hostile, uri: 'https://x.example/?a=1&b=2' },
    category: { term: 'design', label: hostile, scheme: 'https://catalog.test/categories/' },
    summary: hostile,
    contentHtml: '<p>Hi <strong>there</strong> &amp; <a href="https://x.example/?a=1&amp;b=2">link</a></p>',
  };

  it('is well-formed Atom with hostile text kept as text, and HTML content kept as escaped HTML', () => {
    const xml = atomFeed({
      id: 'https://catalog.test/feed.xml',
      title: hostile,
      updated: '2026-01-02T03:04:05.000Z',
      self: 'https://catalog.test/feed.xml',
      alternate: 'https://catalog.test/',
      author: { name: 'Product directory', uri: 'https://catalog.test/' },
      entries: [entry],
    });
    const feed = parseXml(xml);
    expect(feed.name).toBe('feed');
    expect(feed.ns).toBe('http://www.w3.org/2005/Atom');
    const asText = hostile.replace('\u0001', '');
    expect(childNamed(feed, 'title')).toMatchObject({ text: asText, attrs: { type: 'text' } });
    const e = childNamed(feed, 'entry');
    expect(childNamed(e, 'title').text).toBe(asText);
    expect(childNamed(e, 'summary').text).toBe(asText);
    expect(textOf(childNamed(e, 'author'), 'name')).toBe(asText);
    expect(textOf(childNamed(e, 'author'), 'uri')).toBe('https://x.example/?a=1&b=2');
    expect(childNamed(e, 'category').attrs).toEqual({ term: 'design', scheme: 'https://catalog.test/categories/', label: asText });
    expect(childNamed(e, 'content')).toMatchObject({ text: entry.contentHtml, attrs: { type: 'html' } });
  });
});
