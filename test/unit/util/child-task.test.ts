import { describe, expect, it } from 'vitest';
import { runChildTask } from '../../../src/util/child-task.ts';

/** runChildTask from the TypeScript sources: the module runs in a process of its own, through tsx. */
const PROBE = { source: 'test/fixtures/child-task-probe.ts', compiled: 'test/fixtures/child-task-probe.js' };

describe('runChildTask', () => {
  it('runs the module in another process, hands it the data and resolves with its result', async () => {
    const answer = await runChildTask<{ doubled: number; pid: number; execArgv: string[] }>(PROBE, { mode: 'answer', value: 21 });
    expect(answer.doubled).toBe(42);
    expect(answer.pid).not.toBe(process.pid);
    // No Node option of this process (a profiler, an inspector) is passed on.
    expect(answer.execArgv).toEqual([]);
  });

  it('rejects with what the task threw', async () => {
    await expect(runChildTask(PROBE, { mode: 'throw', value: 7 })).rejects.toThrow('probe failed on 7');
  });

  it('rejects when the process ends without an answer', async () => {
    await expect(runChildTask(PROBE, { mode: 'exit', value: 1 })).rejects.toThrow(/ended \(exit code 3\) without an answer/);
  });
});
