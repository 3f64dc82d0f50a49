import type { Element } from 'domhandler';
import { findAll, getAttributeValue, textContent } from 'domutils';
import { parseDocument } from 'htmlparser2';

/**
 * Reading a served page as a browser would, rather than as a string: entities decoded, text as
 * shown, attributes by name. Assertions then hold whatever escaping style the renderer uses.
 */
export interface ParsedPage {
  /** Every element with this tag name, in document order; only those inside `within` when given. */
  all(tag: string, within?: Element): Element[];
  /** The decoded text of every element with this tag name. */
  texts(tag: string): string[];
  /** The element with this id, if any. */
  byId(id: string): Element | undefined;
  attr(element: Element, name: string): string | undefined;
  text(element: Element): string;
}

export function parsePage(html: string): ParsedPage {
  const doc = parseDocument(html);
  const all = (tag: string, within?: Element) => findAll((e) => e.name === tag, within ? within.children : doc.children);
  return {
    all,
    texts: (tag) => all(tag).map((e) => textContent(e)),
    byId: (id) => findAll((e) => e.attribs.id === id, doc.children)[0],
    attr: (element, name) => getAttributeValue(element, name),
    text: (element) => textContent(element),
  };
}
