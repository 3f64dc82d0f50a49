/** The longest wait before looking again at committed rows an open transaction holds back. */
const HELD_BACK_MAX_MS = 100;
/** The first such wait. */
const HELD_BACK_FIRST_MS = 10;

/**
 * The wait before looking again while committed rows are held back, given the wait before (0
 * when they were not): 10 ms, then twice the last, up to 100 ms and never past the poll.
 */
export function nextHeldBackDelay(previousMs: number, pollMs: number): number {
  return Math.min(pollMs, HELD_BACK_MAX_MS, previousMs ? previousMs * 2 : HELD_BACK_FIRST_MS);
}

/**
 * Committed rows that sort after a transaction still running (a writer, or a server task such
 * as autovacuum's ANALYZE, or any transaction that writes no listing, neither of which sends a
 * NOTIFY) wait for it to end. The projector looks again shortly, backing off to every 100 ms at
 * most, rather than leave them for the next poll: under a steady stream of writes some
 * transaction is nearly always open, and a wait of up to a second showed as the slowest changes
 * in `npm run chaos`.
 */
export class HeldBackRetry {
  private delay = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pollMs: number,
    /** Runs the projector again. */
    private readonly wake: () => void,
    private readonly stopping: () => boolean,
  ) {}

  /** After a turn: whether rows were held back. One wake-up is pending at most. */
  note(heldBack: boolean): void {
    if (!heldBack) {
      this.delay = 0;
      return;
    }
    this.delay = nextHeldBackDelay(this.delay, this.pollMs);
    if (this.timer || this.stopping()) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, this.delay);
  }

  /** The wait the next wake-up was given, 0 when nothing is held back (for tests and logs). */
  get delayMs(): number {
    return this.delay;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
