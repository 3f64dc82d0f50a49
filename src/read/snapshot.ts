import { hash } from 'node:crypto';
import type { SearchDocument } from '../search/port.ts';
import { searchDocumentOf, type SearchRow } from '../search/search-row.ts';
import { FrozenIndex, FrozenIndexBuilder, type FrozenIndexArrays } from '../search/embedded/frozen-index.ts';
import { fillTable, FNV_OFFSET, FNV_PRIME, hashBytes, ListingPositions, tableSize, uuidBytes } from '../search/embedded/listing-positions.ts';
import { decodeSections, encodeSections, GrowingBytes, GrowingNumbers, SnapshotFormatError, type SectionArray } from './snapshot-format.ts';

/**
 * A snapshot of the projection at one version: every live product's public JSON, slug, ETag
 * and page flag, numbered by position in listing order, and (for the embedded engine) the
 * frozen search index over the same positions. It lives in typed arrays over one buffer:
 * written by the leading projector into PostgreSQL (see snapshot-store.ts), it loads in one
 * read, and the garbage collector never walks the catalog.
 *
 * Bump FORMAT whenever the layout or what it holds changes: older snapshots are then ignored
 * and rebuilt.
 */
export const SNAPSHOT_FORMAT = 1;

/** The columns a snapshot is built from (projection.products), as the mirror reads changes too. */
export interface SnapshotRow extends SearchRow {
  slug: string;
  doc: string;
  website_followed: boolean;
}

interface CatalogArrays {
  docs: Uint8Array;
  /** n + 1 offsets into docs. */
  docStarts: Float64Array;
  slugs: Uint8Array;
  slugStarts: Uint32Array;
  /** Open addressing over slugs: position + 1, 0 for empty. */
  slugTable: Int32Array;
  /** SHA-1 of each document, 20 bytes per position (its ETag). */
  etags: Uint8Array;
  /** Bit 0: the listing page follows the maker's link. */
  flags: Uint8Array;
}

const FLAG_WEBSITE_FOLLOWED = 1;
/** Slots of a snapshot's table of ETag texts (a power of two). */
const ETAG_SLOTS = 4096;
/** A UTF-16 code unit outside ASCII (surrogates included). */
const NOT_ASCII = /[\u0080-\uffff]/;

export class Snapshot {
  readonly count: number;
  /** Buffer views of the documents, the ETags and the slugs, made once: each answer takes a range of them. */
  private readonly docsView: Buffer;
  private readonly etagsView: Buffer;
  private readonly slugsView: Buffer;
  /** etagAt's table: the position whose ETag text each slot holds (-1: none), and the text. */
  private readonly etagSlotPosition = new Int32Array(ETAG_SLOTS).fill(-1);
  private readonly etagSlotText: string[] = new Array<string>(ETAG_SLOTS).fill('');

  constructor(
    /** Projection version the snapshot reflects. */
    readonly version: number,
    readonly positions: ListingPositions,
    private readonly catalog: CatalogArrays,
    /** The embedded engine's index; undefined in a snapshot made for an external index. */
    readonly search: FrozenIndex | undefined,
  ) {
    this.count = positions.count;
    this.docsView = Buffer.from(catalog.docs.buffer, catalog.docs.byteOffset, catalog.docs.byteLength);
    this.etagsView = Buffer.from(catalog.etags.buffer, catalog.etags.byteOffset, catalog.etags.byteLength);
    this.slugsView = Buffer.from(catalog.slugs.buffer, catalog.slugs.byteOffset, catalog.slugs.byteLength);
  }

  /** The product's public JSON as UTF-8 bytes (a view, not a copy). */
  docBytes(p: number): Buffer {
    const { docStarts } = this.catalog;
    return this.docsView.subarray(docStarts[p]!, docStarts[p + 1]!);
  }

  doc(p: number): string {
    return this.docBytes(p).toString('utf8');
  }

  /** Bytes of every document of positions [from, to), one after another with no separator (a view). */
  docRange(from: number, to: number): Buffer {
    const { docStarts } = this.catalog;
    return this.docsView.subarray(docStarts[from]!, docStarts[to]!);
  }

  slugAt(p: number): string {
    const { slugStarts } = this.catalog;
    return this.slugsView.toString('utf8', slugStarts[p]!, slugStarts[p + 1]!);
  }

  /**
   * The strong ETag of the document (quoted), as etagOf(doc) makes it. The texts of recently
   * answered positions are kept, one per slot of a small table (a product asked for often
   * finds its text there, the catalog's are never all held).
   */
  etagAt(p: number): string {
    const slot = p & (ETAG_SLOTS - 1);
    if (this.etagSlotPosition[slot] === p) return this.etagSlotText[slot]!;
    const text = `"${this.etagsView.toString('base64url', p * 20, p * 20 + 20)}"`;
    this.etagSlotPosition[slot] = p;
    this.etagSlotText[slot] = text;
    return text;
  }

  websiteFollowed(p: number): boolean {
    return (this.catalog.flags[p]! & FLAG_WEBSITE_FOLLOWED) !== 0;
  }

