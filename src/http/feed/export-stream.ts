import { Readable } from 'node:stream';
import zlib from 'node:zlib';

/**
 * The bulk export's body: NDJSON written straight from the mirror's stored documents into large
 * chunks as the client reads (a Readable pulls the next chunk only when the socket or the
 * compressor wants more), so an export never holds more than a chunk or two of its own beyond
 * the snapshot's references, however large the catalog.
 */
export type ContentCoding = 'br' | 'gzip' | 'identity';

/** Bytes per chunk handed to the socket (or the compressor): few large writes, little memory. */
const EXPORT_CHUNK_BYTES = 256 * 1024;

/**
 * Compression levels chosen to stream a large catalog at a sane speed on one core: on the
 * benchmark machine, brotli quality 4 and gzip level 4 both compress the 120 MB export of
 * 85,000 demo listings at about 100 MB/s (1.2 s), to 15 and 21 MB (docs/performance.md),
 * faster than most links carry it. Brotli's default quality, 11, runs at a few MB/s: minutes
 * for a large catalog.
 */
export const GZIP_LEVEL = 4;
export const BROTLI_QUALITY = 4;

const NEWLINE = 0x0a;

export function ndjsonStream(docs: Iterable<string | Uint8Array>, chunkBytes = EXPORT_CHUNK_BYTES): Readable {
  const it = docs[Symbol.iterator]();
  let carried: string | Uint8Array | undefined;
  return new Readable({
    highWaterMark: chunkBytes,
    read() {
      const chunk = Buffer.allocUnsafe(chunkBytes);
      let used = 0;
      for (;;) {
        let doc = carried;
        carried = undefined;
        if (doc === undefined) {
          const next = it.next();
          if (next.done) {
            if (used > 0) this.push(chunk.subarray(0, used));
            this.push(null);
            return;
          }
          doc = next.value;
        }
        // UTF-8 takes at most 3 bytes per UTF-16 unit: a bound that needs no measuring.
        const room = typeof doc === 'string' ? doc.length * 3 + 1 : doc.length + 1;
        if (used + room > chunkBytes) {
          if (used > 0) {
            carried = doc;
            this.push(chunk.subarray(0, used));
            return;
          }
          // A document larger than a chunk goes out on its own.
          const bytes = typeof doc === 'string' ? Buffer.from(doc) : doc;
          this.push(Buffer.concat([bytes, Buffer.of(NEWLINE)]));
          return;
        }
        if (typeof doc === 'string') used += chunk.write(doc, used);
        else {
          chunk.set(doc, used);
          used += doc.length;
        }
        chunk[used++] = NEWLINE;
      }
    },
  });
}

/** The content coding's compressor, or undefined for identity. */
export function compressorFor(coding: ContentCoding): zlib.Gzip | zlib.BrotliCompress | undefined {
  if (coding === 'gzip') return zlib.createGzip({ level: GZIP_LEVEL, chunkSize: 64 * 1024 });
  if (coding === 'br') {
    return zlib.createBrotliCompress({
      chunkSize: 64 * 1024,
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT },
    });
  }
  return undefined;
}

/**
 * The coding to answer with, from Accept-Encoding (RFC 9110 §12.5.3): the acceptable one with
 * the highest weight among br, gzip and identity, br first on a tie (smaller at the same
 * speed). `*` stands for any coding not named; identity is acceptable unless refused
 * (`identity;q=0`, or `*;q=0` without naming it). With nothing acceptable, identity anyway:
 * an answer the client may not want beats none.
 */
export function negotiateCoding(header: string | string[] | undefined): ContentCoding {
  if (header === undefined) return 'identity';
  const weights = new Map<string, number>();
  for (const part of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) q = Math.min(1, Math.max(0, Number(m[1]) || 0));
    }
    // "x-gzip" is the same coding (RFC 9110 §8.4.1.3).
    weights.set(name === 'x-gzip' ? 'gzip' : name, q);
  }
  const star = weights.get('*');
  // Unnamed, identity ranks with the least wanted coding named (as the `negotiator` package
  // has it), yet stays acceptable unless `*;q=0` refuses it.
  const least = Math.min(1, ...weights.values());
  const weight = (coding: ContentCoding): number =>
    weights.get(coding) ?? (coding === 'identity' ? (star ?? Math.max(least, 0.001)) : (star ?? 0));
  let best: ContentCoding = 'identity';
  let bestWeight = 0;
  for (const coding of ['br', 'gzip', 'identity'] as const) {
    const w = weight(coding);
    if (w > bestWeight) {
      best = coding;
      bestWeight = w;
    }
  }
  return best;
}
