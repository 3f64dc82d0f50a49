import type http from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { badgeCheck, badgeMarkup, FAVICON_MAX_BYTES, inspectSite } from '../../../src/sites/inspect-site.ts';
import { createSiteFetcher, type SiteFetcher } from '../../../src/sites/safe-fetch.ts';
import { SiteFetchError } from '../../../src/sites/site-fetch-error.ts';
import { startSite, tableResolver, watchSockets, type SocketWatch, type TestSite } from '../../helpers/site-network.ts';

/**
 * Inspecting makers' sites served from 127.0.0.1. Each host name (resolved by an injected table
 * to loopback) is a different "site" on one server, told apart by the Host header.
 */

const LISTING = 'https://directory.example/products/pixel-forge';
const HOSTS = ['pixel.test', 'nofav.test', 'softfav.test', 'bigfav.test', 'badge.test', 'nofollow.test', 'faq.test', 'broken.test'];
const resolver = tableResolver(Object.fromEntries(HOSTS.map((h) => [h, ['127.0.0.1']])));

let site: TestSite;
let watch: SocketWatch;
let fetcher: SiteFetcher;
let quick: SiteFetcher;

const ICO = Buffer.from([0, 0, 1, 0, 1, 0, 16, 16]);

function send(res: http.ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { 'content-type': type });
  res.end(body);
}

const PIXEL_HOME = `<!doctype html><html><head>
  <title>Pixel Forge</title>
  <meta name="description" content="Design tools for teams.">
  <meta property="og:image" content="../img/cover.png">
  <link rel="apple-touch-icon" href="/apple-touch-icon.png" sizes="180x180">
</head><body><h1>Pixel Forge</h1></body></html>`;

const FAQ_PAGE = `<html><head><title>FAQ</title>
<script type="application/ld+json">${JSON.stringify({
  '@context': 'https://schema.org',
  '@graph': [
    { '@type': 'Organization', name: 'Pixel Forge' },
    {
      '@type': 'FAQPage',
      mainEntity: [
        { '@type': 'Question', name: 'Is it free?', acceptedAnswer: { '@type': 'Answer', text: '\u003cp>Yes, \u003cb>for ever\u003c/b>.\u003c/p>' } },
        { '@type': 'Question', name: 'Does it sync?', acceptedAnswer: { '@type': 'Answer', text: 'Every minute.' } },
      ],
    },
  ],
})}</script></head><body></body></html>`;

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const host = (req.headers.host ?? '').split(':')[0];
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/favicon.ico') {
    if (host === 'pixel.test') return send(res, 200, 'image/x-icon', ICO);
    if (host === 'softfav.test') return send(res, 200, 'text/html', '<p>Not found, but 200</p>');
    if (host === 'bigfav.test') return send(res, 200, 'image/x-icon', Buffer.alloc(FAVICON_MAX_BYTES + 1));
    return send(res, 404, 'text/html', 'no');
  }
  switch (`${host}${path}`) {
    case 'pixel.test/':
      res.writeHead(301, { location: '/en/home' });
      return void res.end();
    case 'pixel.test/en/home':
    case 'nofav.test/':
    case 'softfav.test/':
    case 'bigfav.test/':
      return send(res, 200, 'text/html; charset=utf-8', PIXEL_HOME);
    case 'faq.test/':
      return send(res, 200, 'text/html', FAQ_PAGE);
    case 'badge.test/':
      return send(
        res,
        200,
        'text/html',
        `<html><body><footer>${badgeMarkup({ listingUrl: LISTING, badgeImageUrl: 'https://directory.example/badge/pixel-forge.svg', name: 'Directory' })}</footer></body></html>`,
      );
    case 'nofollow.test/':
      return send(res, 200, 'text/html', `<html><body><a rel="nofollow" href="${LISTING}">Listed</a></body></html>`);
    case 'broken.test/500':
      return send(res, 500, 'text/html', 'boom');
    case 'broken.test/hang':
      return;
    case 'broken.test/pdf':
      return send(res, 200, 'application/pdf', '%PDF');
    default:
      return send(res, 404, 'text/html', 'no');
  }
}

beforeAll(async () => {
  watch = watchSockets();
  site = await startSite(route);
  fetcher = createSiteFetcher({ allowLoopback: true, resolver });
  quick = createSiteFetcher({ allowLoopback: true, resolver, timeoutMs: 300 });
});

