import type { Document, Element } from 'domhandler';
import { findAll, findOne, getAttributeValue, textContent } from 'domutils';
import { capText, collapseWhitespace } from './html-text.ts';
import { websiteIdentity } from './website-identity.ts';

/**
 * What a product page says about itself in its markup: title, description, cover image, icons,
 * and whether it links to a given listing (the badge). Works on a parsed document (htmlparser2
 * and domhandler), so malformed markup is read the way the parser repairs it.
 *
 * Relative URLs resolve against `<base href>` when the page has an http(s) one, else against the
 * URL the page was finally fetched from. Only http(s) results are kept (no data:, javascript:).
 */

const PAGE_TEXT_LIMITS = { title: 200, description: 1000 } as const;

export interface SiteIcon {
  url: string;
  /** The link's rel as written, lowercase: icon, shortcut icon, apple-touch-icon … */
  rel: string;
  sizes: string | null;
  type: string | null;
}

export type BadgeLink = { status: 'found' } | { status: 'missing'; unfollowed: boolean };

const ICON_RELS = new Set(['icon', 'apple-touch-icon', 'apple-touch-icon-precomposed']);
const COVER_KEYS = ['og:image', 'og:image:url', 'og:image:secure_url', 'twitter:image', 'twitter:image:src'];
/** A link with any of these does not pass reputation, so it does not earn the badge. */
const UNFOLLOWED_RELS = new Set(['nofollow', 'sponsored', 'ugc']);

function relTokens(el: Element): string[] {
  return (getAttributeValue(el, 'rel') ?? '').toLowerCase().split(/\s+/).filter(Boolean);
}

function httpUrl(value: string | undefined, base: string): string | undefined {
  if (!value?.trim()) return undefined;
  try {
    const url = new URL(value.trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function insideSvg(el: Element): boolean {
  for (let p = el.parent; p; p = p.parent) if ((p as Element).name === 'svg') return true;
  return false;
}

/** The URL relative links on this page resolve against. */
function baseUrl(document: Document, pageUrl: string): string {
  const base = findOne((el) => el.name === 'base' && getAttributeValue(el, 'href') !== undefined, document.children);
  return httpUrl(base ? getAttributeValue(base, 'href') : undefined, pageUrl) ?? pageUrl;
}

/** The first non-empty content of each <meta> key (property= or name=, lowercase). */
function metaMap(document: Document): Map<string, string> {
  const map = new Map<string, string>();
  for (const el of findAll((e) => e.name === 'meta', document.children)) {
    const key = (getAttributeValue(el, 'property') ?? getAttributeValue(el, 'name') ?? '').trim().toLowerCase();
    const content = getAttributeValue(el, 'content')?.trim();
    if (key && content && !map.has(key)) map.set(key, content);
  }
  return map;
}

export interface PageMetadata {
  title: string | null;
  description: string | null;
  cover: string | null;
  icons: SiteIcon[];
}

export function extractMetadata(document: Document, pageUrl: string): PageMetadata {
  const base = baseUrl(document, pageUrl);
  const meta = metaMap(document);

  const titleEl = findOne((el) => el.name === 'title' && !insideSvg(el), document.children);
  const titleText = collapseWhitespace(titleEl ? textContent(titleEl) : '') || collapseWhitespace(meta.get('og:title') ?? '');
  const descText = collapseWhitespace(meta.get('description') ?? '') || collapseWhitespace(meta.get('og:description') ?? '');

  const cover = COVER_KEYS.map((k) => httpUrl(meta.get(k), base)).find((u) => u !== undefined) ?? null;

  const icons: SiteIcon[] = [];
  for (const el of findAll((e) => e.name === 'link', document.children)) {
    const tokens = relTokens(el);
    if (!tokens.some((t) => ICON_RELS.has(t))) continue;
    const url = httpUrl(getAttributeValue(el, 'href'), base);
    if (!url || icons.some((i) => i.url === url)) continue;
    icons.push({
      url,
      rel: tokens.join(' '),
      sizes: getAttributeValue(el, 'sizes')?.trim() || null,
      type: getAttributeValue(el, 'type')?.trim().toLowerCase() || null,
    });
  }

  return {
    title: titleText ? capText(titleText, PAGE_TEXT_LIMITS.title) : null,
    description: descText ? capText(descText, PAGE_TEXT_LIMITS.description) : null,
    cover,
    icons,
  };
}

function sameWebsite(a: string, identity: string): boolean {
  try {
    return websiteIdentity(a) === identity;
  } catch {
    return false;
  }
}

/**
 * Whether the page links to the listing: an <a href> whose target is the listing's URL by
 * website identity (scheme, www., trailing slash, tracking parameters do not matter). A link
 * marked rel nofollow, sponsored or ugc does not count: the badge is what earns the product a
 * followed link back, so it must be a followed link itself. `unfollowed` tells a maker who has
 * such a link what to change.
 */
export function findBadgeLink(document: Document, pageUrl: string, listingUrl: string): BadgeLink {
  const base = baseUrl(document, pageUrl);
  const identity = websiteIdentity(listingUrl);
  let unfollowed = false;
  for (const a of findAll((el) => el.name === 'a', document.children)) {
    const href = httpUrl(getAttributeValue(a, 'href'), base);
    if (!href || !sameWebsite(href, identity)) continue;
    if (relTokens(a).some((t) => UNFOLLOWED_RELS.has(t))) unfollowed = true;
    else return { status: 'found' };
  }
  return { status: 'missing', unfollowed };
}
