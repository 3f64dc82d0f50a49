import { Parser } from 'htmlparser2';
import type { Category, Product } from '../contract/schemas.ts';

/**
 * The text block of the read tools' results: what a model reads. The structured result
 * (`structuredContent`) is the REST body, exactly; the text says the same in plain words, for a
 * fraction of the tokens a JSON copy would cost (docs/decisions.md: "The read tools' text"):
 * no ids, nulls, empty lists, markup or repeated keys; descriptions as plain text; every link a
 * model must show (the listing page) spelt out.
 *
 * Sizes: a search hit gives the description's opening (at most SEARCH_EXCERPT characters, cut at
 * a word), since a result list is for choosing and get_product gives the whole; get_product's
 * text keeps within a budget of the REST body's size (PRODUCT_TEXT_SHARE of it): the
 * description is shortened first, and a shortened text says where the rest is.
 */

const SEARCH_EXCERPT = 240;
/**
 * get_product's text: at most this share of the product's JSON in bytes, less what the rest of
 * the answer takes besides the JSON and the text (RESULT_OVERHEAD: the JSON-RPC envelope and,
 * in the 2026-07-28 era, `resultType` and the server's identity, about 270 bytes), and never
 * below PRODUCT_TEXT_MIN; so the whole answer stays within 1.6 times the JSON in both eras, with
 * the same text in both, for any listing of more than about 1 KB of JSON (a smaller one gets the
 * floor: its name, facts, page and description's opening are worth the few bytes over).
 */
const PRODUCT_TEXT_SHARE = 0.6;
const RESULT_OVERHEAD = 290;
const PRODUCT_TEXT_MIN = 360;
/** get_product's text keeps this much of the description (bytes) before its other sections, all of a shorter one… */
const DESCRIPTION_OPENING = 100;
/** …and leaves it out when the budget leaves less than this (a few words say nothing). */
const DESCRIPTION_LEAST = 30;

const PRICING: Record<string, string> = { free: 'free', freemium: 'freemium', paid: 'paid', open_source: 'open source' };
const TYPES: Record<string, string> = { software: 'software', digital_product: 'digital product' };

const BLOCK = /^(p|div|h[1-6]|blockquote|pre|br|tr)$/;
const LIST = /^(ul|ol)$/;

/**
 * An HTML description as one line of plain text: paragraphs run on, a heading ends with a colon,
 * list items are joined with semicolons and the list ends with a full stop, entities decoded.
 */
function descriptionText(html: string): string {
  let out = '';
  let itemsInList = 0;
  let skipping = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (skipping || name === 'script' || name === 'style') {
          skipping++;
          return;
        }
        if (name === 'li') out += itemsInList++ > 0 ? '; ' : ' ';
        else if (LIST.test(name)) itemsInList = 0;
        else if (BLOCK.test(name)) out += ' ';
      },
      ontext(text) {
        if (!skipping) out += text;
      },
      onclosetag(name) {
        if (skipping) {
          skipping--;
          return;
        }
        if (/^h[1-6]$/.test(name)) out += ':';
        else if (LIST.test(name)) {
          if (itemsInList > 0) out += '.';
          itemsInList = 0;
        }
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return out
    .replace(/\s+/g, ' ')
    .replace(/ ([;:.,])/g, '$1')
    .replace(/([.!?:;])[.:]+/g, '$1')
    .trim();
}

/** At most `max` characters, cut after a whole word, with an ellipsis when cut. */
function excerpt(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, '')}…`;
}

/** An excerpt of at most `maxBytes` bytes in a JSON string. */
function excerptBytes(text: string, maxBytes: number): string {
  let chars = maxBytes;
  let cut = excerpt(text, chars);
  while (chars > 1 && Buffer.byteLength(JSON.stringify(cut)) - 2 > maxBytes) {
    chars = Math.floor(chars * 0.9);
    cut = excerpt(text, chars);
  }
  return cut;
}

function facts(p: Product): string {
  const parts: string[] = [];
  if (p.pricing_model) parts.push(PRICING[p.pricing_model] ?? p.pricing_model);
  if (p.category) parts.push(p.category);
  parts.push(p.website);
  return parts.join(' · ');
}

/** One hit of a search: name, slug and tagline; the description's opening; pricing, category and site. */
function searchHit(p: Product): string {
  const featured = p.featured ? ' [featured]' : '';
  return `- ${p.name} (${p.slug})${featured}: ${p.punchline}\n  ${excerpt(descriptionText(p.description), SEARCH_EXCERPT)}\n  ${facts(p)}`;
}

/**
 * The listing page of a slug, as a pattern on the catalog's own listing pages: every product of
 * one answer has its page at the same place, so the address is written once.
 */
function pagePattern(products: readonly Product[]): string | undefined {
  const first = products[0];
  if (!first) return undefined;
  const suffix = `/${first.slug}`;
  if (!first.url.endsWith(suffix)) return undefined;
  const base = first.url.slice(0, -suffix.length);
  return products.every((p) => p.url === `${base}/${p.slug}`) ? `${base}/{slug}` : undefined;
}

const int = (n: number) => n.toLocaleString('en-US');

export interface SearchEnvelope {
  products: Product[];
  total: number;
  page: number;
  limit: number;
}

export function searchText(result: SearchEnvelope): string {
  const { products, total, page, limit } = result;
  const pages = Math.max(1, Math.ceil(total / limit));
  const matching = total === 1 ? '1 live listing matches' : `${int(total)} live listings match`;
  if (products.length === 0) {
    return total === 0 ? 'No live listing matches.' : `${matching}, but page ${page} (${limit} a page) is past the last page, ${pages}.`;
  }
  const first = (page - 1) * limit + 1;
  const shown = products.length === 1 ? `${int(first)}` : `${int(first)}–${int(first + products.length - 1)}`;
  const lines = [`${matching}, newest first: ${shown} on page ${page} of ${int(pages)} (${limit} a page).`];
  const pattern = pagePattern(products);
  lines.push(
    pattern
      ? `Each listing's page is ${pattern}: link its name there wherever you show it. get_product gives a listing in full.`
      : 'Link each listing to its page (url in the structured result) wherever you show it. get_product gives a listing in full.',
  );
  lines.push('');
  for (const p of products) {
    lines.push(searchHit(p));
    if (!pattern) lines.push(`  page ${p.url}`);
  }
  return lines.join('\n');
}

