import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { renderToString } from 'preact-render-to-string';
import { BADGE_PATH } from '../../catalog/badges/badges.ts';
import { SLUG_MAX, SLUG_PATTERN } from '../../contract/schemas.ts';
import { ifNoneMatchMatches } from '../../http/caching.ts';
import { BADGE_SIZE } from '../../sites/badge-markup.tsx';
import { NotFoundPage } from './directory-pages.tsx';
import { SITE_NAME } from '../components/layout.tsx';
import { sendPrivatePage } from '../render.ts';

/**
 * The badge image a maker's site shows (GET /badge/<slug>.svg): "Listed on Product directory",
 * at the size the badge markup gives it (badge-markup.tsx). The same image for every slug, so
 * a site may show it before its listing is live without a broken image, and the answer tells
 * nothing about which listings exist; only a slug that could never be one is a 404.
 *
 * Drawn with presentation attributes only (no script, no style element or attribute), so the
 * pages' Content-Security-Policy holds even when the SVG is opened on its own. Served to any
 * site (Cross-Origin-Resource-Policy: cross-origin) and cached for a day by browsers and edges;
 * it is not counted against a visitor's rate limit, as a page of the maker's site may show it
 * on every view.
 */
const BADGE_CACHE_CONTROL = 'public, max-age=86400';
const SVG_CONTENT_TYPE = 'image/svg+xml; charset=utf-8';

const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";
const TEXT_X = 52;

function BadgeImage() {
  const { width, height } = BADGE_SIZE;
  const label = `Listed on ${SITE_NAME}`;
  return (
    <svg xmlns="http://www.w3.org/2000/svg" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label}>
      <title>{label}</title>
      <rect x="1" y="1" width={width - 2} height={height - 2} rx="9" fill="#ffffff" stroke="#0b57d0" stroke-width="2" />
      <circle cx="27" cy={height / 2} r="15" fill="#0b57d0" />
      <path d="M19.5 27.5l5 5 10-10.5" fill="none" stroke="#ffffff" stroke-width="3.2" stroke-linecap="round" stroke-linejoin="round" />
      <text x={TEXT_X} y="21" font-family={FONT} font-size="10.5" font-weight="600" letter-spacing="0.8" fill="#4a5563">
        LISTED ON
      </text>
      {/* textLength keeps the name inside the badge whatever font the viewer has. */}
      <text x={TEXT_X} y="39" font-family={FONT} font-size="15" font-weight="700" fill="#1c1f24" textLength={width - TEXT_X - 12} lengthAdjust="spacingAndGlyphs">
        {SITE_NAME}
      </text>
    </svg>
  );
}

let rendered: { body: string; etag: string } | undefined;

function badgeImage(): { body: string; etag: string } {
  if (!rendered) {
    const body = renderToString(<BadgeImage />);
    rendered = { body, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"` };
  }
  return rendered;
}

function isBadgeSlug(slug: string): boolean {
  return slug.length >= 1 && slug.length <= SLUG_MAX && SLUG_PATTERN.test(slug);
}

/** Registers GET /badge/:file, answering <slug>.svg. */
export function registerBadgeImage(scope: FastifyInstance): void {
  scope.get<{ Params: { file: string } }>(`${BADGE_PATH}/:file`, async (request, reply) => {
    const { file } = request.params;
    const slug = file.endsWith('.svg') ? file.slice(0, -'.svg'.length) : '';
    reply.header('cross-origin-resource-policy', 'cross-origin');
    if (!isBadgeSlug(slug)) {
      return sendPrivatePage(reply, <NotFoundPage message={`There is no badge at this address: a badge is at ${BADGE_PATH}/<listing slug>.svg.`} />, { status: 404 });
    }
    const image = badgeImage();
    reply.header('etag', image.etag).header('cache-control', BADGE_CACHE_CONTROL);
    if (ifNoneMatchMatches(request.headers['if-none-match'], image.etag)) return reply.code(304).send();
    return reply.type(SVG_CONTENT_TYPE).send(image.body);
  });
}
