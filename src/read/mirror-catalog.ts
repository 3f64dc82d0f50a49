import { compareListing } from '../search/embedded/listing-positions.ts';
import { etagOf } from './etag.ts';
import { SnapshotBuilder, type Snapshot, type SnapshotRow } from './snapshot.ts';

/** A live product as the mirror holds it. */
export interface MirroredProduct {
  readonly id: string;
  readonly slug: string;
  /** The public Product as UTF-8 bytes, serialized once by the projector. */
  readonly bytes: Buffer;
  /** Strong ETag of the document. */
  readonly etag: string;
  /** Whether the listing page links the maker's site as a followed link (premium, or a verified badge). */
  readonly websiteFollowed: boolean;
}

/** A live listing as the sitemap needs it: read from the mirror without decoding its document. */
export interface ListingStamp {
  readonly slug: string;
  /** When it went live, in ms since the epoch; -Infinity when never listed. */
  readonly listedAt: number;
}

/** A product changed since the snapshot, kept as an object. */
interface ChangedProduct extends MirroredProduct {
  /** listed_at in ms since the epoch; -Infinity when never listed (listing order). */
  readonly listedAt: number;
}

/** A product of the snapshot, read from it field by field as asked (most reads need only the document and its ETag). */
class SnapshotProduct implements MirroredProduct {
  constructor(
    private readonly snapshot: Snapshot,
    private readonly p: number,
  ) {}

  get id(): string {
    return this.snapshot.positions.idAt(this.p);
  }

  get slug(): string {
    return this.snapshot.slugAt(this.p);
  }

  get bytes(): Buffer {
    return this.snapshot.docBytes(this.p);
  }

  get etag(): string {
    return this.snapshot.etagAt(this.p);
  }

  get websiteFollowed(): boolean {
    return this.snapshot.websiteFollowed(this.p);
  }
}

/** The snapshot's positions not gone, merged with the products changed since it, in listing order. */
function* inListingOrder<T>(
  base: Snapshot,
  goneNow: Uint8Array,
  changed: readonly ChangedProduct[],
  fromBase: (p: number) => T,
  fromChanged: (c: ChangedProduct) => T,
): Generator<T> {
  let c = 0;
  for (let p = 0; p < base.count; p++) {
    if (goneNow[p] !== 0) continue;
    while (c < changed.length && base.positions.compareWith(p, changed[c]!.listedAt, changed[c]!.id) > 0) yield fromChanged(changed[c++]!);
    yield fromBase(p);
  }
  while (c < changed.length) yield fromChanged(changed[c++]!);
}

/** The catalog before anything is loaded. */
const EMPTY_SNAPSHOT = new SnapshotBuilder(undefined).finish(0);

/**
 * The live products the mirror holds: a snapshot (snapshot.ts: one buffer of typed arrays, off
 * the JavaScript heap) and the products changed since it, as objects, with the snapshot
 * positions they replace marked gone. A product is found by id or slug in the changes first,
 * then in the snapshot unless its position is gone; the whole catalog is read in listing order,
 * both merged.
 */
export class MirroredCatalog {
  private snapshot: Snapshot = EMPTY_SNAPSHOT;
  /** Snapshot positions replaced or removed since the snapshot (1 = gone). */
  private gone = new Uint8Array(0);
  private goneCount = 0;
  /** Products changed since the snapshot. */
  private changedById = new Map<string, ChangedProduct>();
  private changedBySlug = new Map<string, ChangedProduct>();
  /** The changed products in listing order, made for a reader of the whole catalog and kept until the next change. */
  private changedInOrder: ChangedProduct[] | undefined;

  /** The snapshot the catalog stands on. */
  get base(): Snapshot {
    return this.snapshot;
  }

  /** Live products. */
  get size(): number {
    return this.snapshot.count - this.goneCount + this.changedById.size;
  }

  /** Products of the snapshot replaced or removed, and products changed, since the snapshot. */
  get changesSinceSnapshot(): number {
    return this.goneCount + this.changedById.size;
  }

