import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatLineError, parseCatalogLine, type ListingLine } from '../../../../src/catalog/listings/listing-input.ts';
import { sanitizeDescription } from '../../../../src/catalog/listings/sanitize-description.ts';

const base = {
  kind: 'listing',
  slug: 'pixel-forge',
  name: 'Pixel Forge',
  punchline: 'Design tools for teams',
  description: '<p>Hello</p>',
  website: 'https://pixelforge.example',
};

function listing(fields: Record<string, unknown>): ListingLine {
  const parsed = parseCatalogLine(JSON.stringify({ ...base, ...fields }), 1);
  if (!parsed.ok) throw new Error(parsed.errors.map(formatLineError).join('\n'));
  if (parsed.value.kind !== 'listing') throw new Error('not a listing');
  return parsed.value;
}

function problems(fields: Record<string, unknown>, line = 1): string[] {
  const parsed = parseCatalogLine(JSON.stringify({ ...base, ...fields }), line);
  return parsed.ok ? [] : parsed.errors.map(formatLineError);
}

describe('a listing line', () => {
  it('gets the documented defaults', () => {
    expect(listing({})).toEqual({
      ...base,
      logo: null,
      cover: null,
      category: null,
      labels: [],
      tags: [],
      product_type: null,
      pricing_model: null,
      social: null,
      featured: false,
      listed_at: null,
      highlights: [],
      ideal_for: [],
      faq: [],
      promo: null,
      status: 'live',
      plan: 'free',
    });
  });

  it('accepts a whole exported Product, ignoring its url', () => {
    const exported = {
      id: '0A4F5F4E-6F0E-4B8E-9B1A-000000000001',
      url: 'https://directory.example/products/pixel-forge',
      logo: 'https://pixelforge.example/logo.png',
      cover: null,
      category: 'design',
      labels: ['new'],
      tags: ['ai', 'images'],
      product_type: 'software',
      pricing_model: 'freemium',
      social: 'pixelforge',
      featured: true,
      listed_at: '2026-01-31T09:00:00Z',
      highlights: ['Fast'],
      ideal_for: ['Designers'],
      faq: [{ question: 'Free?', answer: 'Yes.' }],
      promo: { code: 'LAUNCH', discount: '20% off', url: null, expires_at: '2026-12-31' },
    };
    const value = listing(exported);
    expect(value).not.toHaveProperty('url', undefined);
    expect(value.id).toBe('0a4f5f4e-6f0e-4b8e-9b1a-000000000001');
    expect(value.promo).toEqual(exported.promo);
    expect(value.featured).toBe(true);
  });

  it('normalizes: handle without @, trimmed text, labels and tags without repeats', () => {
    const value = listing({ social: '@pixelforge', name: '  Pixel Forge  ', labels: ['new', 'new', 'trending'], tags: ['b', 'a', 'b'] });
    expect(value.social).toBe('pixelforge');
    expect(value.name).toBe('Pixel Forge');
    expect(value.labels).toEqual(['new', 'trending']);
    expect(value.tags).toEqual(['b', 'a']);
  });

  it('fills promo url and expires_at with null when left out', () => {
    expect(listing({ promo: { code: 'X', discount: 'Y' } }).promo).toEqual({ code: 'X', discount: 'Y', url: null, expires_at: null });
  });

  it('names each rejected field by its dotted path', () => {
    expect(
      problems(
        {
          slug: 'Not A Slug',
          name: '',
          punchline: 'x'.repeat(301),
          website: 'ftp://pixelforge.example',
          labels: ['ok', 'Bad Label'],
          faq: [{ question: 'Q?\u0007', answer: '' }],
          promo: { code: 'X', discount: 'Y', expires_at: '2026-02-29' },
          status: 'archived',
          plan: 'gold',
          colour: 'red',
        },
        7,
      ),
    ).toEqual([
      'line 7: slug: must be a slug: lowercase letters and digits in words joined by single hyphens',
      'line 7: name: must not be empty',
      'line 7: punchline: must be at most 300 characters',
      'line 7: website: must be an http(s) URL with a domain name',
      'line 7: labels.1: must be a slug: lowercase letters and digits in words joined by single hyphens',
      'line 7: faq.0.question: must not contain control characters (other than tab and line breaks)',
      'line 7: faq.0.answer: must not be empty',
      'line 7: promo.expires_at: must be a calendar date yyyy-mm-dd',
      'line 7: status: must be one of draft, pending, live, rejected, hidden',
      'line 7: plan: must be free or premium',
      'line 7: colour: is not a known field',
    ]);
  });

  it('enforces the limits', () => {
    expect(problems({ slug: 'a'.repeat(201) })).toEqual(['line 1: slug: must be at most 200 characters']);
    expect(problems({ slug: 'a'.repeat(200) })).toEqual([]);
    expect(problems({ name: 'n'.repeat(201) })).toEqual(['line 1: name: must be at most 200 characters']);
    expect(problems({ description: 'd'.repeat(100_001) })).toEqual(['line 1: description: must be at most 100000 characters']);
    expect(problems({ description: 'd'.repeat(100_000) })).toEqual([]);
    expect(problems({ tags: Array.from({ length: 51 }, (_, i) => `t${i}`) })).toEqual(['line 1: tags: must have at most 50 tags']);
    expect(problems({ listed_at: '2026-01-31' })).toEqual([
      'line 1: listed_at: must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T09:00:00Z',
    ]);
    expect(problems({ listed_at: '2026-01-31T09:00:00+02:00' })).toEqual([]);
    expect(problems({ promo: { code: 'X', discount: 'Y', expires_at: '2028-02-29' } })).toEqual([]);
    expect(problems({ promo: { code: 'X', discount: 'Y', expires_at: '2026-04-31' } })).toEqual([
      'line 1: promo.expires_at: must be a calendar date yyyy-mm-dd',
    ]);
    expect(problems({ logo: 'javascript:alert(1)' })).toEqual(['line 1: logo: must be an http(s) URL with a domain name']);
    expect(problems({ id: 'not-a-uuid' })).toEqual(['line 1: id: must be a UUID']);
    expect(problems({ maker_email: 'nobody' })).toEqual(['line 1: maker_email: must be an e-mail address']);
    expect(problems({ social: '@' })).toEqual(['line 1: social: must be a handle such as "pixelforge": not empty, no spaces, no URL']);
    expect(problems({ social: 'https://x.example/upper' })).toEqual(['line 1: social: must be a handle such as "pixelforge": not empty, no spaces, no URL']);
    expect(problems({ social: 'maker@mastodon.example' })).toEqual([]);
    expect(problems({ listed_at: '2999-01-01T00:00:00Z' })).toEqual(['line 1: listed_at: must not be in the future']);
    expect(problems({ listed_at: new Date(Date.now() - 1000).toISOString() })).toEqual([]);
    expect(problems({ faq: [{ question: 'Q' }] })).toEqual(['line 1: faq.0.answer: is required']);
  });

  it('reports missing required fields as required', () => {
    const parsed = parseCatalogLine(JSON.stringify({ kind: 'listing', slug: 'x' }), 3);
    expect(parsed.ok ? [] : parsed.errors.map(formatLineError)).toEqual([
      'line 3: name: is required',
      'line 3: punchline: is required',
      'line 3: description: is required',
      'line 3: website: is required',
    ]);
  });
});

