/**
 * Documents of a snapshot numbered by their place in listing order (newest first, never-listed
 * last, ties by id ascending): each position's id (a UUID as 16 bytes) and listing time, and a
 * hash table from id to position. Typed arrays only, so a million documents load as views over
 * the snapshot's bytes and cost the garbage collector nothing.
 */
export interface ListingPositionArrays {
  /** 16 bytes per position. */
  ids: Uint8Array;
  /** Milliseconds since the epoch; -Infinity for a document never listed. */
  listedAt: Float64Array;
  /** Open addressing, a power of two in size: position + 1, or 0 for an empty slot. */
  idTable: Int32Array;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Writes the 16 bytes of a UUID (any case, with dashes) at `at`; false when it is not one. */
export function uuidBytes(id: string, into: Uint8Array, at: number): boolean {
  if (id.length !== 36) return false;
  let k = at;
  for (let i = 0; i < 36; i++) {
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (id.charCodeAt(i) !== 45) return false;
      continue;
    }
    const hi = hexValue(id.charCodeAt(i));
    const lo = hexValue(id.charCodeAt(++i));
    if (hi < 0 || lo < 0) return false;
    into[k++] = (hi << 4) | lo;
  }
  return true;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** The canonical (lowercase) text of the UUID at `at`. */
function uuidText(bytes: Uint8Array, at: number): string {
  const h = (i: number) => HEX[bytes[at + i]!]!;
  return `${h(0)}${h(1)}${h(2)}${h(3)}-${h(4)}${h(5)}-${h(6)}${h(7)}-${h(8)}${h(9)}-${h(10)}${h(11)}${h(12)}${h(13)}${h(14)}${h(15)}`;
}

export const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 0x01000193;

function hashBytes(bytes: Uint8Array, at: number, length: number): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < length; i++) h = Math.imul(h ^ bytes[at + i]!, FNV_PRIME);
  return h >>> 0;
}

/** A hash table size for n keys: a power of two, at least twice n. */
export function tableSize(n: number): number {
  let size = 16;
  while (size < n * 2) size *= 2;
  return size;
}

/** Fills an open-addressing table with keys 0..n-1, each hashed by `hashOf`. */
export function fillTable(table: Int32Array, n: number, hashOf: (k: number) => number): void {
  const mask = table.length - 1;
  for (let k = 0; k < n; k++) {
    let slot = hashOf(k) & mask;
    while (table[slot] !== 0) slot = (slot + 1) & mask;
    table[slot] = k + 1;
  }
}

const scratch = new Uint8Array(16);

export class ListingPositions {
  readonly count: number;

  constructor(readonly arrays: ListingPositionArrays) {
    this.count = arrays.listedAt.length;
  }

  /** From ids and listing times already in listing order. */
  static build(ids: readonly string[], listedAt: ArrayLike<number>): ListingPositions {
    const n = ids.length;
    const bytes = new Uint8Array(n * 16);
    for (let p = 0; p < n; p++) if (!uuidBytes(ids[p]!, bytes, p * 16)) throw new Error(`not a UUID: ${JSON.stringify(ids[p])}`);
    const idTable = new Int32Array(tableSize(n));
    fillTable(idTable, n, (p) => hashBytes(bytes, p * 16, 16));
    return new ListingPositions({ ids: bytes, listedAt: Float64Array.from(listedAt), idTable });
  }

  idAt(p: number): string {
    return uuidText(this.arrays.ids, p * 16);
  }

  /** The position of the document with this id, or -1. */
  positionOf(id: string): number {
    if (!uuidBytes(id, scratch, 0)) return -1;
    const { ids, idTable } = this.arrays;
    const mask = idTable.length - 1;
    let slot = hashBytes(scratch, 0, 16) & mask;
    for (;;) {
      const entry = idTable[slot]!;
      if (entry === 0) return -1;
      const p = entry - 1;
      let same = true;
      for (let i = 0; i < 16; i++) {
        if (ids[p * 16 + i] !== scratch[i]) {
          same = false;
          break;
        }
      }
      if (same) return p;
      slot = (slot + 1) & mask;
    }
  }

  /**
   * Compares position p with a document (listing time, id) in listing order: negative when p
   * comes first.
   */
  compareWith(p: number, listedAt: number, id: string): number {
    const x = this.arrays.listedAt[p]!;
    if (x !== listedAt) return x > listedAt ? -1 : 1;
    if (!uuidBytes(id, scratch, 0)) return this.idAt(p) < id ? -1 : 1;
    const ids = this.arrays.ids;
    for (let i = 0; i < 16; i++) {
      const d = ids[p * 16 + i]! - scratch[i]!;
      if (d !== 0) return d;
    }
    return 0;
  }

  /** How many positions come before a document (listing time, id) in listing order. */
  insertionPoint(listedAt: number, id: string): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compareWith(mid, listedAt, id) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Listing order of (listing time, id) pairs: newest first, never-listed (-Infinity) last, ties by id. */
export function compareListing(aListed: number, aId: string, bListed: number, bId: string): number {
  if (aListed !== bListed) return aListed > bListed ? -1 : 1;
  return aId < bId ? -1 : aId > bId ? 1 : 0;
}

export { hashBytes };
