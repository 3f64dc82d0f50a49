import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HeldBackRetry, nextHeldBackDelay } from '../../../projector/held-back-retry.ts';

/** Committed rows held back by an open transaction are looked at again soon: 10 ms, doubling to 100 ms at most, never past the poll. */

describe('the wait before looking again', () => {
  it('starts at 10 ms and doubles up to 100 ms', () => {
    const waits: number[] = [];
    let delay = 0;
    for (let i = 0; i < 7; i++) waits.push((delay = nextHeldBackDelay(delay, 1000)));
    expect(waits).toEqual([10, 20, 40, 80, 100, 100, 100]);
  });

  it('is never longer than the poll', () => {
    expect(nextHeldBackDelay(0, 5)).toBe(5);
    expect(nextHeldBackDelay(40, 50)).toBe(50);
  });
});

describe('HeldBackRetry', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('wakes the projector after the wait, with one wake-up pending at most', () => {
    const wake = vi.fn();
    const retry = new HeldBackRetry(1000, wake, () => false);
    retry.note(true);
    retry.note(true);
    expect(retry.delayMs).toBe(20);
    vi.advanceTimersByTime(9);
    expect(wake).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(wake).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1000);
    expect(wake).toHaveBeenCalledTimes(1);
  });

  it('starts again from 10 ms once nothing was held back', () => {
    const retry = new HeldBackRetry(1000, () => undefined, () => false);
    for (let i = 0; i < 5; i++) retry.note(true);
    expect(retry.delayMs).toBe(100);
    retry.note(false);
    expect(retry.delayMs).toBe(0);
    retry.note(true);
    expect(retry.delayMs).toBe(10);
    retry.stop();
  });

  it('sets no timer while stopping, and stop cancels the pending one', () => {
    const wake = vi.fn();
    let stopping = true;
    const retry = new HeldBackRetry(1000, wake, () => stopping);
    retry.note(true);
    vi.advanceTimersByTime(1000);
    expect(wake).not.toHaveBeenCalled();
    stopping = false;
    retry.note(true);
    retry.stop();
    vi.advanceTimersByTime(1000);
    expect(wake).not.toHaveBeenCalled();
  });
});
