import { xmlEscape } from './xml.ts';

/**
 * An Atom 1.0 feed (RFC 4287), written by hand with one escape (xml.ts). Texts are `type="text"`
 * (a listing's name is not markup, however it reads); the content is the listing's description
 * HTML, escaped as `type="html"`. The `feed` package was not used: it writes titles and summaries
 * as HTML in CDATA sections, so a name such as `<b>` would be shown as markup by readers.
 */
interface AtomPerson {
  name: string;
  /** An http(s) IRI; left out when undefined. */
  uri?: string | undefined;
}

interface AtomCategory {
  term: string;
  label?: string | undefined;
  scheme?: string | undefined;
}

export interface AtomEntry {
  /** A permanent, unique IRI. */
  id: string;
  title: string;
  /** The page the entry stands for (rel="alternate"). */
  link: string;
  /** RFC 3339 date-times. */
  published: string;
  updated: string;
  author: AtomPerson;
  category?: AtomCategory | undefined;
  /** Plain text. */
  summary: string;
  /** HTML, sent escaped as type="html". */
  contentHtml: string;
}

export interface AtomFeed {
  id: string;
  title: string;
  /** RFC 3339 date-time. */
  updated: string;
  /** The feed's own URL (rel="self"). */
  self: string;
  /** The HTML page it follows (rel="alternate"). */
  alternate: string;
  author: AtomPerson;
  entries: readonly AtomEntry[];
}

const text = (name: string, value: string, indent: string) => `${indent}<${name}>${xmlEscape(value)}</${name}>\n`;

function person(tag: 'author', p: AtomPerson, indent: string): string {
  const uri = p.uri === undefined ? '' : text('uri', p.uri, `${indent}  `);
  return `${indent}<${tag}>\n${text('name', p.name, `${indent}  `)}${uri}${indent}</${tag}>\n`;
}

function category(c: AtomCategory, indent: string): string {
  const label = c.label === undefined ? '' : ` label="${xmlEscape(c.label)}"`;
  const scheme = c.scheme === undefined ? '' : ` scheme="${xmlEscape(c.scheme)}"`;
  return `${indent}<category term="${xmlEscape(c.term)}"${scheme}${label}/>\n`;
}

function entry(e: AtomEntry): string {
  return (
    '  <entry>\n' +
    text('id', e.id, '    ') +
    `    <title type="text">${xmlEscape(e.title)}</title>\n` +
    `    <link rel="alternate" type="text/html" href="${xmlEscape(e.link)}"/>\n` +
    text('published', e.published, '    ') +
    text('updated', e.updated, '    ') +
    person('author', e.author, '    ') +
    (e.category ? category(e.category, '    ') : '') +
    `    <summary type="text">${xmlEscape(e.summary)}</summary>\n` +
    `    <content type="html">${xmlEscape(e.contentHtml)}</content>\n` +
    '  </entry>\n'
  );
}

export function atomFeed(f: AtomFeed): string {
  return (
    '<?xml version="1.0" encoding="utf-8"?>\n' +
    '<feed xmlns="http://www.w3.org/2005/Atom">\n' +
    text('id', f.id, '  ') +
    `  <title type="text">${xmlEscape(f.title)}</title>\n` +
    text('updated', f.updated, '  ') +
    `  <link rel="self" type="application/atom+xml" href="${xmlEscape(f.self)}"/>\n` +
    `  <link rel="alternate" type="text/html" href="${xmlEscape(f.alternate)}"/>\n` +
    person('author', f.author, '  ') +
    f.entries.map(entry).join('') +
    '</feed>\n'
  );
}
