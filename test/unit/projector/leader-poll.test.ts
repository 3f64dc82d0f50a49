import { describe, expect, it, vi } from 'vitest';
import { LeaderPoll, verifyEveryTicks } from '../../../projector/leader-poll.ts';
import { silentLog } from '../../../src/util/log.ts';

/** What each poll does about leadership: a standby asks for the lock, a leader runs and confirms its session now and then. */

function fakeLeadership(acquire: () => Promise<boolean>) {
  const l = {
    isLeader: false,
    tryAcquire: vi.fn(async () => (l.isLeader = await acquire())),
    verify: vi.fn(async () => undefined),
  };
  return l;
}

const settle = () => new Promise((r) => setImmediate(r));

describe('a leader confirms its session', () => {
  it('about every 10 s, and at least at every poll', () => {
    expect(verifyEveryTicks(1000)).toBe(10);
    expect(verifyEveryTicks(100)).toBe(100);
    expect(verifyEveryTicks(30_000)).toBe(1);
  });
});

describe('LeaderPoll', () => {
  it('a standby asks for the lock at each poll and, once it has it, wakes the projector', async () => {
    let free = false;
    const leadership = fakeLeadership(async () => free);
    const wake = vi.fn();
    const poll = new LeaderPoll(leadership, { pollMs: 1000, log: silentLog, stopping: () => false, wake });
    poll.tick();
    await settle();
    expect(leadership.tryAcquire).toHaveBeenCalledTimes(1);
    expect(wake).not.toHaveBeenCalled();
    free = true;
    poll.tick();
    await settle();
    expect(leadership.tryAcquire).toHaveBeenCalledTimes(2);
    expect(wake).toHaveBeenCalledTimes(1);
  });

  it('asks once at a time: polls while an attempt waits do not ask again', async () => {
    let answer: (ok: boolean) => void = () => undefined;
    const leadership = fakeLeadership(() => new Promise<boolean>((r) => (answer = r)));
    const poll = new LeaderPoll(leadership, { pollMs: 1000, log: silentLog, stopping: () => false, wake: () => undefined });
    poll.tick();
    poll.tick();
    void poll.tryLead();
    expect(leadership.tryAcquire).toHaveBeenCalledTimes(1);
    answer(false);
    await settle();
    poll.tick();
    expect(leadership.tryAcquire).toHaveBeenCalledTimes(2);
  });

  it('a database out of reach is logged, and asked again at the next poll', async () => {
    const leadership = fakeLeadership(async () => {
      throw new Error('connect ECONNREFUSED');
    });
    const warn = vi.fn();
    const poll = new LeaderPoll(leadership, { pollMs: 1000, log: { ...silentLog, warn }, stopping: () => false, wake: () => undefined });
    await poll.tryLead();
    expect(warn).toHaveBeenCalledTimes(1);
    poll.tick();
    expect(leadership.tryAcquire).toHaveBeenCalledTimes(2);
  });

  it('a leader wakes the projector at every poll and confirms its session every tenth, at a 1 s poll', async () => {
    const leadership = fakeLeadership(async () => true);
    const wake = vi.fn();
    const poll = new LeaderPoll(leadership, { pollMs: 1000, log: silentLog, stopping: () => false, wake });
    await poll.tryLead();
    wake.mockClear();
    for (let i = 0; i < 25; i++) poll.tick();
    expect(wake).toHaveBeenCalledTimes(25);
    expect(leadership.verify).toHaveBeenCalledTimes(2);
    expect(leadership.tryAcquire).toHaveBeenCalledTimes(1);
  });

  it('a process that lost leadership is a standby again at its next poll', async () => {
    const leadership = fakeLeadership(async () => true);
    const poll = new LeaderPoll(leadership, { pollMs: 1000, log: silentLog, stopping: () => false, wake: () => undefined });
    await poll.tryLead();
    leadership.isLeader = false;
    poll.tick();
    expect(leadership.tryAcquire).toHaveBeenCalledTimes(2);
  });

  it('does nothing while stopping', async () => {
    const leadership = fakeLeadership(async () => true);
    const wake = vi.fn();
    const poll = new LeaderPoll(leadership, { pollMs: 1000, log: silentLog, stopping: () => true, wake });
    poll.tick();
    await poll.tryLead();
    expect(leadership.tryAcquire).not.toHaveBeenCalled();
    expect(wake).not.toHaveBeenCalled();
  });
});
