import { describe, expect, it } from 'vitest';
import { deliveryOf, mustLoadWhole, newerSnapshotCheckDue, newerSnapshotUsable, NO_STATE, snapshotUsable, type StateRow } from '../../../src/read/mirror-versions.ts';

/** What a mirror's sync applies: the whole projection, the changes since its version, or a newer snapshot. */

const state = (over: Partial<StateRow>): StateRow => ({ ...NO_STATE, ...over });

describe('loading the whole projection', () => {
  it('when nothing is loaded yet', () => {
    expect(mustLoadWhole(-1, state({ version: 0 }))).toBe(true);
  });

  it('when the removals since the mirror’s version are no longer kept', () => {
    expect(mustLoadWhole(10, state({ version: 20, oldest_version: 11 }))).toBe(true);
    expect(mustLoadWhole(11, state({ version: 20, oldest_version: 11 }))).toBe(false);
  });

  it('when the projection is older than what the mirror holds', () => {
    expect(mustLoadWhole(30, state({ version: 20 }))).toBe(true);
  });

  it('not when the mirror is current or behind within what is kept', () => {
    expect(mustLoadWhole(20, state({ version: 20 }))).toBe(false);
    expect(mustLoadWhole(0, state({ version: 5 }))).toBe(false);
  });
});

describe('a stored snapshot', () => {
  it('is usable from the oldest kept version up to the projection’s', () => {
    const s = state({ version: 20, oldest_version: 10 });
    expect([9, 10, 15, 20, 21].map((v) => snapshotUsable(v, s))).toEqual([false, true, true, true, false]);
  });

  it('is looked for once enough changed since ours: a thousand products and a fiftieth of it, every 10 s at most', () => {
    expect(newerSnapshotCheckDue(999, 1_000, 60_000)).toBe(false);
    expect(newerSnapshotCheckDue(1_000, 50_000, 60_000)).toBe(true);
    expect(newerSnapshotCheckDue(1_999, 100_000, 60_000)).toBe(false);
    expect(newerSnapshotCheckDue(2_000, 100_000, 60_000)).toBe(true);
    expect(newerSnapshotCheckDue(2_000, 100_000, 9_999)).toBe(false);
  });

  it('is moved to when newer than ours and usable', () => {
    const s = state({ version: 20, oldest_version: 10 });
    expect(newerSnapshotUsable(undefined, 12, s)).toBe(false);
    expect(newerSnapshotUsable({ version: 12 }, 12, s)).toBe(false);
    expect(newerSnapshotUsable({ version: 18 }, 12, s)).toBe(true);
    expect(newerSnapshotUsable({ version: 21 }, 12, s)).toBe(false);
    expect(newerSnapshotUsable({ version: 18 }, 12, state({ version: 20, oldest_version: 19 }))).toBe(false);
  });
});

describe('the way of a version applied', () => {
  it('is measured from its oldest change to the projector’s commit, then to now, in seconds', () => {
    const s = state({ committed_at: new Date(10_000), oldest_change_at: new Date(9_250) });
    expect(deliveryOf(s, 10_400)).toEqual({ projected: 0.75, applied: 0.4 });
  });

  it('is never negative (clocks of two hosts)', () => {
    const s = state({ committed_at: new Date(10_000), oldest_change_at: new Date(10_500) });
    expect(deliveryOf(s, 9_000)).toEqual({ projected: 0, applied: 0 });
  });

  it('is unknown when the projector recorded no times', () => {
    expect(deliveryOf(state({ committed_at: new Date(10_000) }), 10_400)).toBeUndefined();
    expect(deliveryOf(NO_STATE, 10_400)).toBeUndefined();
  });
});
