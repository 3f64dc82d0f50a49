import type { Leadership } from '../src/db/leadership.ts';
import type { Log } from '../src/util/log.ts';

/** How often a leader confirms its leading session is still there. */
const VERIFY_LEADERSHIP_MS = 10_000;

/** Every how many polls a leader confirms its session: about every 10 s, at least every poll. */
export function verifyEveryTicks(pollMs: number): number {
  return Math.max(1, Math.round(VERIFY_LEADERSHIP_MS / pollMs));
}

export interface LeaderPollOptions {
  pollMs: number;
  log: Log;
  stopping: () => boolean;
  /** Runs the projector (it does nothing unless this process leads). */
  wake: () => void;
}

/**
 * What each poll does about leadership. A standby asks for the leader's lock (one attempt at a
 * time) and, once it has it, wakes the projector at once; a leader wakes it, and every 10 s or
 * so confirms its leading session is still there. Losing leadership is the Leadership's to
 * notice (a closed session, or a write transaction finding the lock gone); a process that lost it
 * is a standby again at its next poll.
 */
export class LeaderPoll {
  private acquiring = false;
  private ticks = 0;
  private readonly verifyEvery: number;

  constructor(
    private readonly leadership: Pick<Leadership, 'isLeader' | 'tryAcquire' | 'verify'>,
    private readonly opts: LeaderPollOptions,
  ) {
    this.verifyEvery = verifyEveryTicks(opts.pollMs);
  }

  /** Tries once to lead, unless leading, stopping or already trying; a database out of reach is logged and tried again at the next poll. */
  async tryLead(): Promise<void> {
    if (this.acquiring || this.opts.stopping() || this.leadership.isLeader) return;
    this.acquiring = true;
    try {
      if (await this.leadership.tryAcquire()) {
        this.opts.log.info({ pid: process.pid }, 'projector is leading');
        this.opts.wake();
      }
    } catch (err) {
      this.opts.log.warn({ err }, 'projector could not reach the database for leadership; retrying');
    } finally {
      this.acquiring = false;
    }
  }

  /** One poll. */
  tick(): void {
    if (this.opts.stopping()) return;
    if (!this.leadership.isLeader) {
      void this.tryLead();
      return;
    }
    if (++this.ticks % this.verifyEvery === 0) void this.leadership.verify();
    this.opts.wake();
  }
}