beforeEach(() => {
  watch.violations.length = 0;
});

afterEach(() => {
  expect(watch.violations).toEqual([]);
});

afterAll(async () => {
  await fetcher?.close();
  await quick?.close();
  await site?.close();
  watch?.restore();
});

const at = (host: string, path = '/') => `http://${host}:${site.port}${path}`;

describe('inspectSite', () => {
  it('reads the page after redirects, resolves og:image against the final URL, and adds /favicon.ico', async () => {
    const inspection = await inspectSite(at('pixel.test'), fetcher);
    expect(inspection).toEqual({
      url: at('pixel.test', '/en/home'),
      title: 'Pixel Forge',
      description: 'Design tools for teams.',
      cover: at('pixel.test', '/img/cover.png'),
      icons: [
        { url: at('pixel.test', '/apple-touch-icon.png'), rel: 'apple-touch-icon', sizes: '180x180', type: null },
        { url: at('pixel.test', '/favicon.ico'), rel: 'icon', sizes: null, type: 'image/x-icon' },
      ],
      faq: [],
    });
  });

  it('leaves /favicon.ico out when it is missing, not an image, or too big', async () => {
    for (const host of ['nofav.test', 'softfav.test', 'bigfav.test']) {
      const { icons } = await inspectSite(at(host), fetcher);
      expect(icons.map((i) => i.url), host).toEqual([at(host, '/apple-touch-icon.png')]);
    }
  });

  it('does not probe /favicon.ico when asked not to', async () => {
    const before = site.requests.length;
    const { icons } = await inspectSite(at('nofav.test'), fetcher, { probeFavicon: false });
    expect(icons).toHaveLength(1);
    expect(site.requests.slice(before)).toEqual(['/']);
  });

  it('reads the FAQ from JSON-LD in an @graph', async () => {
    const { faq } = await inspectSite(at('faq.test'), fetcher, { probeFavicon: false });
    expect(faq).toEqual([
      { question: 'Is it free?', answer: 'Yes, for ever.' },
      { question: 'Does it sync?', answer: 'Every minute.' },
    ]);
  });

  it('tells found and missing apart when given a listing URL', async () => {
    expect((await inspectSite(at('badge.test'), fetcher, { listingUrl: LISTING })).badge).toEqual({ status: 'found' });
    expect((await inspectSite(at('pixel.test'), fetcher, { listingUrl: LISTING })).badge).toMatchObject({ status: 'missing' });
    expect((await inspectSite(at('pixel.test'), fetcher)).badge).toBeUndefined();
  });

  it('throws SiteFetchError when the page cannot be read', async () => {
    await expect(inspectSite(at('broken.test', '/pdf'), fetcher)).rejects.toBeInstanceOf(SiteFetchError);
    await expect(inspectSite(at('broken.test', '/pdf'), fetcher)).rejects.toMatchObject({ code: 'not_html' });
  });
});

describe('badgeCheck', () => {
  it('finds the badge markup on the page', async () => {
    expect(await badgeCheck(at('badge.test'), LISTING, fetcher)).toEqual({ status: 'found' });
  });

  it('reports a page without the link as missing', async () => {
    const result = await badgeCheck(at('pixel.test'), LISTING, fetcher);
    expect(result.status).toBe('missing');
    expect(result).toHaveProperty('reason', expect.stringMatching(/No link to your listing/));
  });

  it('does not count a nofollow link, and says so', async () => {
    const result = await badgeCheck(at('nofollow.test'), LISTING, fetcher);
    expect(result.status).toBe('missing');
    expect(result).toHaveProperty('reason', expect.stringMatching(/nofollow/));
  });

  it('is inconclusive when the page cannot be read', async () => {
    const cases: [string, SiteFetcher, string][] = [
      [at('broken.test', '/500'), fetcher, 'http_status'],
      [at('broken.test', '/hang'), quick, 'timeout'],
      [at('broken.test', '/pdf'), fetcher, 'not_html'],
      ['http://unknown.test/', fetcher, 'dns_failed'],
    ];
    for (const [url, f, code] of cases) {
      const result = await badgeCheck(url, LISTING, f);
      expect(result, url).toMatchObject({ status: 'inconclusive', code });
      expect(result).toHaveProperty('reason', expect.any(String));
    }
  });
});
