import { parseDocument } from 'htmlparser2';
import { findAll, getAttributeValue } from 'domutils';
import { describe, expect, it } from 'vitest';
import { BADGE_SIZE, badgeMarkup } from '../../../src/sites/badge-markup.tsx';
import { findBadgeLink } from '../../../src/sites/page-metadata.ts';

describe('badge markup', () => {
  it('is one link around the badge image', () => {
    expect(
      badgeMarkup({
        listingUrl: 'https://directory.example/products/pixel-forge',
        badgeImageUrl: 'https://directory.example/badge/pixel-forge.svg',
        name: 'Directory',
      }),
    ).toBe(
      `<a href="https://directory.example/products/pixel-forge"><img src="https://directory.example/badge/pixel-forge.svg" alt="Listed on Directory" width="${BADGE_SIZE.width}" height="${BADGE_SIZE.height}"/></a>`,
    );
  });

  it('escapes every attribute, so the values come back intact and nothing else appears', () => {
    const listingUrl = 'https://directory.example/products/x?a=1&b="2"&c=<3>';
    const badgeImageUrl = "https://directory.example/badge/x.svg?'q'&r";
    const name = `"Tools" & <Things> 'R' Us`;
    const html = badgeMarkup({ listingUrl, badgeImageUrl, name });
    expect(html).not.toContain('"2"');
    expect(html).not.toContain('<Things>');
    expect(html).not.toContain('<3>');
    const document = parseDocument(html, { decodeEntities: true });
    const elements = findAll(() => true, document.children);
    expect(elements.map((e) => e.name)).toEqual(['a', 'img']);
    const [a, img] = elements;
    expect(getAttributeValue(a!, 'href')).toBe(listingUrl);
    expect(getAttributeValue(img!, 'src')).toBe(badgeImageUrl);
    expect(getAttributeValue(img!, 'alt')).toBe(`Listed on ${name}`);
    expect(Object.keys(a!.attribs)).toEqual(['href']);
  });

  it('is found by the badge check when pasted on a page', () => {
    const listingUrl = 'https://directory.example/products/pixel-forge';
    const snippet = badgeMarkup({ listingUrl, badgeImageUrl: 'https://directory.example/badge/pixel-forge.svg', name: 'Directory' });
    const page = parseDocument(`<html><body><footer>${snippet}</footer></body></html>`);
    expect(findBadgeLink(page, 'https://pixelforge.example/', listingUrl)).toEqual({ status: 'found' });
  });

  it('refuses URLs that are not http(s)', () => {
    expect(() => badgeMarkup({ listingUrl: 'javascript:alert(1)', badgeImageUrl: 'https://d.example/b.svg', name: 'D' })).toThrow(TypeError);
    expect(() => badgeMarkup({ listingUrl: 'https://d.example/p', badgeImageUrl: 'data:image/svg+xml,<svg/>', name: 'D' })).toThrow(TypeError);
  });
});
