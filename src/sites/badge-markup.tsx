import { renderToString } from 'preact-render-to-string';

/**
 * The badge snippet a maker copies onto their site: a link to the listing around the badge image.
 * Rendered through preact, so every attribute is escaped; the result is text to show (in a
 * <pre> or a textarea), not markup to insert into our own pages.
 *
 * The link carries no rel: it must stay a followed link for the badge check to find it (see
 * page-metadata.ts). The image's width and height match the badge SVG, so pages do not shift
 * while it loads.
 */

export const BADGE_SIZE = { width: 200, height: 54 } as const;

export interface BadgeMarkupInput {
  /** The listing's public page, e.g. PUBLIC_URL/products/SLUG. */
  listingUrl: string;
  /** The badge image, e.g. PUBLIC_URL/badge/SLUG.svg. */
  badgeImageUrl: string;
  /** The directory's name, read by screen readers as "Listed on NAME", as the badge image says. */
  name: string;
}

function requireHttp(value: string, what: string): string {
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`${what} must be an http(s) URL`);
  return value;
}

export function badgeMarkup({ listingUrl, badgeImageUrl, name }: BadgeMarkupInput): string {
  return renderToString(
    <a href={requireHttp(listingUrl, 'listingUrl')}>
      <img src={requireHttp(badgeImageUrl, 'badgeImageUrl')} alt={`Listed on ${name}`} width={BADGE_SIZE.width} height={BADGE_SIZE.height} />
    </a>,
  );
}