/** List items that end in a full stop, joined without doubling it. */
function joined(items: readonly string[]): string {
  return items.map((i) => i.trim().replace(/[.;]+$/, '')).join('; ');
}

/**
 * One listing, within `budget` bytes: identity, facts and its page first, then the description,
 * the promo, the premium profile, labels and tags. When the whole does not fit, the
 * description is shortened first (to its opening), then the sections at the end are left out
 * one by one, FAQ answers before questions, the promo last, then the description gets what room is left; the
 * text then ends by naming the resource that holds the whole listing.
 */
export function productText(p: Product, budget: number, resourceUri: string): string {
  const head = [
    `${p.name} (${p.slug})${p.featured ? ' [featured]' : ''}: ${p.punchline}`,
    [facts(p), p.product_type ? TYPES[p.product_type] : undefined, p.social ? `@${p.social}` : undefined].filter(Boolean).join(' · '),
    `Page: ${p.url}`,
  ];
  const description = descriptionText(p.description);
  // What may be left out, most dispensable last: the promo is the last to go.
  const optional: string[][] = [];
  if (p.promo) {
    const until = p.promo.expires_at ? `until ${p.promo.expires_at}` : 'no end date';
    optional.push([`Promo code ${p.promo.code}: ${p.promo.discount} (${until}${p.promo.url ? `; at ${p.promo.url}` : ''})`]);
  }
  if (p.highlights.length) optional.push([`Highlights: ${joined(p.highlights)}`]);
  if (p.ideal_for.length) optional.push([`Ideal for: ${joined(p.ideal_for)}`]);
  if (p.faq.length) {
    optional.push([`FAQ: ${p.faq.map((f) => f.question).join(' | ')}`, `FAQ: ${p.faq.map((f) => `${f.question} ${f.answer}`).join(' | ')}`]);
  }
  const tags = [p.labels.length ? `labels ${p.labels.join(', ')}` : '', p.tags.length ? `tags ${p.tags.join(', ')}` : ''].filter(Boolean).join(' · ');
  if (tags) optional.push([tags]);
  // Bytes as the text is sent: inside a JSON string.
  const bytes = (lines: readonly string[]) => Buffer.byteLength(JSON.stringify(lines.join('\n'))) - 2;
  // Each optional section at its fullest form.
  let chosen = optional.map((forms) => forms[forms.length - 1]!);
  const whole = [...head, description, ...chosen];
  if (bytes(whole) <= budget) return whole.join('\n');
  const note = `(More: ${resourceUri})`;
  const fixed = () => bytes([...head, ...chosen, note]) + 1;
  // The description keeps its opening while the sections can make room for it…
  const opening = Math.min(Buffer.byteLength(description), DESCRIPTION_OPENING);
  let room = budget - fixed();
  // …which they do from the end: FAQ answers first, then each section in turn.
  let i = optional.length - 1;
  while (room < opening && i >= 0) {
    const forms = optional[i]!;
    const at = forms.indexOf(chosen[i]!);
    if (at > 0) chosen[i] = forms[at - 1]!;
    else {
      chosen = chosen.filter((_, k) => k !== i);
      optional.splice(i, 1);
      i--;
    }
    room = budget - fixed();
  }
  // The budget holds: what room is left for the description, or none when it would be a few words.
  const shortened = room >= DESCRIPTION_LEAST ? [excerptBytes(description, room)] : [];
  return [...head, ...shortened, ...chosen, note].join('\n');
}

/** The byte budget of a product's text: what keeps the whole result within 1.6 times the JSON's size. */
export function productTextBudget(jsonBytes: number): number {
  return Math.max(PRODUCT_TEXT_MIN, Math.floor(jsonBytes * PRODUCT_TEXT_SHARE) - RESULT_OVERHEAD);
}

export function categoriesText(categories: readonly Category[]): string {
  const live = categories.reduce((n, c) => n + c.count, 0);
  return [
    `${categories.length} categories, ${int(live)} live listings (slug: name, count). Use a slug as search_products' category; link a category to its page, ${categoryPattern(categories) ?? 'its url'}.`,
    ...categories.map((c) => `- ${c.slug}: ${c.name}, ${int(c.count)} ${c.noun}`),
  ].join('\n');
}

function categoryPattern(categories: readonly Category[]): string | undefined {
  const first = categories[0];
  if (!first) return undefined;
  const suffix = `/${first.slug}`;
  if (!first.url.endsWith(suffix)) return undefined;
  const base = first.url.slice(0, -suffix.length);
  return categories.every((c) => c.url === `${base}/${c.slug}`) ? `${base}/{slug}` : undefined;
}
