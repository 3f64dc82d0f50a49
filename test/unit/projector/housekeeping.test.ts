import { describe, expect, it, vi } from 'vitest';
import { CHANGE_PRUNE_BATCHES, PRUNE_EVERY_MS, pruneInBatches, pruningDue } from '../../../projector/housekeeping.ts';

/** When the leader prunes, and how the change log is pruned a short transaction at a time. */

describe('pruning is due', () => {
  it('every ten minutes, the first time at once', () => {
    expect(PRUNE_EVERY_MS).toBe(600_000);
    expect(pruningDue(1_000_000, 0, false)).toBe(true);
    expect(pruningDue(1_000_000, 1_000_000 - PRUNE_EVERY_MS + 1, false)).toBe(false);
    expect(pruningDue(1_000_000, 1_000_000 - PRUNE_EVERY_MS, false)).toBe(true);
  });

  it('never while catchUp is waited for', () => {
    expect(pruningDue(1_000_000, 0, true)).toBe(false);
  });
});

describe('pruning in batches', () => {
  it('goes on while each batch finds something, up to the round’s number of batches', async () => {
    const pruneOne = vi.fn(async () => 1_000);
    expect(await pruneInBatches(pruneOne, CHANGE_PRUNE_BATCHES, () => true)).toBe(20_000);
    expect(pruneOne).toHaveBeenCalledTimes(20);
  });

  it('stops at the first batch that finds nothing', async () => {
    const found = [1_000, 400, undefined, 1_000];
    const pruneOne = vi.fn(async () => found.shift());
    expect(await pruneInBatches(pruneOne, 20, () => true)).toBe(1_400);
    expect(pruneOne).toHaveBeenCalledTimes(3);
  });

  it('stops between batches once told to (leadership lost, stopping)', async () => {
    let go = true;
    const pruneOne = vi.fn(async () => {
      go = false;
      return 10;
    });
    expect(await pruneInBatches(pruneOne, 20, () => go)).toBe(10);
    expect(pruneOne).toHaveBeenCalledTimes(1);
  });
});
