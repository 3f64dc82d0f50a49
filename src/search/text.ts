import { decodeHTML } from 'entities';
import sanitizeHtml from 'sanitize-html';

/**
 * The searchable text of an HTML description: tags removed (block tags become spaces so words
 * on either side stay apart), entities decoded, whitespace collapsed. Markup itself is never
 * searchable.
 */
export function htmlToText(html: string): string {
  const stripped = sanitizeHtml(html.replace(/<(?=\/?(p|div|br|li|ul|ol|h[1-6]|blockquote|pre|tr|td|th)\b)/gi, ' <'), {
    allowedTags: [],
    allowedAttributes: {},
    // script/style contents are code, not text
    nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript'],
  });
  return decodeHTML(stripped).replace(/\s+/g, ' ').trim();
}
