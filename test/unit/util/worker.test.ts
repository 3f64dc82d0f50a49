import { threadId } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../../src/util/project-file.ts';
import { runInWorker } from '../../../src/util/worker.ts';

/** runInWorker from the TypeScript sources: the module runs in a thread of its own, through tsx. */
const PROBE = { source: 'test/fixtures/worker-probe.ts', compiled: 'test/fixtures/worker-probe.js' };

describe('runInWorker', () => {
  it('runs the module in another thread, gives it the data and resolves with its first message', async () => {
    const answer = await runInWorker<{ doubled: number; isMainThread: boolean; threadId: number; root: string }>(PROBE, { mode: 'answer', value: 21 });
    expect(answer.doubled).toBe(42);
    expect(answer.isMainThread).toBe(false);
    expect(answer.threadId).not.toBe(threadId);
    expect(answer.root).toBe(projectPath('package.json'));
  });

  it('rejects with what the module threw', async () => {
    await expect(runInWorker(PROBE, { mode: 'throw', value: 7 })).rejects.toThrow('probe failed on 7');
  });

  it('rejects when the module ends without an answer', async () => {
    await expect(runInWorker(PROBE, { mode: 'silent', value: 1 })).rejects.toThrow(/ended \(exit code 0\) without an answer/);
  });
});
