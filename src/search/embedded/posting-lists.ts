/** Lists shorter than this stay plain arrays: a typed array costs ~200 bytes before its first entry. */
const SMALL_LIST = 32;

/**
 * Numbered lists of document slots, in ascending slot order (slots only ever grow between
 * compactions, so appending keeps each list sorted). Most words are rare: their lists stay small
 * plain arrays; common words' lists become Int32Arrays that double when full.
 */
export class PostingLists {
  private lists: Array<number[] | Int32Array> = [];
  /** Entries used in each Int32Array list (plain arrays know their own length). */
  private lengths: number[] = [];

  get count(): number {
    return this.lists.length;
  }

  /** A new, empty list; returns its number. */
  create(): number {
    this.lists.push([]);
    this.lengths.push(0);
    return this.lists.length - 1;
  }

  push(list: number, slot: number): void {
    const l = this.lists[list]!;
    if (Array.isArray(l)) {
      if (l.length < SMALL_LIST) {
        l.push(slot);
        return;
      }
      const grown = new Int32Array(SMALL_LIST * 2);
      grown.set(l);
      grown[SMALL_LIST] = slot;
      this.lists[list] = grown;
      this.lengths[list] = SMALL_LIST + 1;
      return;
    }
    let typed = l;
    const used = this.lengths[list]!;
    if (used === typed.length) {
      const grown = new Int32Array(typed.length * 2);
      grown.set(typed);
      this.lists[list] = typed = grown;
    }
    typed[used] = slot;
    this.lengths[list] = used + 1;
  }

  /** Gives back the unused tail of every grown list (after a bulk load, where doubling left up to half unused). */
  trim(): void {
    for (let k = 0; k < this.lists.length; k++) {
      const l = this.lists[k]!;
      if (!Array.isArray(l) && this.lengths[k]! < l.length) this.lists[k] = l.slice(0, this.lengths[k]);
    }
  }

  size(list: number): number {
    const l = this.lists[list]!;
    return Array.isArray(l) ? l.length : this.lengths[list]!;
  }

  /** Calls `visit` with every slot of the list, in order. */
  forEach(list: number, visit: (slot: number) => void): void {
    const l = this.lists[list]!;
    const n = Array.isArray(l) ? l.length : this.lengths[list]!;
    for (let i = 0; i < n; i++) visit(l[i]!);
  }

  /** Sets the bit of every slot of the list that `alive` still marks live. */
  orInto(list: number, bits: Uint32Array, alive: Uint8Array): void {
    const l = this.lists[list]!;
    const n = Array.isArray(l) ? l.length : this.lengths[list]!;
    for (let i = 0; i < n; i++) {
      const s = l[i]!;
      if (alive[s] === 1) bits[s >>> 5]! |= 1 << (s & 31);
    }
  }

  /**
   * Drops slots that `remap` maps to -1 and renumbers the rest, then drops empty lists,
   * renumbering the remaining lists densely. Returns the old-to-new list number map (-1 for a
   * dropped list).
   */
  compact(remap: Int32Array): Int32Array {
    const listRemap = new Int32Array(this.lists.length).fill(-1);
    const lists: Array<number[] | Int32Array> = [];
    const lengths: number[] = [];
    for (let k = 0; k < this.lists.length; k++) {
      const l = this.lists[k]!;
      const n = Array.isArray(l) ? l.length : this.lengths[k]!;
      const kept: number[] = [];
      for (let i = 0; i < n; i++) {
        const s = remap[l[i]!]!;
        if (s >= 0) kept.push(s);
      }
      if (kept.length === 0) continue;
      listRemap[k] = lists.length;
      if (kept.length <= SMALL_LIST) {
        lists.push(kept);
        lengths.push(0);
      } else {
        lists.push(Int32Array.from(kept));
        lengths.push(kept.length);
      }
    }
    this.lists = lists;
    this.lengths = lengths;
    return listRemap;
  }
}
