/** Sets of document slots as bit arrays: one 32-bit word per 32 slots. */

export function emptyBits(slots: number): Uint32Array {
  return new Uint32Array((slots + 31) >>> 5);
}

/**
 * Sets `out` to the slots in every one of `sets` (at least one, each as long as `out`) and
 * returns how many there are: one pass over the words for up to four sets.
 */
export function intersectCount(out: Uint32Array, sets: readonly Uint32Array[]): number {
  const a = sets[0]!;
  const b = sets[1] ?? a;
  const c = sets[2] ?? b;
  const d = sets[3] ?? c;
  let count = 0;
  for (let i = 0; i < out.length; i++) {
    const w = a[i]! & b[i]! & c[i]! & d[i]!;
    out[i] = w;
    if (w !== 0) count += popcount32(w);
  }
  if (sets.length <= 4) return count;
  for (let k = 4; k < sets.length; k++) andInto(out, sets[k]!);
  return countBits(out);
}

/** Keeps in `into` only the slots also in `other`. */
export function andInto(into: Uint32Array, other: Uint32Array): void {
  for (let i = 0; i < into.length; i++) into[i]! &= other[i]!;
}

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

export function countBits(bits: Uint32Array): number {
  let n = 0;
  for (let i = 0; i < bits.length; i++) if (bits[i] !== 0) n += popcount32(bits[i]!);
  return n;
}

export function hasBit(bits: Uint32Array, slot: number): boolean {
  return (bits[slot >>> 5]! & (1 << (slot & 31))) !== 0;
}

/** Calls `visit` with every slot in the set, ascending. */
export function forEachBit(bits: Uint32Array, visit: (slot: number) => void): void {
  for (let i = 0; i < bits.length; i++) {
    let w = bits[i]!;
    while (w !== 0) {
      const low = w & -w;
      visit((i << 5) + (31 - Math.clz32(low)));
      w ^= low;
    }
  }
}
