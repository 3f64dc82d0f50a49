import { parseDocument } from 'htmlparser2';
import { extractFaq, type FaqEntry } from './faq-json-ld.ts';
import { decodeHtml } from './html-text.ts';
import { extractMetadata, findBadgeLink, type SiteIcon } from './page-metadata.ts';
import type { SiteFetcher } from './safe-fetch.ts';
import { SiteFetchError, type SiteFetchErrorCode } from './site-fetch-error.ts';

/**
 * Looking at a maker's site: one page fetched through the safe fetcher (HTML only), parsed with
 * htmlparser2, and read for what a listing can use (title, description, cover, icons, FAQ) and
 * for the directory badge. A page that cannot be fetched raises SiteFetchError; its code tells
 * the caller why (see site-fetch-error.ts), and badgeCheck turns it into "inconclusive".
 */

;
;
export { badgeMarkup,  } from './badge-markup.tsx';

/** Most bytes read for /favicon.ico. */
export const FAVICON_MAX_BYTES = 256 * 1024;

export interface InspectOptions {
  /** When given, the result says whether the page carries a followed link to this listing. */
  listingUrl?: string;
  /** Also try /favicon.ico when the page declares no icon of that URL. Default true. */
  probeFavicon?: boolean;
  faviconMaxBytes?: number;
  signal?: AbortSignal;
}

type BadgeResult = { status: 'found' } | { status: 'missing'; reason: string };

export interface SiteInspection {
  /** The page's URL after redirects. */
  url: string;
  title: string | null;
  description: string | null;
  /** The first usable og:image / og:image:url / og:image:secure_url / twitter:image. */
  cover: string | null;
  /** Icons the page declares, then /favicon.ico when it answered with an image. */
  icons: SiteIcon[];
  faq: FaqEntry[];
  /** Present when listingUrl was given. */
  badge?: BadgeResult;
}

function missingReason(pageUrl: string, unfollowed: boolean): string {
  return unfollowed
    ? `The link to your listing on ${pageUrl} is marked nofollow, sponsored or ugc; remove that rel value so the link counts.`
    : `No link to your listing was found on ${pageUrl}. Add the badge markup to that page.`;
}

/** Fetches and reads one page. Throws SiteFetchError when the page cannot be fetched. */
export async function inspectSite(url: string, fetcher: SiteFetcher, opts: InspectOptions = {}): Promise<SiteInspection> {
  const page = await fetcher.fetch(url, { kind: 'html', ...(opts.signal ? { signal: opts.signal } : {}) });
  const document = parseDocument(decodeHtml(page.body, page.charset), {
    decodeEntities: true,
    lowerCaseTags: true,
    lowerCaseAttributeNames: true,
  });
  const metadata = extractMetadata(document, page.url);
  const inspection: SiteInspection = { url: page.url, ...metadata, faq: extractFaq(document) };

  if (opts.listingUrl !== undefined) {
    const link = findBadgeLink(document, page.url, opts.listingUrl);
    inspection.badge = link.status === 'found' ? link : { status: 'missing', reason: missingReason(page.url, link.unfollowed) };
  }

  if (opts.probeFavicon ?? true) {
    const faviconUrl = new URL('/favicon.ico', page.url).href;
    if (!inspection.icons.some((i) => i.url === faviconUrl)) {
      try {
        const icon = await fetcher.fetch(faviconUrl, {
          kind: 'image',
          maxBytes: opts.faviconMaxBytes ?? FAVICON_MAX_BYTES,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        if (!inspection.icons.some((i) => i.url === icon.url)) {
          inspection.icons.push({ url: icon.url, rel: 'icon', sizes: null, type: icon.contentType });
        }
      } catch (err) {
        // a missing favicon is normal; only the caller's own abort is worth passing on
        if (!(err instanceof SiteFetchError)) throw err;
      }
    }
  }
  return inspection;
}

export type BadgeCheck =
  | { status: 'found' }
  | { status: 'missing'; reason: string }
  | { status: 'inconclusive'; reason: string; code: SiteFetchErrorCode };

/**
 * Looks now for a followed link to the listing on the maker's site. Found or missing when the
 * page was read; inconclusive (with the fetch error's code and message) when it could not be:
 * unreachable, not HTML, too big, too slow, an HTTP error. Records nothing.
 */
export async function badgeCheck(siteUrl: string, listingUrl: string, fetcher: SiteFetcher): Promise<BadgeCheck> {
  try {
    const inspection = await inspectSite(siteUrl, fetcher, { listingUrl, probeFavicon: false });
    return inspection.badge ?? { status: 'missing', reason: missingReason(inspection.url, false) };
  } catch (err) {
    if (err instanceof SiteFetchError) return { status: 'inconclusive', reason: err.message, code: err.code };
    throw err;
  }
}
