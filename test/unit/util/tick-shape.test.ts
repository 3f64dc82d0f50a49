import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The states of the stores in Node's tick-entry literal, as V8 reports them after bursts of
 * `process.nextTick` separated by full garbage collections (test/fixtures/tick-shape-probe.ts).
 */
async function literalStores(mode: 'bare' | 'kept' | 'widened'): Promise<string[]> {
  // V8 prints through C's buffered stdout, which a pipe can lose the end of at exit: a file keeps it all.
  const dir = mkdtempSync(path.join(tmpdir(), 'tick-shape-'));
  const file = path.join(dir, 'stdout.txt');
  const fd = openSync(file, 'w');
  try {
    const child = spawn(
      process.execPath,
      ['--allow-natives-syntax', '--expose-gc', path.join(ROOT, 'bin/run-ts.js'), path.join(ROOT, 'test/fixtures/tick-shape-probe.ts'), mode],
      { cwd: ROOT, stdio: ['ignore', fd, 'inherit'] },
    );
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  } finally {
    closeSync(fd);
  }
  const stdout = readFileSync(file, 'utf8');
  rmSync(dir, { recursive: true, force: true });
  return [...stdout.matchAll(/slot #\d+ DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]!);
}

describe('keepTickObjectShape', () => {
  it('without it, full collections between bursts of nextTick turn its stores megamorphic (why it exists)', async () => {
    const states = await literalStores('bare');
    expect(states.length).toBeGreaterThanOrEqual(4);
    expect(states).toContain('MEGAMORPHIC');
  });

  it('keeps every store of the tick entry monomorphic through those collections', async () => {
    const states = await literalStores('kept');
    expect(states.length).toBeGreaterThanOrEqual(4);
    expect(states.every((s) => s === 'MONOMORPHIC')).toBe(true);
  });

  it('still does once async ids leave the small-integer range', async () => {
    const states = await literalStores('widened');
    expect(states.length).toBeGreaterThanOrEqual(4);
    expect(states.every((s) => s === 'MONOMORPHIC')).toBe(true);
  });
});
