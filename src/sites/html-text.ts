import type { AnyNode } from 'domhandler';
import { isTag, isText } from 'domhandler';
import { Parser, parseDocument } from 'htmlparser2';
import { parseContentType } from './safe-fetch.ts';

/**
 * Turning fetched bytes into text, and HTML into plain text, with a real HTML parser
 * (htmlparser2); no regular expression ever looks at markup.
 */

const SNIFF_BYTES = 1024;

function supported(label: string | undefined): string | undefined {
  if (!label) return undefined;
  try {
    const encoding = new TextDecoder(label).encoding;
    // a page cannot be UTF-16 by its own say-so: the declaration itself would be unreadable
    return encoding.startsWith('utf-16') ? 'utf-8' : encoding;
  } catch {
    return undefined;
  }
}

/** The charset a page declares in a <meta> within its first kilobyte. */
function sniffMetaCharset(body: Buffer): string | undefined {
  let found: string | undefined;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (found || name !== 'meta') return;
        if (attribs.charset) found = attribs.charset.trim();
        else if (attribs['http-equiv']?.trim().toLowerCase() === 'content-type') found = parseContentType(attribs.content).charset;
      },
    },
    { lowerCaseTags: true, lowerCaseAttributeNames: true, decodeEntities: true },
  );
  parser.write(body.subarray(0, SNIFF_BYTES).toString('latin1'));
  parser.end();
  return found;
}

/**
 * Decodes an HTML body the way a browser would, in this order: byte order mark, the charset of
 * the Content-Type header, a <meta charset> in the first kilobyte, else UTF-8. Undecodable bytes
 * become U+FFFD rather than failing.
 */
export function decodeHtml(body: Buffer, headerCharset?: string): string {
  let encoding: string | undefined;
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) encoding = 'utf-8';
  else if (body[0] === 0xfe && body[1] === 0xff) encoding = 'utf-16be';
  else if (body[0] === 0xff && body[1] === 0xfe) encoding = 'utf-16le';
  encoding ??= supported(headerCharset) ?? supported(sniffMetaCharset(body)) ?? 'utf-8';
  return new TextDecoder(encoding).decode(body);
}

/** Runs of whitespace become one space; ends trimmed. */
export function collapseWhitespace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** Cuts a text to at most `max` characters, at a word boundary when one is near, marking the cut with an ellipsis. */
export function capText(s: string, max: number): string {
  const chars = Array.from(s);
  if (chars.length <= max) return s;
  const head = chars.slice(0, max - 1).join('');
  const space = head.lastIndexOf(' ');
  const cut = space >= head.length * 0.8 ? head.slice(0, space) : head;
  return `${cut.trimEnd()}…`;
}

const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'figcaption', 'figure', 'footer',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table',
  'td', 'th', 'tr', 'ul',
]);
const SKIPPED = new Set(['script', 'style', 'template', 'noscript', 'head']);

function collect(nodes: AnyNode[], lines: string[][]): void {
  for (const node of nodes) {
    if (isText(node)) {
      lines[lines.length - 1]!.push(node.data);
    } else if (isTag(node)) {
      if (SKIPPED.has(node.name)) continue;
      const block = BLOCK.has(node.name);
      if (block) lines.push([]);
      collect(node.children, lines);
      if (block) lines.push([]);
    }
  }
}

/**
 * The readable text of an HTML fragment: tags and scripts removed, entities decoded, spaces
 * collapsed, one line per paragraph, list item or line break.
 */
export function plainText(html: string): string {
  const doc = parseDocument(html, { decodeEntities: true, lowerCaseTags: true });
  const lines: string[][] = [[]];
  collect(doc.children, lines);
  return lines
    .map((parts) => collapseWhitespace(parts.join('')))
    .filter((line) => line !== '')
    .join('\n');
}
