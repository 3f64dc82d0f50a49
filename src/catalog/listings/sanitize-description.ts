import sanitizeHtml from 'sanitize-html';

/**
 * A listing's description is HTML written by its maker. It is cleaned once, on the way into the
 * write model, so what is stored is exactly what the API serves and every reader can render it
 * as is.
 *
 * What survives:
 * - formatting tags: p, br, strong, b, em, i, u, s, ul, ol, li, h2, h3, h4, blockquote, code, pre
 *   (h1 is the listing page's own title, so it is not allowed here);
 * - links (`a`) with an absolute http:, https: or mailto: href and no other attribute from the
 *   input. Every kept link gets `rel="nofollow noopener"` (the directory does not vouch for links
 *   inside makers' copy; noopener because of target) and `target="_blank"` (a reader leaving the
 *   listing page keeps it open). A link whose href is missing, relative or of another scheme loses
 *   its tag but keeps its text.
 *
 * Everything else goes: other tags are unwrapped (their text kept), script, style and similar
 * tags are dropped with their content, every other attribute (on* handlers, style, class...) is
 * removed, and comments disappear.
 */
export const DESCRIPTION_ALLOWED_TAGS = [
  'p', 'br', 'strong', 'b', 'em', 'i', 'u', 's', 'ul', 'ol', 'li', 'a', 'h2', 'h3', 'h4', 'blockquote', 'code', 'pre',
] as const;

export const DESCRIPTION_LINK_REL = 'nofollow noopener';
export const DESCRIPTION_LINK_TARGET = '_blank';

const LINK_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

function allowedHref(href: string | undefined): string | undefined {
  if (href === undefined) return undefined;
  const trimmed = href.trim();
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return undefined; // relative or malformed: it would point nowhere once served elsewhere
  }
  if (!LINK_PROTOCOLS.has(url.protocol)) return undefined;
  if (url.protocol !== 'mailto:' && !url.hostname) return undefined;
  return trimmed;
}

const options: sanitizeHtml.IOptions = {
  allowedTags: [...DESCRIPTION_ALLOWED_TAGS],
  allowedAttributes: { a: ['href', 'rel', 'target'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'xmp', 'iframe', 'object', 'template', 'title', 'head'],
  parseStyleAttributes: false,
  transformTags: {
    // the listing page has its own title: a description's headings start one level down
    h1: sanitizeHtml.simpleTransform('h2', {}),
    h5: sanitizeHtml.simpleTransform('h4', {}),
    h6: sanitizeHtml.simpleTransform('h4', {}),
    a: (_tagName, attribs): sanitizeHtml.Tag => {
      const href = allowedHref(attribs.href);
      // rel and target are ours alone: whatever the input carried is replaced.
      return href === undefined
        ? { tagName: 'a', attribs: {} }
        : { tagName: 'a', attribs: { href, rel: DESCRIPTION_LINK_REL, target: DESCRIPTION_LINK_TARGET } };
    },
  },
  // An anchor left without an href keeps its text but not its tag.
  exclusiveFilter: (frame) => (frame.tag === 'a' && !frame.attribs.href ? 'excludeTag' : false),
};

/**
 * Block-level tags outside the allowlist are removed with their text kept; a space stands where
 * each was, so "<td>a</td><td>b</td>" keeps two words instead of gluing them into "ab".
 */
const DROPPED_BLOCK_TAG =
  /<(\/?)(div|section|article|header|footer|aside|nav|main|table|thead|tbody|tfoot|tr|td|th|caption|dl|dt|dd|figure|figcaption|address|center|details|summary)\b/gi;

function sanitizeOnce(html: string): string {
  return sanitizeHtml(html.replace(DROPPED_BLOCK_TAG, ' <$1$2'), options)
    .replace(/ {2,}/g, ' ')
    .trim();
}

const BLOCK_TAGS = new Set(['p', 'ul', 'ol', 'h2', 'h3', 'h4', 'blockquote', 'pre']);
const OWN_TAG = /<(\/?)([a-z0-9]+)[^>]*>/g;

/**
 * Whether sanitized output still holds a block element inside a paragraph. That happens when
 * the input wrapped a paragraph's content in a tag that was then removed ("<p><x><p>…"): the
 * output is valid for the sanitizer but not how a browser (or a second pass) reads it, which
 * would close the paragraph first. Read over the sanitizer's own output, whose tags are the
 * allowlisted ones, well formed.
 */
function blockInsideParagraph(html: string): boolean {
  let openParagraphs = 0;
  for (const [, closing, name] of html.matchAll(OWN_TAG)) {
    if (name === 'p') openParagraphs += closing ? -1 : 1;
    else if (!closing && openParagraphs > 0 && BLOCK_TAGS.has(name!)) return true;
    if (!closing && name === 'p' && openParagraphs > 1) return true;
  }
  return false;
}

export function sanitizeDescription(html: string): string {
  let clean = sanitizeOnce(html);
  // A second pass settles nesting the first left (see above), so what is stored is stable:
  // sanitizing it again, or rendering and reading it back, changes nothing.
  for (let pass = 0; pass < 3 && blockInsideParagraph(clean); pass++) clean = sanitizeOnce(clean);
  return clean;
}
