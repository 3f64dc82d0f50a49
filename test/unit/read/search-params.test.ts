import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CatalogError } from '../../../src/contract/errors.ts';
import { parseNoParams, parseProductSlug, parseProductSlugWithSchema, parseSearchParams, parseSearchParamsWithSchema } from '../../../src/read/params.ts';

/**
 * Search parameters are read without the schema when they plainly pass it (the common case, on
 * every request); that reading must never differ from the schema's, on any input: the same
 * query, or the same rejection with the same issues.
 */
function outcome(parse: (input: unknown) => unknown, input: unknown): unknown {
  try {
    return { ok: parse(input) };
  } catch (err) {
    if (err instanceof CatalogError) return { error: err.toBody() };
    throw err;
  }
}

const text = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ minLength: 95, maxLength: 105 }),
  fc.constantFrom('', ' ', '  ab  ', 'a\u0301', 'design', 'developer-tools', 'a--b', '-a', 'A', 'x'.repeat(200), 'x'.repeat(201), '"\'', '😀😀'),
  fc.constantFrom('0', '1', '2', '20', '50', '51', '500', '501', '-1', '+2', ' 2', '1e1', '1.5', '007'),
);
const value = fc.oneof(
  text,
  fc.integer({ min: -5, max: 600 }),
  fc.double(),
  fc.constantFrom(null, true, 0, -0, 1.5, Number.MAX_SAFE_INTEGER),
  fc.array(text, { maxLength: 2 }),
);
/** Values near each parameter's bounds, mostly, and now and then anything at all. */
const near = (...values: unknown[]) => fc.oneof({ arbitrary: fc.constantFrom(...values), weight: 4 }, { arbitrary: value, weight: 1 });
const bound = (min: number, max: number) => near(min - 1, min, max, max + 1, String(min - 1), String(min), String(max), String(max + 1), `${min}.0`, min + 0.5);
const params = fc
  .tuple(
    fc.record(
      {
        q: near('ab', ' ab ', 'a', 'x'.repeat(100), 'x'.repeat(101), ` ${'x'.repeat(100)} `, '!!', 'a\u0301b', 'e\u0301'.repeat(50), 'Grow ideas'),
        category: near('design', 'developer-tools', 'Design', 'a--b', '', 'x'.repeat(200), 'x'.repeat(201)),
        label: near('new', 'editors-pick', '-new'),
        tag: near('ai', 'ai2', 'a_i'),
        page: bound(1, 500),
        limit: bound(1, 50),
      },
      { requiredKeys: [] },
    ),
    fc.option(fc.dictionary(fc.constantFrom('sort', 'Q', ''), value, { maxKeys: 1 }), { freq: 4 }),
  )
  .map(([known, unknown]) => ({ ...known, ...unknown }));

describe('search parameters read without the schema', () => {
  it('agree with the schema on any input', () => {
    fc.assert(
      fc.property(params, (input) => {
        expect(outcome(parseSearchParams, input)).toEqual(outcome(parseSearchParamsWithSchema, input));
      }),
      { numRuns: 5000 },
    );
  });

  it.each([
    [{}, { page: 1, limit: 20 }],
    [undefined, { page: 1, limit: 20 }],
    [{ q: '  Pixel  ', page: '2', limit: 5 }, { q: 'Pixel', page: 2, limit: 5 }],
    [{ category: 'design', label: 'new', tag: 'ai' }, { page: 1, limit: 20, category: 'design', label: 'new', tag: 'ai' }],
  ])('read %o as %o', (input, query) => {
    expect(parseSearchParams(input)).toEqual(query);
  });
});

describe('parameters of the other reads', () => {
  it('a product slug read without the schema agrees with it', () => {
    const slugInput = fc.oneof(fc.dictionary(fc.constantFrom('slug', 'format'), value, { maxKeys: 2 }), value);
    fc.assert(
      fc.property(slugInput, (input) => {
        expect(outcome(parseProductSlug, input)).toEqual(outcome(parseProductSlugWithSchema, input));
      }),
      { numRuns: 3000 },
    );
  });

  it('no parameter at all passes; each one given is named', () => {
    expect(() => parseNoParams({})).not.toThrow();
    expect(() => parseNoParams(undefined)).not.toThrow();
    expect(outcome(parseNoParams, { sort: 'name', limit: 2 })).toEqual({
      error: {
        code: 'BAD_REQUEST',
        message: "Invalid request: 'sort', 'limit' were rejected; see data.issues.",
        data: { issues: [{ path: ['sort'], message: 'is not a known parameter' }, { path: ['limit'], message: 'is not a known parameter' }] },
      },
    });
  });
});

describe('the length of q', () => {
  it('is counted in characters, composed: an emoji or an accented letter is one', () => {
    const issueOf = (q: string) => {
      try {
        parseSearchParams({ q });
        return undefined;
      } catch (err) {
        return (err as CatalogError).issues?.[0]?.path[0];
      }
    };
    expect(issueOf('😀')).toBe('q');
    expect(issueOf('é')).toBe('q');
    expect(issueOf('e\u0301')).toBe('q');
    expect(issueOf('😀😀')).toBeUndefined();
    expect(issueOf('😀'.repeat(100))).toBeUndefined();
    expect(issueOf('😀'.repeat(101))).toBe('q');
    expect(issueOf('中'.repeat(100))).toBeUndefined();
    expect(issueOf('中'.repeat(101))).toBe('q');
  });
});
