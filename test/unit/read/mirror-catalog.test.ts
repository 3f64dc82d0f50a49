import { describe, expect, it } from 'vitest';
import { etagOf } from '../../../src/read/etag.ts';
import { MirroredCatalog } from '../../../src/read/mirror-catalog.ts';
import { Snapshot, SnapshotBuilder, type SnapshotRow } from '../../../src/read/snapshot.ts';

/**
 * What a mirror holds: a snapshot and the products changed since it. A change replaces whatever
 * was held for its id, a removal takes it away, and the whole catalog reads in listing order
 * (newest first, never-listed last, ties by id) as it stood when the read began.
 */

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 31);

/** Ids sort as their number: `00000000-0000-4000-8000-0000000000NN`. */
function id(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

function row(n: number, slug: string, listedDaysAgo: number | null, doc: object = {}): SnapshotRow {
  return {
    id: id(n),
    slug,
    doc: JSON.stringify({ slug, ...doc }),
    website_followed: n % 2 === 0,
    name: slug,
    punchline: '',
    description_text: '',
    category: null,
    labels: [],
    tags: [],
    listed_at: listedDaysAgo === null ? null : new Date(T0 - listedDaysAgo * DAY),
  };
}

/** A snapshot of rows already in listing order, through its stored form. */
function snapshotOf(rows: SnapshotRow[], version = 5): Snapshot {
  const builder = new SnapshotBuilder(undefined);
  for (const r of rows) builder.add(r);
  return Snapshot.decode(builder.finish(version).encode());
}

const BASE = [row(1, 'alpha', 1), row(2, 'bravo', 2), row(3, 'charlie', 3), row(4, 'delta', null)];

function loaded(): MirroredCatalog {
  const catalog = new MirroredCatalog();
  catalog.install(snapshotOf(BASE));
  return catalog;
}

const slugsOf = (catalog: MirroredCatalog) => [...catalog.listings()].map((l) => l.slug);
const docsOf = (catalog: MirroredCatalog) => [...catalog.docs()].map((d) => JSON.parse(Buffer.from(d).toString('utf8')).slug as string);

describe('a mirrored catalog', () => {
  it('holds nothing before a snapshot is installed', () => {
    const catalog = new MirroredCatalog();
    expect(catalog.size).toBe(0);
    expect(catalog.productBySlug('alpha')).toBeUndefined();
    expect([...catalog.docs()]).toEqual([]);
  });

  it('answers from the snapshot: by id and by slug, document, ETag and link flag', () => {
    const catalog = loaded();
    expect(catalog.size).toBe(4);
    expect(catalog.changesSinceSnapshot).toBe(0);
    const bravo = catalog.productBySlug('bravo')!;
    expect([bravo.id, bravo.slug, bravo.bytes.toString('utf8'), bravo.etag, bravo.websiteFollowed]).toEqual([id(2), 'bravo', BASE[1]!.doc, etagOf(BASE[1]!.doc), true]);
    expect(catalog.productById(id(3))!.slug).toBe('charlie');
    expect(slugsOf(catalog)).toEqual(['alpha', 'bravo', 'charlie', 'delta']);
    expect([...catalog.listings()].at(-1)!.listedAt).toBe(Number.NEGATIVE_INFINITY);
  });

  it('a change replaces the snapshot’s copy, under its new slug when it moved', () => {
    const catalog = loaded();
    catalog.apply([], [row(2, 'bravo-two', 2, { v: 2 })]);
    expect(catalog.productBySlug('bravo')).toBeUndefined();
    const moved = catalog.productBySlug('bravo-two')!;
    expect(moved.id).toBe(id(2));
    expect(moved.etag).toBe(etagOf(row(2, 'bravo-two', 2, { v: 2 }).doc));
    expect(catalog.productById(id(2))).toBe(moved);
    expect(catalog.size).toBe(4);
    // Its snapshot position is gone, and it is held as a change: two of each.
    expect(catalog.changesSinceSnapshot).toBe(2);
  });

  it('a later change replaces an earlier one, and its old slug is free for another product', () => {
    const catalog = loaded();
    catalog.apply([], [row(2, 'bravo-two', 2)]);
    catalog.apply([], [row(2, 'bravo-three', 2), row(9, 'bravo-two', 0)]);
    expect(catalog.productBySlug('bravo-three')!.id).toBe(id(2));
    expect(catalog.productBySlug('bravo-two')!.id).toBe(id(9));
    expect(catalog.size).toBe(5);
  });

  it('a product moving away from a slug does not take the slug from the product that took it', () => {
    const catalog = loaded();
    catalog.apply([], [row(9, 'echo', 0)]);
    catalog.apply([], [row(8, 'echo', 0), row(9, 'foxtrot', 0)]);
    expect(catalog.productBySlug('echo')!.id).toBe(id(8));
    expect(catalog.productBySlug('foxtrot')!.id).toBe(id(9));
  });

  it('a removal takes a product away, from the snapshot or from the changes', () => {
    const catalog = loaded();
    catalog.apply([], [row(9, 'echo', 0)]);
    catalog.apply([id(1), id(9), id(77)], []);
    expect(catalog.productBySlug('alpha')).toBeUndefined();
    expect(catalog.productById(id(1))).toBeUndefined();
    expect(catalog.productBySlug('echo')).toBeUndefined();
    expect(catalog.size).toBe(3);
    expect(slugsOf(catalog)).toEqual(['bravo', 'charlie', 'delta']);
  });

  it('removals are applied before the rows of the same change', () => {
    const catalog = loaded();
    catalog.apply([id(3)], [row(3, 'charlie', 3, { back: true })]);
    expect(catalog.productBySlug('charlie')).toBeDefined();
    expect(catalog.size).toBe(4);
  });

  it('reads the whole catalog in listing order, changes merged with the snapshot, ties by id', () => {
    const catalog = loaded();
    catalog.apply([], [row(9, 'newest', 0), row(5, 'tie-first', 2), row(6, 'unlisted', null), row(3, 'charlie', 10)]);
    expect(slugsOf(catalog)).toEqual(['newest', 'alpha', 'bravo', 'tie-first', 'charlie', 'delta', 'unlisted']);
    expect(docsOf(catalog)).toEqual(slugsOf(catalog));
  });

  it('a read of the whole catalog sees it as it stood when the read began', () => {
    const catalog = loaded();
    const docs = catalog.docs();
    const listings = catalog.listings();
    catalog.apply([id(1)], [row(9, 'newest', 0)]);
    expect([...docs].map((d) => JSON.parse(Buffer.from(d).toString('utf8')).slug)).toEqual(['alpha', 'bravo', 'charlie', 'delta']);
    expect([...listings].map((l) => l.slug)).toEqual(['alpha', 'bravo', 'charlie', 'delta']);
    expect(slugsOf(catalog)).toEqual(['newest', 'bravo', 'charlie', 'delta']);
  });

  it('installing a snapshot drops every change held', () => {
    const catalog = loaded();
    catalog.apply([id(1)], [row(9, 'newest', 0)]);
    catalog.install(snapshotOf([row(9, 'newest', 0), row(2, 'bravo', 2)], 8));
    expect(catalog.changesSinceSnapshot).toBe(0);
    expect(catalog.base.version).toBe(8);
    expect(slugsOf(catalog)).toEqual(['newest', 'bravo']);
    expect(catalog.productBySlug('alpha')).toBeUndefined();
  });
});