  /** The position of the product with this slug, or -1. */
  positionOfSlug(slug: string): number {
    // Hashed and compared as UTF-8 bytes, one character per byte: an ASCII slug (every slug
    // SLUG_PATTERN takes) as it stands, with no encoding per lookup; any other once encoded.
    const key = NOT_ASCII.test(slug) ? Buffer.from(slug, 'utf8').toString('latin1') : slug;
    const { slugs, slugStarts, slugTable } = this.catalog;
    const mask = slugTable.length - 1;
    let h = FNV_OFFSET;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), FNV_PRIME);
    let slot = (h >>> 0) & mask;
    for (;;) {
      const entry = slugTable[slot]!;
      if (entry === 0) return -1;
      const p = entry - 1;
      const start = slugStarts[p]!;
      if (slugStarts[p + 1]! - start === key.length) {
        let i = 0;
        while (i < key.length && slugs[start + i] === key.charCodeAt(i)) i++;
        if (i === key.length) return p;
      }
      slot = (slot + 1) & mask;
    }
  }

  /** Bytes the snapshot's arrays take. */
  get byteLength(): number {
    let n = 0;
    for (const a of Object.values(this.sections())) n += a.byteLength;
    return n;
  }

  private sections(): Record<string, SectionArray> {
    const sections: Record<string, SectionArray> = {
      ids: this.positions.arrays.ids,
      listedAt: this.positions.arrays.listedAt,
      idTable: this.positions.arrays.idTable,
      ...this.catalog,
    };
    if (this.search) for (const [name, a] of Object.entries(this.search.arrays)) if (typeof a !== 'number') sections[`search.${name}`] = a;
    return sections;
  }

  encode(): Buffer {
    return encodeSections(
      { format: SNAPSHOT_FORMAT, version: this.version, count: this.count, search: this.search !== undefined },
      this.sections(),
    );
  }

  static decode(buffer: Buffer): Snapshot {
    const { header, sections: s } = decodeSections(buffer);
    if (header.format !== SNAPSHOT_FORMAT) throw new SnapshotFormatError(`snapshot format ${String(header.format)}, expected ${SNAPSHOT_FORMAT}`);
    const positions = new ListingPositions({ ids: s.ids as Uint8Array, listedAt: s.listedAt as Float64Array, idTable: s.idTable as Int32Array });
    const catalog: CatalogArrays = {
      docs: s.docs as Uint8Array,
      docStarts: s.docStarts as Float64Array,
      slugs: s.slugs as Uint8Array,
      slugStarts: s.slugStarts as Uint32Array,
      slugTable: s.slugTable as Int32Array,
      etags: s.etags as Uint8Array,
      flags: s.flags as Uint8Array,
    };
    let search: FrozenIndex | undefined;
    if (header.search) {
      const arrays: Record<string, unknown> = { positions: positions.count };
      for (const [name, a] of Object.entries(s)) if (name.startsWith('search.')) arrays[name.slice('search.'.length)] = a;
      search = new FrozenIndex(arrays as unknown as FrozenIndexArrays);
    }
    return new Snapshot(Number(header.version), positions, catalog, search);
  }
}

/** Builds a snapshot from rows given in listing order (see LISTING_ORDER_SQL). */
export class SnapshotBuilder {
  private readonly ids = new GrowingBytes();
  private readonly listedAt = new GrowingNumbers((n) => new Float64Array(n));
  private readonly docs = new GrowingBytes();
  private readonly docStarts = new GrowingNumbers((n) => new Float64Array(n));
  private readonly slugs = new GrowingBytes();
  private readonly slugStarts = new GrowingNumbers((n) => new Uint32Array(n));
  private readonly etags = new GrowingBytes();
  private readonly flags = new GrowingBytes();
  private readonly search: FrozenIndexBuilder | undefined;
  private readonly idBytes = new Uint8Array(16);

  /** `searchFields`: the embedded engine's searchable fields; undefined builds no search index. */
  constructor(searchFields: readonly (keyof SearchDocument)[] | undefined) {
    this.search = searchFields && new FrozenIndexBuilder(searchFields);
    this.docStarts.push(0);
    this.slugStarts.push(0);
  }

  get count(): number {
    return this.listedAt.length;
  }

  add(row: SnapshotRow): void {
    if (!uuidBytes(row.id, this.idBytes, 0)) throw new Error(`not a UUID: ${JSON.stringify(row.id)}`);
    this.ids.appendBytes(this.idBytes);
    this.listedAt.push(row.listed_at === null ? Number.NEGATIVE_INFINITY : row.listed_at.getTime());
    this.docs.append(row.doc);
    this.docStarts.push(this.docs.length);
    this.slugs.append(row.slug);
    this.slugStarts.push(this.slugs.length);
    this.etags.appendBytes(hash('sha1', row.doc, 'buffer'));
    this.flags.appendBytes(Uint8Array.of(row.website_followed ? FLAG_WEBSITE_FOLLOWED : 0));
    this.search?.add(searchDocumentOf(row));
  }

  finish(version: number): Snapshot {
    const n = this.count;
    const ids = this.ids.view().slice();
    const idTable = new Int32Array(tableSize(n));
    fillTable(idTable, n, (p) => hashBytes(ids, p * 16, 16));
    const slugs = this.slugs.view().slice();
    const slugStarts = this.slugStarts.view().slice();
    const slugTable = new Int32Array(tableSize(n));
    fillTable(slugTable, n, (p) => hashBytes(slugs, slugStarts[p]!, slugStarts[p + 1]! - slugStarts[p]!));
    return new Snapshot(
      version,
      new ListingPositions({ ids, listedAt: this.listedAt.view().slice(), idTable }),
      {
        docs: this.docs.view().slice(),
        docStarts: this.docStarts.view().slice(),
        slugs,
        slugStarts,
        slugTable,
        etags: this.etags.view().slice(),
        flags: this.flags.view().slice(),
      },
      this.search?.finish(),
    );
  }
}

/**
 * Listing order in SQL, exactly as the engines order in JavaScript: listing time to the
 * millisecond (what a JavaScript Date holds) newest first, never listed last, ties by id.
 */
export const LISTING_ORDER_SQL = `date_trunc('milliseconds', listed_at) DESC NULLS LAST, id`;