describe('a line', () => {
  it('must be a JSON object of a known kind', () => {
    const errors = (raw: string) => {
      const parsed = parseCatalogLine(raw, 2);
      return parsed.ok ? [] : parsed.errors.map(formatLineError);
    };
    expect(errors('{"kind":')[0]).toMatch(/^line 2: json: is not valid JSON/);
    expect(errors('[1,2]')).toEqual(['line 2: json: must be a JSON object']);
    expect(errors('{"slug":"x"}')).toEqual(['line 2: kind: is required: category or listing']);
    expect(errors('{"kind":"product"}')).toEqual(['line 2: kind: must be category or listing']);
    expect(errors('{"kind":"category","slug":"design","name":"Design"}')).toEqual(['line 2: noun: is required']);
  });
});

describe('the description sanitizer', () => {
  it('keeps the allowed formatting', () => {
    const html =
      '<h2>Title</h2><p>Some <strong>bold</strong>, <b>b</b>, <em>em</em>, <i>i</i>, <u>u</u>, <s>s</s><br></p>' +
      '<ul><li>one</li></ul><ol><li>two</li></ol><h3>Sub</h3><h4>Subsub</h4><blockquote>quote</blockquote><pre><code>x &lt; y</code></pre>';
    expect(sanitizeDescription(html)).toBe(html.replace('<br>', '<br />'));
  });

  it('removes scripts, styles, event handlers and javascript: links', () => {
    const out = sanitizeDescription(
      '<p onclick="steal()" style="color:red">Hi<script>alert(1)</script><style>p{}</style></p>' +
        '<a href="javascript:alert(1)">bad</a><a href=" JAVASCRIPT:alert(2)">worse</a><img src=x onerror="alert(3)">' +
        '<iframe src="https://evil.example">frame</iframe>',
    );
    expect(out).toBe('<p>Hi</p>badworse');
  });

  it('marks kept links nofollow and opens them in a new tab; drops other link targets', () => {
    expect(sanitizeDescription('<a href="https://x.example/a?b=1&c=2" rel="dofollow" target="_self" class="c">x</a>')).toBe(
      '<a href="https://x.example/a?b=1&amp;c=2" rel="nofollow noopener" target="_blank">x</a>',
    );
    expect(sanitizeDescription('<a href="mailto:hi@x.example">mail</a>')).toBe(
      '<a href="mailto:hi@x.example" rel="nofollow noopener" target="_blank">mail</a>',
    );
    expect(sanitizeDescription('<a href="/relative">r</a><a href="//x.example">p</a><a href="data:text/html,x">d</a><a>n</a>')).toBe('rpdn');
  });

  it('is stable: sanitizing its own output changes nothing', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.constantFrom('<p>', '</p>', '<a href="https://x.example/?a=1&b=2">', '</a>', '<b>', '</b>', '<script>', '</script>', '<br>', '&amp;', '&lt;', '"', "'"),
            fc.string({ maxLength: 5 }),
          ),
          { maxLength: 20 },
        ),
        (parts) => {
          const once = sanitizeDescription(parts.join(''));
          expect(sanitizeDescription(once)).toBe(once);
        },
      ),
    );
  });
});
