import { describe, expect, it } from 'vitest';
import { filterExpressions, quoteFilterValue } from '../../../src/search/meilisearch/filter.ts';
import { pageWindow } from '../../../src/search/meilisearch/page-window.ts';
import { allowedTypos, parseQuery, queryText, textWords } from '../../../src/search/words.ts';

describe('words of a text', () => {
  it('lowercases, strips diacritics, expands ligatures and splits on every non-letter', () => {
    expect(textWords('Café CRÈME, ﬁle-sharing; don’t Œuvre 3.5')).toEqual(['cafe', 'creme', 'file', 'sharing', 'don', 't', 'oeuvre', '3', '5']);
  });

  it('does not index words longer than 250 bytes', () => {
    expect(textWords(`short ${'x'.repeat(251)} ${'é'.repeat(125)}`)).toEqual(['short', 'e'.repeat(125)]);
    expect(textWords('ж'.repeat(126))).toEqual([]);
  });
});

describe('words of a query', () => {
  it('allows typos by length in characters: none up to 4, one from 5, two from 9', () => {
    expect(['tape', 'tapes', 'keyboard', 'schedules', 'собак'].map((w) => allowedTypos(w))).toEqual([0, 1, 1, 2, 1]);
  });

  it('makes the last word a prefix unless the query goes on after it', () => {
    expect(parseQuery('Web apps')).toEqual([
      { word: 'web', prefix: false, typos: 0 },
      { word: 'apps', prefix: true, typos: 0 },
    ]);
    expect(parseQuery('web apps ').map((w) => w.prefix)).toEqual([false, false]);
    expect(parseQuery('web apps!').map((w) => w.prefix)).toEqual([false, false]);
  });

  it('reads ten words at most; an eleventh ends the prefix', () => {
    const ten = Array.from({ length: 10 }, (_, i) => `w${i}`).join(' ');
    expect(parseQuery(ten).at(-1)).toEqual({ word: 'w9', prefix: true, typos: 0 });
    const words = parseQuery(`${ten} w10`);
    expect(words).toHaveLength(10);
    expect(words.at(-1)?.prefix).toBe(false);
  });

  it('has no words when the query has no letter or digit', () => {
    expect(parseQuery('!! --')).toEqual([]);
    expect(parseQuery(undefined)).toEqual([]);
  });

  it('gives Meilisearch the parsed words, keeping the prefix rule and dropping operators', () => {
    expect(queryText(parseQuery('"exact phrase" -not Café'))).toBe('exact phrase not cafe');
    expect(queryText(parseQuery('apps '))).toBe('apps ');
    expect(queryText(parseQuery('!!'))).toBe('');
  });

  it('honours a disabled typo tolerance', () => {
    expect(parseQuery('schedules', null)[0]?.typos).toBe(0);
  });
});

describe('Meilisearch request parts', () => {
  it('quotes filter values so a quote or backslash cannot end the string', () => {
    expect(quoteFilterValue('design')).toBe('"design"');
    expect(quoteFilterValue('x" OR category = "y')).toBe('"x\\" OR category = \\"y"');
    expect(quoteFilterValue('a\\')).toBe('"a\\\\"');
    expect(filterExpressions({ category: 'a', label: 'b', tag: 'c' })).toEqual(['category = "a"', 'labels = "b"', 'tags = "c"']);
    expect(filterExpressions({})).toEqual([]);
  });

  it('reads an offset/limit slice as one page with exact totals', () => {
    expect(pageWindow(0, 20)).toEqual({ page: 1, hitsPerPage: 20, skip: 0 });
    expect(pageWindow(24_950, 50)).toEqual({ page: 500, hitsPerPage: 50, skip: 0 });
    for (const [offset, limit] of [[2, 4], [3, 3], [7, 5], [24_949, 50], [1, 1], [13, 7]] as const) {
      const { page, hitsPerPage, skip } = pageWindow(offset, limit);
      expect(hitsPerPage).toBeGreaterThanOrEqual(limit);
      expect((page - 1) * hitsPerPage + skip).toBe(offset);
      expect(skip + limit).toBeLessThanOrEqual(hitsPerPage);
    }
  });
});
