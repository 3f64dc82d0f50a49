import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../../src/util/project-file.ts';
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

  it('stops the task when the process that started it is killed', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'catalog-child-task-'));
    const pidFile = path.join(dir, 'pid');
    const parent = spawn(process.execPath, [projectPath('bin/run-ts.js'), projectPath('test/fixtures/child-task-parent.ts'), pidFile], { stdio: 'ignore' });
    try {
      let childPid = 0;
      await expect.poll(async () => (childPid = Number(await readFile(pidFile, 'utf8').catch(() => '0'))), { timeout: 20_000 }).toBeGreaterThan(0);
      // Running, not a zombie left for whichever process adopts it to reap.
      const alive = (pid: number) => readFileSync(`/proc/${pid}/stat`, { encoding: 'utf8', flag: 'r' }).split(') ')[1]?.[0] !== 'Z';
      const running = (pid: number) => {
        try {
          return alive(pid);
        } catch {
          return false;
        }
      };
      expect(running(childPid)).toBe(true);
      parent.kill('SIGKILL');
      await expect.poll(() => running(childPid), { timeout: 10_000 }).toBe(false);
    } finally {
      parent.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
