import { parseDocument } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { extractFaq } from '../../../src/sites/faq-json-ld.ts';
import { capText, decodeHtml, plainText } from '../../../src/sites/html-text.ts';
import { extractMetadata, findBadgeLink } from '../../../src/sites/page-metadata.ts';

/** Reading fixture pages: no network, the same parsing the inspection uses. */

const PAGE_URL = 'https://pixelforge.example/app/index.html';
const LISTING = 'https://directory.example/products/pixel-forge';

function doc(html: string) {
  return parseDocument(html, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
}

/** As publishers embed JSON-LD: `<` escaped, so no string can close the script element. */
function ldJson(value: unknown): string {
  return `<script type="application/ld+json">${JSON.stringify(value).replaceAll('<', '\\u003c')}</script>`;
}

describe('page metadata', () => {
  const full = `<!doctype html><html><head>
    <meta charset="utf-8">
    <title>
      Pixel Forge &amp; Co —   design tools
    </title>
    <meta name="description" content="  Design tools   for teams.  ">
    <meta property="og:title" content="OG title">
    <meta property="og:description" content="OG description">
    <meta property="og:image" content="/img/cover.png">
    <meta name="twitter:image" content="https://cdn.example/tw.png">
    <link rel="icon" href="favicon-32.png" sizes="32x32" type="image/png">
    <link rel="Shortcut Icon" href="/favicon.ico">
    <link rel="apple-touch-icon" href="/apple.png" sizes="180x180">
    <link rel="apple-touch-icon-precomposed" href="/apple-pre.png">
    <link rel="stylesheet" href="/style.css">
    <link rel="icon" href="data:image/png;base64,AAAA">
  </head><body><svg><title>Not the title</title></svg></body></html>`;

  it('reads title, description, cover and icons, resolving URLs against the page', () => {
    expect(extractMetadata(doc(full), PAGE_URL)).toEqual({
      title: 'Pixel Forge & Co — design tools',
      description: 'Design tools for teams.',
      cover: 'https://pixelforge.example/img/cover.png',
      icons: [
        { url: 'https://pixelforge.example/app/favicon-32.png', rel: 'icon', sizes: '32x32', type: 'image/png' },
        { url: 'https://pixelforge.example/favicon.ico', rel: 'shortcut icon', sizes: null, type: null },
        { url: 'https://pixelforge.example/apple.png', rel: 'apple-touch-icon', sizes: '180x180', type: null },
        { url: 'https://pixelforge.example/apple-pre.png', rel: 'apple-touch-icon-precomposed', sizes: null, type: null },
      ],
    });
  });

  it('falls back to og:title and og:description, and skips an svg title', () => {
    const html = `<html><head><meta property="og:title" content="From OG"><meta property="og:description" content="OG says"></head>
      <body><svg><title>Icon label</title></svg></body></html>`;
    const m = extractMetadata(doc(html), PAGE_URL);
    expect(m.title).toBe('From OG');
    expect(m.description).toBe('OG says');
  });

  it('takes the cover from og:image:url, og:image:secure_url, then twitter:image, keeping http(s) only', () => {
    const cover = (metas: string) => extractMetadata(doc(`<head>${metas}</head>`), PAGE_URL).cover;
    expect(cover('<meta property="og:image:url" content="a.png">')).toBe('https://pixelforge.example/app/a.png');
    expect(cover('<meta property="og:image:secure_url" content="//cdn.example/b.png">')).toBe('https://cdn.example/b.png');
    expect(cover('<meta name="twitter:image" content="https://cdn.example/t.png">')).toBe('https://cdn.example/t.png');
    expect(cover('<meta property="twitter:image" content="/t2.png">')).toBe('https://pixelforge.example/t2.png');
    expect(cover('<meta property="og:image" content="javascript:alert(1)"><meta name="twitter:image" content="/ok.png">')).toBe(
      'https://pixelforge.example/ok.png',
    );
    expect(cover('<meta property="og:image" content="data:image/png;base64,AAAA">')).toBeNull();
    expect(cover('<meta property="og:image" content="   ">')).toBeNull();
    expect(cover('')).toBeNull();
  });

  it('resolves against <base href>', () => {
    const html = `<head><base href="https://static.example/assets/"><meta property="og:image" content="cover.jpg">
      <link rel="icon" href="icon.svg" type="image/svg+xml"></head>`;
    const m = extractMetadata(doc(html), PAGE_URL);
    expect(m.cover).toBe('https://static.example/assets/cover.jpg');
    expect(m.icons[0]?.url).toBe('https://static.example/assets/icon.svg');
  });

  it('reads malformed HTML the way the parser repairs it', () => {
    const html = `<html><head><title>Broken <b>page</title><meta name=description content=unquoted>
      <meta property="og:image" content='/x.png'<link rel=icon href=/i.png></head><body><p>unclosed<div>`;
    const m = extractMetadata(doc(html), PAGE_URL);
    expect(m.title).toBe('Broken <b>page');
    expect(m.description).toBe('unquoted');
    expect(m.cover).toBe('https://pixelforge.example/x.png');
  });

  it('returns nulls and no icons for a bare page', () => {
    expect(extractMetadata(doc('<p>hello'), PAGE_URL)).toEqual({ title: null, description: null, cover: null, icons: [] });
  });

  it('caps the title at 200 and the description at 1000 characters', () => {
    const long = `${'word '.repeat(400)}`;
    const m = extractMetadata(doc(`<title>${long}</title><meta name="description" content="${long.repeat(2)}">`), PAGE_URL);
    expect([...m.title!].length).toBeLessThanOrEqual(200);
    expect(m.title!.endsWith('…')).toBe(true);
    expect([...m.description!].length).toBeLessThanOrEqual(1000);
    const exact = 'x'.repeat(200);
    expect(extractMetadata(doc(`<title>${exact}</title>`), PAGE_URL).title).toBe(exact);
    expect(extractMetadata(doc(`<title>${exact}y</title>`), PAGE_URL).title).toBe(`${'x'.repeat(199)}…`);
  });
});

describe('the badge link', () => {
  const page = (body: string) => doc(`<html><body>${body}</body></html>`);

  it('is found for a followed link to the listing, however the URL is spelled', () => {
    for (const href of [
      LISTING,
      'http://directory.example/products/pixel-forge/',
      'https://www.directory.example/products/pixel-forge?utm_source=badge#top',
      'https://DIRECTORY.example/products/pixel-forge?ref=badge',
    ]) {
      expect(findBadgeLink(page(`<a href="${href}"><img src="b.svg"></a>`), PAGE_URL, LISTING), href).toEqual({ status: 'found' });
    }
  });

  it('is found through a relative link under <base href>', () => {
    const html = doc('<head><base href="https://directory.example/"></head><body><a href="products/pixel-forge">Listed</a></body>');
    expect(findBadgeLink(html, PAGE_URL, LISTING)).toEqual({ status: 'found' });
  });

  it('does not count nofollow, sponsored or ugc links', () => {
    for (const rel of ['nofollow', 'sponsored', 'ugc', 'noopener NoFollow', 'external sponsored']) {
      expect(findBadgeLink(page(`<a rel="${rel}" href="${LISTING}">x</a>`), PAGE_URL, LISTING), rel).toEqual({ status: 'missing', unfollowed: true });
    }
    // noopener / noreferrer still pass reputation
    expect(findBadgeLink(page(`<a rel="noopener noreferrer" href="${LISTING}">x</a>`), PAGE_URL, LISTING)).toEqual({ status: 'found' });
    // one followed link among unfollowed ones is enough
    expect(findBadgeLink(page(`<a rel="nofollow" href="${LISTING}">x</a><a href="${LISTING}">y</a>`), PAGE_URL, LISTING)).toEqual({ status: 'found' });
  });

  it('is missing when links go elsewhere, or only look like the listing', () => {
    const body = `
      <a href="https://directory.example/products/pixel-forge-2">other listing</a>
      <a href="https://directory.example/">home</a>
      <a href="https://evil.example/?u=${encodeURIComponent(LISTING)}">wrapped</a>
      <a>no href</a><a href="javascript:void(0)">js</a><a href="http://[bad">broken</a>
      <link rel="alternate" href="${LISTING}">
      <!-- <a href="${LISTING}">commented out</a> -->
      <p>${LISTING}</p>`;
    expect(findBadgeLink(page(body), PAGE_URL, LISTING)).toEqual({ status: 'missing', unfollowed: false });
  });
});

describe('FAQ from JSON-LD', () => {
  const faqPage = (items: unknown[]) => ({ '@context': 'https://schema.org', '@type': 'FAQPage', mainEntity: items });
  const q = (name: string, text: string) => ({ '@type': 'Question', name, acceptedAnswer: { '@type': 'Answer', text } });

  it('reads a top-level FAQPage and strips answers to plain text', () => {
    const html = ldJson(
      faqPage([
        q('Is there a free plan?', '<p>Yes: <strong>free</strong> forever &amp; ever.</p><ul><li>One</li><li>Two</li></ul>'),
        q('  Does it   work offline? ', 'Mostly.<br>Sync resumes later.<script>alert(1)</script>'),
      ]),
    );
    expect(extractFaq(doc(html))).toEqual([
      { question: 'Is there a free plan?', answer: 'Yes: free forever & ever.\nOne\nTwo' },
      { question: 'Does it work offline?', answer: 'Mostly.\nSync resumes later.' },
    ]);
  });

  it('reads FAQPages inside arrays and @graph, with any spelling of the type', () => {
    const html =
      ldJson([{ '@type': 'Organization', name: 'X' }, { '@type': ['WebPage', 'FAQPage'], mainEntity: q('A?', 'a') }]) +
      ldJson({ '@context': 'https://schema.org', '@graph': [{ '@type': 'WebSite' }, { '@type': 'https://schema.org/FAQPage', mainEntity: [q('B?', 'b')] }] }) +
      ldJson({ '@type': 'schema:FAQPage', mainEntity: [{ name: 'C?', acceptedAnswer: [{ text: 'c' }] }] });
    expect(extractFaq(doc(html))).toEqual([
      { question: 'A?', answer: 'a' },
      { question: 'B?', answer: 'b' },
      { question: 'C?', answer: 'c' },
    ]);
  });

  it('skips broken scripts and incomplete items, and reads JSON with raw line breaks in strings', () => {
    const html =
      '<script type="application/ld+json">{ not json</script>' +
      `<script type="application/ld+json">{"@type":"FAQPage","mainEntity":[{"@type":"Question","name":"Line\nbreak?","acceptedAnswer":{"text":"Yes\nit works"}}]}</script>` +
      ldJson(faqPage([{ '@type': 'Question', name: 'No answer?' }, { '@type': 'Question', acceptedAnswer: { text: 'no question' } }, { '@type': 'Thing', name: 'x', acceptedAnswer: { text: 'y' } }, q('Empty?', '<p> </p>'), 'junk', null])) +
      '<script type="text/javascript">{"@type":"FAQPage","mainEntity":[]}</script>' +
      ldJson({ '@type': 'Product', mainEntity: [q('Not in a FAQPage?', 'no')] });
    expect(extractFaq(doc(html))).toEqual([{ question: 'Line break?', answer: 'Yes it works' }]);
  });

  it('accepts the type attribute in any case and with parameters', () => {
    const html = `<script type="Application/LD+JSON; charset=utf-8">${JSON.stringify(faqPage([q('Q?', 'A')]))}</script>`;
    expect(extractFaq(doc(html))).toEqual([{ question: 'Q?', answer: 'A' }]);
  });

  it('keeps 30 items, the first of each question, questions of 300 and answers of 5000 characters', () => {
    const items = Array.from({ length: 40 }, (_, i) => q(`Question ${i}?`, `Answer ${i}`));
    items.splice(1, 0, q('Question 0?', 'duplicate'));
    const faq = extractFaq(doc(ldJson(faqPage(items))));
    expect(faq).toHaveLength(30);
    expect(faq[0]).toEqual({ question: 'Question 0?', answer: 'Answer 0' });
    expect(faq[29]?.question).toBe('Question 29?');

    const [exact] = extractFaq(doc(ldJson(faqPage([q('q'.repeat(300), 'a'.repeat(5000))]))));
    expect(exact).toEqual({ question: 'q'.repeat(300), answer: 'a'.repeat(5000) });
    const [over] = extractFaq(doc(ldJson(faqPage([q('q'.repeat(301), 'a'.repeat(5001))]))));
    expect([...over!.question]).toHaveLength(300);
    expect(over!.question.endsWith('…')).toBe(true);
    expect([...over!.answer]).toHaveLength(5000);
    expect(over!.answer.endsWith('…')).toBe(true);
  });
});

describe('text helpers', () => {
  it('decodes by BOM, header charset, meta charset, else UTF-8', () => {
    const latin1 = Buffer.from('<p>café</p>', 'latin1');
    expect(decodeHtml(latin1, 'iso-8859-1')).toBe('<p>café</p>');
    expect(decodeHtml(Buffer.concat([Buffer.from('<meta charset="windows-1252">'), latin1]))).toContain('café');
    expect(decodeHtml(Buffer.concat([Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'), latin1]))).toContain('café');
    expect(decodeHtml(Buffer.from('<p>café</p>', 'utf8'))).toBe('<p>café</p>');
    expect(decodeHtml(Buffer.from('<p>café</p>', 'utf8'), 'no-such-charset')).toBe('<p>café</p>');
    expect(decodeHtml(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<p>café</p>')]), 'iso-8859-1')).toBe('<p>café</p>');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<p>café</p>', 'utf16le')]);
    expect(decodeHtml(utf16)).toBe('<p>café</p>');
    // a page cannot declare itself UTF-16 from inside
    expect(decodeHtml(Buffer.from('<meta charset="utf-16"><p>café</p>', 'utf8'))).toContain('café');
  });

  it('makes plain text of HTML', () => {
    expect(plainText('<div>One<br/>two</div><p>three &lt;four&gt;</p><style>p{}</style>five')).toBe('One\ntwo\nthree <four>\nfive');
    expect(plainText('no markup at all')).toBe('no markup at all');
    expect(plainText('<p>  </p>')).toBe('');
  });

  it('caps text by characters, not UTF-16 units', () => {
    expect(capText('😀😀😀', 3)).toBe('😀😀😀');
    expect(capText('😀😀😀😀', 3)).toBe('😀😀…');
    expect(capText('alpha beta gamma delta', 17)).toBe('alpha beta gamma…');
  });
});