  /** Takes a snapshot as the whole catalog (nothing changed since). */
  install(next: Snapshot): void {
    this.snapshot = next;
    this.gone = new Uint8Array(next.count);
    this.goneCount = 0;
    this.changedById = new Map();
    this.changedBySlug = new Map();
    this.changedInOrder = undefined;
  }

  /**
   * Applies what changed: each removed id is gone, each row replaces whatever the catalog held
   * for its id (the snapshot's copy, or an earlier change, whose slug it may have moved from).
   * Removals first, then the rows.
   */
  apply(removedIds: readonly string[], rows: readonly SnapshotRow[]): void {
    for (const id of removedIds) this.drop(id);
    for (const row of rows) {
      this.drop(row.id);
      const bytes = Buffer.from(row.doc, 'utf8');
      const listedAt = row.listed_at === null ? Number.NEGATIVE_INFINITY : row.listed_at.getTime();
      const entry: ChangedProduct = { id: row.id, slug: row.slug, bytes, etag: etagOf(row.doc), websiteFollowed: row.website_followed, listedAt };
      this.changedById.set(row.id, entry);
      this.changedBySlug.set(row.slug, entry);
    }
    if (removedIds.length || rows.length) this.changedInOrder = undefined;
  }

  productById(id: string): MirroredProduct | undefined {
    const changed = this.changedById.get(id);
    if (changed) return changed;
    const p = this.snapshot.positions.positionOf(id);
    return p >= 0 && this.gone[p] === 0 ? new SnapshotProduct(this.snapshot, p) : undefined;
  }

  productBySlug(slug: string): MirroredProduct | undefined {
    const changed = this.changedBySlug.get(slug);
    if (changed) return changed;
    const p = this.snapshot.positionOfSlug(slug);
    return p >= 0 && this.gone[p] === 0 ? new SnapshotProduct(this.snapshot, p) : undefined;
  }

  /** Every live product's stored JSON in listing order, as the catalog stands now: later changes are not seen. */
  docs(): Iterable<Uint8Array> {
    const base = this.snapshot;
    const { goneNow, changed } = this.frozen();
    return {
      [Symbol.iterator]: () =>
        inListingOrder(
          base,
          goneNow,
          changed,
          (p) => base.docBytes(p),
          (c) => c.bytes,
        ),
    };
  }

  /** Every live listing's slug and listing time in listing order, as the catalog stands now. */
  listings(): Iterable<ListingStamp> {
    const base = this.snapshot;
    const { goneNow, changed } = this.frozen();
    return {
      [Symbol.iterator]: () =>
        inListingOrder<ListingStamp>(
          base,
          goneNow,
          changed,
          (p) => ({ slug: base.slugAt(p), listedAt: base.positions.arrays.listedAt[p]! }),
          (c) => c,
        ),
    };
  }

  /** Removes whatever the catalog holds for the id: an earlier change, and the snapshot's copy. */
  private drop(id: string): void {
    const old = this.changedById.get(id);
    if (old) {
      this.changedById.delete(id);
      if (this.changedBySlug.get(old.slug) === old) this.changedBySlug.delete(old.slug);
    }
    const p = this.snapshot.positions.positionOf(id);
    if (p >= 0 && this.gone[p] === 0) {
      this.gone[p] = 1;
      this.goneCount++;
    }
  }

  /**
   * What a reader of the whole catalog holds on to: the snapshot's arrays never change, but which
   * of its positions are gone does, so that is copied; the changed products in listing order are
   * kept until the next change.
   */
  private frozen(): { goneNow: Uint8Array; changed: readonly ChangedProduct[] } {
    this.changedInOrder ??= [...this.changedById.values()].sort((a, b) => compareListing(a.listedAt, a.id, b.listedAt, b.id));
    return { goneNow: this.gone.slice(), changed: this.changedInOrder };
  }
}
