import { text } from 'node:stream/consumers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { catalogDifferences, type CatalogChange, type PublicEntry } from '../../../projector/change-log.ts';
import type { CatalogError } from '../../../src/contract/errors.ts';
import { negotiateCoding, ndjsonStream } from '../../../src/http/feed/export-stream.ts';
import { exportEtag, formatCursor, parseCursor } from '../../../src/read/feed-cursor.ts';
import { parseChangesParams } from '../../../src/read/params.ts';

/** A copy of the catalog keyed by slug, as a feed consumer keeps it. */
function apply(copy: Map<string, string>, changes: readonly CatalogChange[]): Map<string, string> {
  const next = new Map(copy);
  for (const c of changes) {
    if (c.op === 'upsert') next.set(c.slug, c.doc!);
    else next.delete(c.slug);
  }
  return next;
}

const entries = (m: Map<string, string>): PublicEntry[] => [...m].map(([slug, doc]) => ({ slug, doc }));

describe('the differences the projector logs', () => {
  it('a new listing, an edit, a listing leaving, an unchanged one', () => {
    const before = [
      { slug: 'kept', doc: '{"v":1}' },
      { slug: 'edited', doc: '{"v":1}' },
      { slug: 'leaving', doc: '{"v":1}' },
    ];
    const after = [
      { slug: 'kept', doc: '{"v":1}' },
      { slug: 'edited', doc: '{"v":2}' },
      { slug: 'new', doc: '{"v":1}' },
    ];
    expect(catalogDifferences(before, after)).toEqual([
      { op: 'delete', slug: 'leaving', doc: null },
      { op: 'upsert', slug: 'edited', doc: '{"v":2}' },
      { op: 'upsert', slug: 'new', doc: '{"v":1}' },
    ]);
  });

  it('a slug change is a delete of the old slug and an upsert of the new one; a swap is two upserts', () => {
    expect(catalogDifferences([{ slug: 'old', doc: '{"id":1,"slug":"old"}' }], [{ slug: 'new', doc: '{"id":1,"slug":"new"}' }])).toEqual([
      { op: 'delete', slug: 'old', doc: null },
      { op: 'upsert', slug: 'new', doc: '{"id":1,"slug":"new"}' },
    ]);
    const a = '{"id":1,"slug":"a"}';
    const b = '{"id":2,"slug":"b"}';
    const a2 = '{"id":1,"slug":"b"}';
    const b2 = '{"id":2,"slug":"a"}';
    expect(catalogDifferences([{ slug: 'a', doc: a }, { slug: 'b', doc: b }], [{ slug: 'b', doc: a2 }, { slug: 'a', doc: b2 }])).toEqual([
      { op: 'upsert', slug: 'a', doc: b2 },
      { op: 'upsert', slug: 'b', doc: a2 },
    ]);
  });

  it('applied to the old state, always gives the new state, and says nothing when nothing changed', () => {
    const slug = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
    const state = fc.dictionary(slug, fc.constantFrom('{"v":1}', '{"v":2}', '{"v":3}'));
    fc.assert(
      fc.property(state, state, (b, a) => {
        const before = new Map(Object.entries(b));
        const after = new Map(Object.entries(a));
        const changes = catalogDifferences(entries(before), entries(after));
        expect(apply(before, changes)).toEqual(after);
        expect(new Set(changes.map((c) => c.slug)).size).toBe(changes.length);
        for (const c of changes) expect(c.op === 'delete' ? !after.has(c.slug) : before.get(c.slug) !== c.doc).toBe(true);
      }),
    );
  });
});

describe('cursors', () => {
  it('name a log and a position, and read back as written', () => {
    const p = { log: '0a1b2c3d', position: 123456 };
    expect(formatCursor(p)).toBe('0a1b2c3d-123456');
    expect(parseCursor(formatCursor(p))).toEqual(p);
    expect(parseCursor('0a1b2c3d-0')).toEqual({ log: '0a1b2c3d', position: 0 });
    expect(parseCursor('0a1b2c3d-999999999999999')).toEqual({ log: '0a1b2c3d', position: 999_999_999_999_999 });
  });

  it.each(['', '0a1b2c3d', '0a1b2c3d-', '0a1b2c3d-01', '0a1b2c3d--1', '0A1B2C3D-1', '0a1b2c3-1', '0a1b2c3d-1.5', '0a1b2c3d-1000000000000000', ' 0a1b2c3d-1', 'x'])(
    'reject %j',
    (cursor) => {
      expect(parseCursor(cursor)).toBeUndefined();
    },
  );

  it('the export tag follows the position and the coding only', () => {
    const p = { log: '0a1b2c3d', position: 7 };
    expect(exportEtag(p)).toBe(exportEtag({ ...p }));
    expect(new Set([exportEtag(p), exportEtag(p, 'gzip'), exportEtag(p, 'br'), exportEtag({ ...p, position: 8 })]).size).toBe(4);
    expect(exportEtag(p)).toMatch(/^"[^"]+"$/);
  });
});

