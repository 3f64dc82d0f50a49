/**
 * The byte layout of a projection snapshot: a header (JSON) naming typed-array sections, then
 * the sections, each at an offset that is a multiple of 8, so that a loaded snapshot is one
 * buffer and every array a view into it (nothing copied, nothing parsed per document).
 *
 *   "CATSNAP1" | header length (uint32 LE) | header JSON | padding | section … section
 */
const MAGIC = 'CATSNAP1';

type ArrayKind = 'u8' | 'u16' | 'u32' | 'i32' | 'f64';
export type SectionArray = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;

const CONSTRUCTORS = {
  u8: Uint8Array,
  u16: Uint16Array,
  u32: Uint32Array,
  i32: Int32Array,
  f64: Float64Array,
} as const;

function kindOf(a: SectionArray): ArrayKind {
  if (a instanceof Uint8Array) return 'u8';
  if (a instanceof Uint16Array) return 'u16';
  if (a instanceof Uint32Array) return 'u32';
  if (a instanceof Int32Array) return 'i32';
  return 'f64';
}

interface SectionEntry {
  name: string;
  kind: ArrayKind;
  offset: number;
  length: number;
}

const align8 = (n: number) => (n + 7) & ~7;

/** Lays out a header and named arrays in one buffer. */
export function encodeSections(header: Record<string, unknown>, sections: Record<string, SectionArray>): Buffer {
  const names = Object.keys(sections);
  // Offsets depend on the header's length, which depends on the offsets: lay out until the
  // header fits the room left for it (padded with spaces, which JSON ignores).
  let room = 0;
  let entries: SectionEntry[];
  let headerBytes: Buffer;
  for (;;) {
    let at = align8(MAGIC.length + 4 + room);
    entries = names.map((name) => {
      const a = sections[name]!;
      const entry = { name, kind: kindOf(a), offset: at, length: a.length };
      at = align8(at + a.byteLength);
      return entry;
    });
    headerBytes = Buffer.from(JSON.stringify({ ...header, sections: entries }));
    if (headerBytes.length <= room) break;
    room = headerBytes.length + 16;
  }
  headerBytes = Buffer.concat([headerBytes, Buffer.alloc(room - headerBytes.length, ' ')]);
  const last = entries[entries.length - 1];
  const total = last ? align8(last.offset + sections[last.name]!.byteLength) : align8(MAGIC.length + 4 + headerBytes.length);
  const out = Buffer.allocUnsafeSlow(total).fill(0);
  out.write(MAGIC, 0, 'latin1');
  out.writeUInt32LE(headerBytes.length, MAGIC.length);
  headerBytes.copy(out, MAGIC.length + 4);
  for (const e of entries) {
    const a = sections[e.name]!;
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), e.offset);
  }
  return out;
}

export class SnapshotFormatError extends Error {}

/** Reads the header and views every section of a buffer made by encodeSections (its byteOffset must be a multiple of 8). */
export function decodeSections(buffer: Buffer): { header: Record<string, unknown>; sections: Record<string, SectionArray> } {
  if (buffer.length < MAGIC.length + 4 || buffer.toString('latin1', 0, MAGIC.length) !== MAGIC) throw new SnapshotFormatError('not a catalog snapshot');
  if (buffer.byteOffset % 8 !== 0) throw new SnapshotFormatError('snapshot buffer is not aligned');
  const headerLength = buffer.readUInt32LE(MAGIC.length);
  const header = JSON.parse(buffer.toString('utf8', MAGIC.length + 4, MAGIC.length + 4 + headerLength)) as Record<string, unknown> & { sections: SectionEntry[] };
  const sections: Record<string, SectionArray> = {};
  for (const e of header.sections) {
    const Ctor = CONSTRUCTORS[e.kind];
    const byteLength = e.length * Ctor.BYTES_PER_ELEMENT;
    if (e.offset % 8 !== 0 || e.offset + byteLength > buffer.length) throw new SnapshotFormatError(`snapshot section ${e.name} lies outside the snapshot`);
    sections[e.name] = new Ctor(buffer.buffer as ArrayBuffer, buffer.byteOffset + e.offset, e.length);
  }
  return { header, sections };
}

/** A byte buffer that grows by doubling (the builder's documents and slugs). */
export class GrowingBytes {
  private bytes = Buffer.allocUnsafeSlow(1 << 16);
  length = 0;

  append(text: string): void {
    const max = text.length * 3;
    if (this.length + max > this.bytes.length) {
      let size = this.bytes.length * 2;
      while (size < this.length + max) size *= 2;
      const grown = Buffer.allocUnsafeSlow(size);
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    this.length += this.bytes.write(text, this.length, 'utf8');
  }

  appendBytes(bytes: Uint8Array): void {
    if (this.length + bytes.length > this.bytes.length) {
      let size = this.bytes.length * 2;
      while (size < this.length + bytes.length) size *= 2;
      const grown = Buffer.allocUnsafeSlow(size);
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** The bytes written, as a view (valid until the next append). */
  view(): Uint8Array {
    return new Uint8Array(this.bytes.buffer, this.bytes.byteOffset, this.length);
  }
}

/** A number array that grows by doubling. */
export class GrowingNumbers<T extends Float64Array | Uint32Array | Int32Array> {
  private array: T;
  length = 0;

  constructor(private readonly make: (n: number) => T) {
    this.array = make(1024);
  }

  push(v: number): void {
    if (this.length === this.array.length) {
      const grown = this.make(this.array.length * 2);
      grown.set(this.array);
      this.array = grown;
    }
    this.array[this.length++] = v;
  }

  view(): T {
    return this.array.subarray(0, this.length) as T;
  }
}
