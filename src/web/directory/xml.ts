/**
 * The one escape of the XML the service writes by hand (sitemaps, Atom feeds): text that comes
 * out as one character-data or attribute value, whatever a listing says.
 *
 * - `&`, `<`, `>`, `"` and `'` become entity references, so the value can neither end its
 *   element or attribute nor start markup (`>` too, for `]]>`).
 * - Characters XML 1.0 does not allow at all (C0 controls other than tab, newline and carriage
 *   return; U+FFFE, U+FFFF; a lone surrogate) are dropped: no escape makes them well-formed, and
 *   a strict parser refuses the whole document for one of them.
 */
/**
 * Anything but the characters that need nothing: one class, which V8 scans fastest (the check
 * runs twice per sitemap URL). A surrogate is outside it, so an emoji takes the slow path.
 */
const NEEDS_WORK = /[^\t\n\r\u0020\u0021\u0023-\u0025\u0028-\u003b\u003d\u003f-\ud7ff\ue000-\ufffd]/;
const NOT_XML = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu;
const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

export function xmlEscape(value: string): string {
  // Most values (slugs, URLs, dates, plain names) need nothing: no new string for them.
  if (!NEEDS_WORK.test(value)) return value;
  return value.replace(NOT_XML, '').replace(/[&<>"']/g, (c) => ENTITY[c]!);
}
