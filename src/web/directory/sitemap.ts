import { xmlEscape } from './xml.ts';

/**
 * Sitemaps (sitemaps.org protocol 0.9): one `<urlset>` while the URLs fit in one file, else a
 * `<sitemapindex>` naming parts of at most the limits each. Written by hand: each URL is one short
 * line of an escaped location and a date, and a library's per-URL objects and validation would cost
 * more than the whole file at 100,000 listings.
 */
export interface SitemapUrl {
  /** Absolute URL. */
  loc: string;
  /** W3C date-time; left out when unknown. */
  lastmod?: string | undefined;
}

export interface SitemapLimits {
  /** URLs per file: 50,000 by the protocol. */
  maxUrls: number;
  /** Uncompressed bytes per file: 50 MiB (52,428,800) by the protocol. */
  maxBytes: number;
}

export const SITEMAP_LIMITS: SitemapLimits = { maxUrls: 50_000, maxBytes: 52_428_800 };

export type Sitemap =
  /** Every URL in one file. */
  | { kind: 'urlset'; file: string }
  /** The index, and its parts in order (part n is `parts[n - 1]`). */
  | { kind: 'index'; index: string; parts: string[] };

const DAY_MS = 86_400_000;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
/** 'yyyy-mm-ddT' of each day met, by day number (listings share days); emptied when large. */
const dayPrefixes = new Map<number, string>();

/**
 * A time as toISOString() writes it ("2026-10-20T12:00:00.000Z"), at a fraction of its cost: a
 * 100,000-listing sitemap spent most of its build formatting dates. The day is formatted once
 * and kept; the time of day is arithmetic.
 */
export function isoDateTime(ms: number): string {
  if (!Number.isInteger(ms)) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    const iso = new Date(day * DAY_MS).toISOString();
    prefix = iso.slice(0, iso.indexOf('T') + 1);
    if (dayPrefixes.size >= 100_000) dayPrefixes.clear();
    dayPrefixes.set(day, prefix);
  }
  let rest = ms - day * DAY_MS;
  const milli = rest % 1000;
  rest = (rest - milli) / 1000;
  const second = rest % 60;
  rest = (rest - second) / 60;
  const minute = rest % 60;
  const hour = (rest - minute) / 60;
  return `${prefix}${TWO_DIGITS[hour]!}:${TWO_DIGITS[minute]!}:${TWO_DIGITS[second]!}.${THREE_DIGITS[milli]!}Z`;
}

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
const URLSET_HEAD = `${XML_DECLARATION}<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n`;
const URLSET_TAIL = '</urlset>\n';
const FRAME_BYTES = Buffer.byteLength(URLSET_HEAD) + Buffer.byteLength(URLSET_TAIL);

function urlLine(u: SitemapUrl): string {
  const lastmod = u.lastmod === undefined ? '' : `<lastmod>${xmlEscape(u.lastmod)}</lastmod>`;
  return `<url><loc>${xmlEscape(u.loc)}</loc>${lastmod}</url>\n`;
}

/**
 * The sitemap of these URLs, in their order. `partUrl(n)` is the absolute URL of part n (from
 * 1), named in the index. A file is full at `maxUrls` URLs or when one more would pass
 * `maxBytes`; exactly `maxUrls` URLs still make one `<urlset>`.
 */
export function buildSitemap(urls: Iterable<SitemapUrl>, partUrl: (n: number) => string, limits: SitemapLimits = SITEMAP_LIMITS): Sitemap {
  const parts: string[][] = [];
  let lines: string[] = [];
  let bytes = FRAME_BYTES;
  for (const u of urls) {
    const line = urlLine(u);
    // Locations are URLs (ASCII once escaped), but a date or host may not be: count bytes.
    const size = Buffer.byteLength(line);
    if (lines.length > 0 && (lines.length >= limits.maxUrls || bytes + size > limits.maxBytes)) {
      parts.push(lines);
      lines = [];
      bytes = FRAME_BYTES;
    }
    lines.push(line);
    bytes += size;
  }
  parts.push(lines);
  const files = parts.map((p) => URLSET_HEAD + p.join('') + URLSET_TAIL);
  if (files.length === 1) return { kind: 'urlset', file: files[0]! };
  const entries = files.map((_, i) => `<sitemap><loc>${xmlEscape(partUrl(i + 1))}</loc></sitemap>\n`).join('');
  return {
    kind: 'index',
    index: `${XML_DECLARATION}<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${entries}</sitemapindex>\n`,
    parts: files,
  };
}
