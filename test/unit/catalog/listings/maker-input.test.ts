import { describe, expect, it } from 'vitest';
import { listingChangesSchema, makerIssues, renderDescription, submissionSchema } from '../../../../src/catalog/listings/maker-input.ts';

function issues(input: unknown, schema: typeof submissionSchema | typeof listingChangesSchema = submissionSchema) {
  const parsed = schema.safeParse(input);
  return parsed.success ? [] : makerIssues(parsed.error);
}

describe('what a maker may write', () => {
  it('accepts a complete submission and normalizes it', () => {
    const parsed = submissionSchema.parse({
      website: 'example.com/app?utm_source=x',
      name: '  Pixel Forge ',
      punchline: 'Pixel art, fast',
      category: 'Design',
      social: '@@pixel',
      tags: ['Pixel Art', 'ai'],
      plan: 'premium',
    });
    expect(parsed).toMatchObject({ website: 'https://example.com/app', name: 'Pixel Forge', category: 'design', social: 'pixel', tags: ['pixel-art', 'ai'] });
  });

  it('refuses markup in plain-text fields and names the field', () => {
    for (const field of ['name', 'punchline'] as const) {
      for (const value of ['<b>x</b>', 'a</p>', 'x &#60;script', 'javascript:alert(1)', 'tab\u0007bell']) {
        expect(issues({ website: 'https://example.com', [field]: value }).map((i) => i.path[0]), `${field}: ${value}`).toEqual([field]);
      }
    }
  });

  it('takes Markdown and the listing page\'s own tags in a description, and nothing else', () => {
    expect(issues({ website: 'https://example.com', description: '**bold** <em>ok</em> <a href="https://x.example">x</a>' })).toEqual([]);
    for (const bad of ['<script>alert(1)</script>', '<p onclick="x()">a</p>', '<img src="https://x.example/a.png">', '![i](https://x.example/i.png)', '[a](javascript:alert(1))', '<a href="javascript:alert(1)">x</a>', '<iframe src="https://x.example"></iframe>', '<style>p{}</style>']) {
      expect(issues({ website: 'https://example.com', description: bad }).map((i) => i.path[0]), bad).toEqual(['description']);
    }
  });

  it('renders a description to sanitized HTML with nofollow links', () => {
    expect(renderDescription('Hello [site](https://x.example)')).toBe('<p>Hello <a href="https://x.example" rel="nofollow noopener" target="_blank">site</a></p>');
  });

  it('enforces every limit at its boundary', () => {
    const site = 'https://example.com';
    expect(issues({ website: site, name: 'x'.repeat(200) })).toEqual([]);
    expect(issues({ website: site, name: 'x'.repeat(201) }).map((i) => i.path[0])).toEqual(['name']);
    expect(issues({ website: site, punchline: 'x'.repeat(300) })).toEqual([]);
    expect(issues({ website: site, punchline: 'x'.repeat(301) }).map((i) => i.path[0])).toEqual(['punchline']);
    expect(issues({ website: site, description: 'x'.repeat(20_000) })).toEqual([]);
    expect(issues({ website: site, description: 'x'.repeat(20_001) }).map((i) => i.path[0])).toEqual(['description']);
    expect(issues({ website: site, tags: Array.from({ length: 10 }, (_, i) => `t${i}`) })).toEqual([]);
    expect(issues({ website: site, tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }).map((i) => i.path[0])).toEqual(['tags']);
    expect(issues({ website: `https://example.com/${'a'.repeat(2048)}` }).map((i) => i.path[0])).toEqual(['website']);
  });

  it('refuses websites that are not public http(s) sites', () => {
    for (const website of ['javascript:alert(1)', 'ftp://example.com', 'http://127.0.0.1', 'http://localhost:3000', 'http://[::1]/', 'http://0x7f.1/', 'https://user:pw@example.com']) {
      expect(issues({ website }).map((i) => i.path[0]), website).toEqual(['website']);
    }
  });

  it('needs at least one change in an edit, and refuses fields an edit cannot set', () => {
    expect(issues({}, listingChangesSchema).length).toBe(1);
    expect(issues({ plan: 'premium' }, listingChangesSchema).map((i) => i.path[0])).toContain('plan');
    expect(issues({ tags: ['ai'] }, listingChangesSchema).map((i) => i.path[0])).toContain('tags');
    expect(issues({ social: null }, listingChangesSchema)).toEqual([]);
  });

  it('reads a new website in an edit by the rules of a submission', () => {
    expect(issues({ website: 'https://example.com' }, listingChangesSchema)).toEqual([]);
    expect(listingChangesSchema.parse({ website: 'example.com' })).toEqual({ website: 'https://example.com/' });
    for (const website of ['http://localhost/', 'http://127.0.0.1/', 'javascript:alert(1)', 'https://user:pw@example.com/']) {
      expect(issues({ website }, listingChangesSchema).map((i) => i.path[0]), website).toEqual(['website']);
    }
  });
});
