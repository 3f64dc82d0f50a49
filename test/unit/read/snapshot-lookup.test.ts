import { randomUUID } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { etagOf } from '../../../src/read/etag.ts';
import { Snapshot, SnapshotBuilder, type SnapshotRow } from '../../../src/read/snapshot.ts';

function row(slug: string, i: number): SnapshotRow {
  const doc = JSON.stringify({ slug, name: `Product ${i}`, n: i });
  return {
    id: randomUUID(),
    slug,
    doc,
    website_followed: i % 2 === 0,
    name: `Product ${i}`,
    punchline: '',
    description_text: '',
    category: 'tools',
    labels: [],
    tags: [],
    listed_at: new Date(Date.UTC(2026, 0, 1) - i * 1000),
  };
}

/** A snapshot of these slugs in this order, through its stored form (encoded, then decoded). */
function snapshotOf(slugs: string[]): { snapshot: Snapshot; rows: SnapshotRow[] } {
  const builder = new SnapshotBuilder(undefined);
  const rows = slugs.map((slug, i) => row(slug, i));
  for (const r of rows) builder.add(r);
  return { snapshot: Snapshot.decode(builder.finish(7).encode()), rows };
}

describe('a snapshot', () => {
  // More products than the ETag table has slots, so that positions share slots.
  const slugs = Array.from({ length: 9000 }, (_, i) => `product-${i}`);
  // Not slugs the write model takes, but a snapshot finds whatever it holds.
  slugs.push('café-crème', 'ünïcode', '東京', 'emoji-🙂');
  const { snapshot, rows } = snapshotOf(slugs);

  test('finds every slug it holds, ASCII or not, at its position, and no other', () => {
    for (let p = 0; p < slugs.length; p++) expect(snapshot.positionOfSlug(slugs[p]!)).toBe(p);
    for (const absent of ['', 'product', 'product-9000', 'product-1-', 'Product-1', 'cafe-creme', 'café', '東', 'emoji-🙃', 'product-1\u0000']) {
      expect(snapshot.positionOfSlug(absent)).toBe(-1);
    }
  });

  test("gives each position its own document and ETag, whichever positions were asked for before in the same slot", () => {
    // Positions 4096 apart share a slot of the ETag table: asked alternately, each must get its own.
    const order = [0, 4096, 0, 8192, 4096, 1, 4097, 8193, 1, 9003, 9003 - 4096, 9003];
    for (let round = 0; round < 2; round++) {
      for (const p of order) {
        expect(snapshot.etagAt(p)).toBe(etagOf(rows[p]!.doc));
        expect(snapshot.docBytes(p).toString('utf8')).toBe(rows[p]!.doc);
      }
    }
    for (let p = 0; p < rows.length; p += 97) expect(snapshot.etagAt(p)).toBe(etagOf(rows[p]!.doc));
  });
});
