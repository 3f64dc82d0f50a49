import { SaxesParser } from 'saxes';

/**
 * XML read as a strict parser reads it (saxes: XML 1.0 well-formedness and namespaces): a
 * document with one stray `<`, `&` or forbidden character throws, which is what a feed reader
 * or a search engine would refuse. Elements by local name and namespace, text decoded.
 */
export interface XmlElement {
  /** Local name. */
  name: string;
  /** Namespace URI ('' for none). */
  ns: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** The element's own text (entities decoded), its children's left out. */
  text: string;
}

export function parseXml(xml: string): XmlElement {
  const parser = new SaxesParser({ xmlns: true });
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  parser.on('error', (err) => {
    throw err;
  });
  parser.on('opentag', (tag) => {
    const attrs: Record<string, string> = {};
    for (const a of Object.values(tag.attributes)) if (a.prefix !== 'xmlns' && a.name !== 'xmlns') attrs[a.local] = a.value;
    const el: XmlElement = { name: tag.local, ns: tag.uri, attrs, children: [], text: '' };
    const parent = stack.at(-1);
    if (parent) parent.children.push(el);
    else root = el;
    stack.push(el);
  });
  parser.on('text', (t) => {
    const el = stack.at(-1);
    if (el) el.text += t;
  });
  parser.on('cdata', (t) => {
    const el = stack.at(-1);
    if (el) el.text += t;
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  parser.write(xml).close();
  if (!root) throw new Error('no root element');
  return root;
}

/** The element's children with this local name. */
export function childrenNamed(el: XmlElement, name: string): XmlElement[] {
  return el.children.filter((c) => c.name === name);
}

/** The element's one child with this local name; throws when there is not exactly one. */
export function childNamed(el: XmlElement, name: string): XmlElement {
  const found = childrenNamed(el, name);
  if (found.length !== 1) throw new Error(`<${el.name}> has ${found.length} <${name}> children, expected 1`);
  return found[0]!;
}

/** The text of the element's one child with this local name. */
export function textOf(el: XmlElement, name: string): string {
  return childNamed(el, name).text;
}
