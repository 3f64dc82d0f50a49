import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { msUntilNextUtcMidnight, wakeAtUtcMidnights } from '../../../projector/promo-lapse.ts';

/** A promo is public through the last day of its expiry (UTC): the projector wakes just after each UTC midnight. */

describe('the next UTC midnight', () => {
  it('is the start of the next UTC day, plus a second so the date has turned', () => {
    expect(msUntilNextUtcMidnight(new Date('2026-03-04T23:59:59.000Z'))).toBe(2_000);
    expect(msUntilNextUtcMidnight(new Date('2026-03-04T00:00:00.000Z'))).toBe(86_400_000 + 1_000);
    // The end of a month and of a year.
    expect(msUntilNextUtcMidnight(new Date('2026-02-28T12:00:00.000Z'))).toBe(12 * 3_600_000 + 1_000);
    expect(msUntilNextUtcMidnight(new Date('2026-12-31T23:00:00.000Z'))).toBe(3_600_000 + 1_000);
  });

  it('does not follow the local time zone', () => {
    const zone = process.env.TZ;
    // 23:30 UTC is already the next day in Tokyo; the UTC day still has 30 minutes.
    process.env.TZ = 'Asia/Tokyo';
    try {
      expect(new Date('2026-06-30T23:30:00.000Z').getDate()).toBe(1);
      expect(msUntilNextUtcMidnight(new Date('2026-06-30T23:30:00.000Z'))).toBe(30 * 60_000 + 1_000);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});

describe('waking at every UTC midnight', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-03-04T22:00:00.000Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('wakes once just after each midnight, by the clock it is given, until stopped', () => {
    const wake = vi.fn();
    const wakes = wakeAtUtcMidnights(() => new Date(), wake);
    vi.advanceTimersByTime(2 * 3_600_000);
    expect(wake).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1_000);
    expect(wake).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(86_400_000);
    expect(wake).toHaveBeenCalledTimes(2);
    wakes.stop();
    vi.advanceTimersByTime(3 * 86_400_000);
    expect(wake).toHaveBeenCalledTimes(2);
  });
});
