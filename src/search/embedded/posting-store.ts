import type { PostingLists } from './posting-lists.ts';

/**
 * Frozen lists of positions, one per word (or filter value), in typed arrays: a list whose
 * entries would outweigh a bitset of every position (more than one position in 32) is kept as
 * that bitset instead, which is both smaller and faster to combine; the others as sorted
 * positions in one shared array. `postStart[k]..postStart[k + 1]` are list k's positions;
 * `denseOf[k]` is -1, or the number of list k's bitset in `bitsets`.
 */
export class PostingStore {
  readonly wordsPerBitset: number;

  constructor(
    readonly positions: number,
    readonly postStart: Uint32Array,
    readonly postings: Int32Array,
    readonly denseOf: Int32Array,
    readonly bitsets: Uint32Array,
  ) {
    this.wordsPerBitset = (positions + 31) >>> 5;
  }

  get count(): number {
    return this.denseOf.length;
  }

  /** How many positions list k holds. */
  size(k: number): number {
    const dense = this.denseOf[k]!;
    if (dense < 0) return this.postStart[k + 1]! - this.postStart[k]!;
    let n = 0;
    const base = dense * this.wordsPerBitset;
    for (let i = 0; i < this.wordsPerBitset; i++) {
      let x = this.bitsets[base + i]!;
      x -= (x >>> 1) & 0x55555555;
      x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
      x = (x + (x >>> 4)) & 0x0f0f0f0f;
      n += Math.imul(x, 0x01010101) >>> 24;
    }
    return n;
  }

  /** Sets the bit of every position of list k. */
  orInto(k: number, bits: Uint32Array): void {
    const dense = this.denseOf[k]!;
    if (dense >= 0) {
      const words = this.wordsPerBitset;
      const base = dense * words;
      const b = this.bitsets;
      for (let i = 0; i < words; i++) bits[i]! |= b[base + i]!;
      return;
    }
    const p = this.postings;
    const end = this.postStart[k + 1]!;
    for (let i = this.postStart[k]!; i < end; i++) {
      const s = p[i]!;
      bits[s >>> 5]! |= 1 << (s & 31);
    }
  }

  /**
   * Freezes growing lists (positions appended in ascending order), taking list `order[k]` as
   * list k.
   */
  static freeze(lists: PostingLists, order: ArrayLike<number>, positions: number): PostingStore {
    const count = order.length;
    const wordsPer = (positions + 31) >>> 5;
    const denseOf = new Int32Array(count).fill(-1);
    const postStart = new Uint32Array(count + 1);
    let sparse = 0;
    let dense = 0;
    for (let k = 0; k < count; k++) {
      const size = lists.size(order[k]!);
      if (size * 32 > positions && size > 64) denseOf[k] = dense++;
      else sparse += size;
    }
    const postings = new Int32Array(sparse);
    const bitsets = new Uint32Array(dense * wordsPer);
    let at = 0;
    for (let k = 0; k < count; k++) {
      postStart[k] = at;
      const list = order[k]!;
      const d = denseOf[k]!;
      if (d >= 0) {
        const base = d * wordsPer;
        lists.forEach(list, (s) => {
          bitsets[base + (s >>> 5)]! |= 1 << (s & 31);
        });
      } else {
        lists.forEach(list, (s) => {
          postings[at++] = s;
        });
      }
    }
    postStart[count] = at;
    return new PostingStore(positions, postStart, postings, denseOf, bitsets);
  }
}
