import { Parser } from 'htmlparser2';

/** Elements whose content is code or a form's value, not text. */
const NON_TEXT = new Set(['script', 'style', 'textarea', 'option', 'noscript']);
/** Block elements: a space goes before each of their tags, so words on either side stay apart. */
const BLOCK_TAG = /<(?=\/?(p|div|br|li|ul|ol|h[1-6]|blockquote|pre|tr|td|th)\b)/gi;

/**
 * The searchable text of an HTML description: tags removed (block tags become spaces so words
 * on either side stay apart), entities decoded, the content of script, style, textarea, option
 * and noscript left out, whitespace collapsed. Markup itself is never searchable. One pass of
 * the HTML parser, collecting text: the projector calls this for every listing it projects.
 */
export function htmlToText(html: string): string {
  let text = '';
  /** Depth inside a non-text element; 0 outside any. */
  let skipping = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (skipping) skipping++;
        else if (NON_TEXT.has(name)) skipping = 1;
      },
      ontext(chunk) {
        if (!skipping) text += chunk;
      },
      onclosetag() {
        if (skipping) skipping--;
      },
    },
    { decodeEntities: true },
  );
  parser.write(html.replace(BLOCK_TAG, ' <'));
  parser.end();
  return text.replace(/\s+/g, ' ').trim();
}
