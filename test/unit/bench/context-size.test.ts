import { describe, expect, it } from 'vitest';
import { openingWords, sameAnswer, searchTextMisses, spread, tokens, withoutModernMembers } from '../../../bench/context-size.ts';

/** The context-size phase's pure parts: its token count, its figures, its comparison of the eras, and its check of the search text. */

describe('tokens', () => {
  it('counts o200k_base tokens, special-token markers as plain text', () => {
    expect(tokens('')).toBe(0);
    expect(tokens('hello world')).toBe(2);
    expect(tokens('a listing that says <|endoftext|> in its description')).toBeGreaterThan(8);
  });
});

describe('spread', () => {
  it('gives the median and the worst with what gave it', () => {
    expect(spread([{ of: 'a', value: 3 }, { of: 'b', value: 1 }, { of: 'c', value: 2 }])).toEqual({ median: 2, worst: 3, worstOf: 'a' });
    expect(spread([{ of: 'a', value: 1 }, { of: 'b', value: 4 }, { of: 'c', value: 2 }, { of: 'd', value: 3 }])).toEqual({ median: 2.5, worst: 4, worstOf: 'b' });
    expect(spread([]).median).toBeNaN();
  });
});

describe('comparing the eras', () => {
  const legacy = { content: [{ type: 'text', text: 'x' }], structuredContent: { slug: 'x' } };

  it('sets aside only the members of a 2026-07-28 result', () => {
    const modern = { ...legacy, resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'catalog' } }, ttlMs: 300000, cacheScope: 'public' };
    expect(withoutModernMembers(modern)).toEqual(legacy);
    expect(sameAnswer(legacy, modern)).toBe(true);
    expect(sameAnswer(legacy, { ...modern, structuredContent: { slug: 'y' } })).toBe(false);
    expect(sameAnswer(legacy, { ...modern, isError: true })).toBe(false);
  });
});

describe('searchTextMisses', () => {
  const products = [
    { slug: 'alpha-one', punchline: 'Plan sprints with your team', description: '<p>Alpha One is a planner &amp; tracker for teams.</p>', website: 'https://alpha.example', pricing_model: 'open_source' },
    { slug: 'beta-two', punchline: 'Write faster', description: '<h2>Why</h2><p>Beta Two drafts replies.</p>', website: 'https://beta.example', pricing_model: 'paid' },
  ];
  const text = [
    '1,234 live listings match, newest first: 1–2 on page 1 of 62 (20 a page).',
    '',
    '- Alpha One (alpha-one): Plan sprints with your team',
    '  Alpha One is a planner & tracker for teams.',
    '  open source · productivity · https://alpha.example',
    '- Beta Two (beta-two): Write faster',
    '  Why: Beta Two drafts replies.',
    '  paid · writing · https://beta.example',
  ].join('\n');

  it('finds every hit named, and the total', () => {
    expect(openingWords(products[0]!.description)).toBe('Alpha One is a');
    expect(searchTextMisses(text, { products, total: 1234 })).toEqual([]);
  });

  it('names what is missing, looking in each hit\'s own part of the text', () => {
    expect(searchTextMisses(text.replace('https://beta.example', ''), { products, total: 1234 })).toEqual(['beta-two: website']);
    // The first hit's pricing is not borrowed from the second's.
    expect(searchTextMisses(text.replace('open source', ''), { products: products.map((p) => ({ ...p, pricing_model: 'paid' })), total: 1234 })).toEqual(['alpha-one: pricing model']);
    expect(searchTextMisses(text, { products, total: 999 })).toEqual(['the total (999)']);
    expect(searchTextMisses(text.replace('(beta-two)', ''), { products, total: 1234 })).toEqual(['beta-two: the hit itself']);
    expect(searchTextMisses(text.replace('Alpha One is a', 'It is a'), { products, total: 1234 })).toEqual(['alpha-one: description']);
  });
});

describe('searchTextMisses on a JSON text', () => {
  it('finds every hit of the REST body itself named (what the text block was before it was written for a model)', () => {
    const rest = {
      products: [
        { slug: 'alpha', name: 'Alpha', punchline: 'Plan sprints', description: '<p>Alpha plans sprints.</p>', website: 'https://alpha.example', pricing_model: 'open_source' },
        { slug: 'alpha-two', name: 'Alpha Two', punchline: 'Write faster', description: '<p>Alpha Two writes.</p>', website: 'https://alpha2.example', pricing_model: null },
      ],
      total: 2,
    };
    expect(searchTextMisses(JSON.stringify(rest), rest)).toEqual([]);
    // A slug inside a longer one is not its hit.
    expect(searchTextMisses(JSON.stringify({ ...rest, products: [rest.products[1]] }), rest)).toEqual(['alpha: the hit itself']);
  });
});
