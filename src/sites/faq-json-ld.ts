import type { Document } from 'domhandler';
import { findAll, getAttributeValue, textContent } from 'domutils';
import { LISTING_LIMITS } from '../contract/listing-limits.ts';
import { capText, collapseWhitespace, plainText } from './html-text.ts';

/**
 * The questions and answers a site publishes as a schema.org FAQPage in JSON-LD, ready to fill a
 * listing's FAQ. Scripts of type application/ld+json are read where sites put the FAQPage: as
 * the top-level object, inside a top-level array, or in an `@graph`. Each Question's `name` (or
 * `text`) is the question and its acceptedAnswer's `text` the answer; both are reduced to plain
 * text (answers often carry HTML) and capped like a listing's FAQ: 30 items, questions 300
 * characters, answers 5000. Scripts that are not valid JSON are skipped, after one retry with raw
 * line breaks inside strings (a common publishing slip) turned into spaces.
 */

export interface FaqEntry {
  question: string;
  answer: string;
}

const FAQ_LIMITS = {
  items: LISTING_LIMITS.faqMax,
  question: LISTING_LIMITS.faqQuestionMax,
  answer: LISTING_LIMITS.faqAnswerMax,
} as const;

type Json = unknown;

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function asList(v: Json): Json[] {
  return Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
}

/** schema.org types appear as "FAQPage", "schema:FAQPage" or "https://schema.org/FAQPage". */
function hasType(node: Record<string, Json>, type: string): boolean {
  return asList(node['@type']).some((t) => typeof t === 'string' && t.split(/[/:#]/).pop() === type);
}

function parseJson(text: string): Json {
  try {
    return JSON.parse(text);
  } catch {
    try {
      return JSON.parse(text.replace(/[\r\n\t]+/g, ' '));
    } catch {
      return undefined;
    }
  }
}

function firstString(...values: Json[]): string | undefined {
  for (const v of values) if (typeof v === 'string' && v.trim() !== '') return v;
  return undefined;
}

function entryOf(item: Json): FaqEntry | undefined {
  if (!isObject(item)) return undefined;
  if (item['@type'] !== undefined && !hasType(item, 'Question')) return undefined;
  const questionHtml = firstString(item.name, item.text);
  const answerHtml = asList(item.acceptedAnswer)
    .map((a) => (isObject(a) ? firstString(a.text) : undefined))
    .find((t) => t !== undefined);
  if (!questionHtml || !answerHtml) return undefined;
  const question = capText(collapseWhitespace(plainText(questionHtml)), FAQ_LIMITS.question);
  const answer = capText(plainText(answerHtml), FAQ_LIMITS.answer);
  return question && answer ? { question, answer } : undefined;
}

/** The FAQPage nodes of one JSON-LD document. */
function faqPages(doc: Json): Record<string, Json>[] {
  const pages: Record<string, Json>[] = [];
  for (const node of asList(doc)) {
    if (!isObject(node)) continue;
    if (hasType(node, 'FAQPage')) pages.push(node);
    for (const inner of asList(node['@graph'])) if (isObject(inner) && hasType(inner, 'FAQPage')) pages.push(inner);
  }
  return pages;
}

function isJsonLd(type: string | undefined): boolean {
  return (type ?? '').split(';')[0]!.trim().toLowerCase() === 'application/ld+json';
}

export function extractFaq(document: Document): FaqEntry[] {
  const entries: FaqEntry[] = [];
  const seen = new Set<string>();
  const scripts = findAll((el) => el.name === 'script' && isJsonLd(getAttributeValue(el, 'type')), document.children);
  for (const script of scripts) {
    for (const page of faqPages(parseJson(textContent(script)))) {
      for (const item of asList(page.mainEntity)) {
        const entry = entryOf(item);
        if (!entry || seen.has(entry.question)) continue;
        seen.add(entry.question);
        entries.push(entry);
        if (entries.length === FAQ_LIMITS.items) return entries;
      }
    }
  }
  return entries;
}