describe('GET /changes parameters', () => {
  const issues = (input: unknown) => {
    try {
      parseChangesParams(input);
    } catch (err) {
      return (err as CatalogError).toBody().data?.issues;
    }
    throw new Error('accepted');
  };

  it('take defaults and bounds', () => {
    expect(parseChangesParams({})).toEqual({ limit: 100, wait: 0 });
    expect(parseChangesParams(undefined)).toEqual({ limit: 100, wait: 0 });
    expect(parseChangesParams({ since: '0a1b2c3d-5', limit: '1', wait: '30' })).toEqual({ since: '0a1b2c3d-5', limit: 1, wait: 30 });
    expect(parseChangesParams({ limit: '1000', wait: '0' })).toEqual({ limit: 1000, wait: 0 });
  });

  it('name every rejected parameter', () => {
    expect(issues({ limit: '0' })).toEqual([{ path: ['limit'], message: 'must be between 1 and 1000' }]);
    expect(issues({ limit: '1001' })).toEqual([{ path: ['limit'], message: 'must be between 1 and 1000' }]);
    expect(issues({ wait: '31' })).toEqual([{ path: ['wait'], message: 'must be between 0 and 30' }]);
    expect(issues({ wait: '-1' })).toEqual([{ path: ['wait'], message: 'must be between 0 and 30' }]);
    expect(issues({ wait: '1.5' })).toEqual([{ path: ['wait'], message: 'must be an integer' }]);
    expect(issues({ since: 'yesterday' })).toEqual([{ path: ['since'], message: expect.stringContaining('must be a cursor the feed gave') }]);
    expect(issues({ since: '' })).toEqual([{ path: ['since'], message: expect.stringContaining('must be a cursor the feed gave') }]);
    expect(issues({ since: ['0a1b2c3d-1', '0a1b2c3d-2'] })).toEqual([{ path: ['since'], message: 'must be a single text value' }]);
    expect(issues({ limit: ['1', '2'] })).toEqual([{ path: ['limit'], message: 'must be given once' }]);
    expect(issues({ cursor: '0a1b2c3d-1', since: 'x', limit: '0' })).toEqual([
      { path: ['since'], message: expect.any(String) },
      { path: ['limit'], message: 'must be between 1 and 1000' },
      { path: ['cursor'], message: 'is not a known parameter' },
    ]);
  });
});

describe('the export body', () => {
  it('is each document on its own line, whatever the chunk size and the characters', async () => {
    const docs = ['{"a":"x"}', '{"b":"é😀"}', 'y'.repeat(300), '{"c":"\u2028"}', Buffer.from('{"d":"bytes ü"}')];
    const expected = `${docs.map((d) => (typeof d === 'string' ? d : d.toString('utf8'))).join('\n')}\n`;
    for (const chunkBytes of [16, 64, 100, 1024, 256 * 1024]) {
      expect(await text(ndjsonStream(docs, chunkBytes)), `chunk ${chunkBytes}`).toBe(expected);
    }
    expect(await text(ndjsonStream([]))).toBe('');
  });

  it('is produced as it is read, a chunk at a time', async () => {
    let pulled = 0;
    const docs = {
      *[Symbol.iterator]() {
        for (let i = 0; i < 1000; i++) {
          pulled++;
          yield `{"n":${i},"pad":"${'p'.repeat(100)}"}`;
        }
      },
    };
    const stream = ndjsonStream(docs, 4096);
    await new Promise((r) => setImmediate(r));
    // Nothing read yet: at most the chunk the stream buffers ahead.
    expect(pulled).toBeLessThan(100);
    const all = await text(stream);
    expect(pulled).toBe(1000);
    expect(all.split('\n')).toHaveLength(1001);
  });
});

describe('Accept-Encoding', () => {
  it.each([
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['deflate', 'identity'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['gzip;q=0.5', 'gzip'],
    ['identity;q=1, gzip;q=0.5', 'identity'],
    ['*', 'br'],
    ['*;q=0.1, gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['identity;q=0, *;q=0', 'identity'],
  ])('%j → %s', (header, coding) => {
    expect(negotiateCoding(header)).toBe(coding);
  });
});
