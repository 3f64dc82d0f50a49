import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs the probe with a stdout pipe the test closes first; what it said and how it ended. */
async function probe(mode: 'ours' | 'pino-destination'): Promise<{ stderr: string; code: number | null; killed: boolean }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/run-ts.js'), path.join(ROOT, 'test/fixtures/closed-output-probe.ts'), mode], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  // Given 5 s from the fatal line on (a slow machine may take longer than that to start it).
  let killer: NodeJS.Timeout | undefined;
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.includes('fatal\n')) killer ??= setTimeout(() => child.kill('SIGKILL'), 5_000);
  });
  child.stdout.destroy(); // no one reads its output any more
  child.stdin.write('go\n');
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
  clearTimeout(killer);
  return { stderr, code, killed: signal === 'SIGKILL' };
}

describe('the log output (src/util/log-output.ts)', () => {
  it('a fatal line on a closed stdout returns, and the closed output is said once (EPIPE)', async () => {
    const ours = await probe('ours');
    expect(ours.killed).toBe(false);
    expect(ours.code).toBe(0);
    expect(ours.stderr).toContain('returned\nclosed=EPIPE\n');
  }, 30_000);

  it("pino's own destination never returns from the same fatal line (why ours exists)", async () => {
    const theirs = await probe('pino-destination');
    expect(theirs.stderr).toContain('fatal\n');
    expect(theirs.stderr).not.toContain('returned');
    expect(theirs.killed).toBe(true);
  }, 30_000);
});
