import { spawnSync } from 'node:child_process';
import { appendFile, cp, mkdtemp, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `catalog` runs the compiled JavaScript in dist/ only when it was built from the sources as
 * they are: in a copy of the project, a build is used; a source changed since is run from the
 * sources (never the older compiled code); a file touched but unchanged keeps the build; a
 * missing build falls back to the sources.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MARKER = 'ran the compiled build';

let copy: string;

function catalog(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  delete env.CATALOG_RUNTIME;
  const r = spawnSync(process.execPath, [path.join(copy, 'bin/catalog.js'), ...args], { cwd: copy, env, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  copy = await mkdtemp(path.join(os.tmpdir(), 'catalog-build-'));
  for (const entry of ['bin', 'src', 'projector', 'migrations', 'search-config', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
    await cp(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
  }
  await symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  const build = spawnSync(process.execPath, [path.join(copy, 'bin/build.js')], { cwd: copy, encoding: 'utf8', timeout: 300_000 });
  expect(build.status, build.stdout + build.stderr).toBe(0);
  // A line only the compiled entry prints, so a test can tell which code ran.
  await appendFile(path.join(copy, 'dist/src/cli.js'), `\nconsole.error(${JSON.stringify(MARKER)});\n`);
}, 320_000);

afterAll(async () => {
  if (copy) await rm(copy, { recursive: true, force: true });
});

describe('the catalog command and dist/', () => {
  it('runs the build when it matches the sources', () => {
    const r = catalog('--version');
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe('1.0.0');
    expect(r.stderr).toContain(MARKER);
  });

  it('keeps the build when a source is touched but not changed', async () => {
    const file = path.join(copy, 'src/cli.ts');
    const later = new Date(Date.now() + 5_000);
    await utimes(file, later, later);
    expect(catalog('--version').stderr).toContain(MARKER);
  });

  it('runs the sources, never the older build, once a source changed', async () => {
    const file = path.join(copy, 'src/cli.ts');
    const source = await readFile(file, 'utf8');
    await writeFile(file, source.replace("'usage: catalog <command> [options]", "'usage (changed): catalog <command> [options]"));
    const r = catalog('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage (changed): catalog <command>');
    expect(r.stderr).not.toContain(MARKER);
    // Back as built: the build is current again.
    await writeFile(file, source);
    expect(catalog('--version').stderr).toContain(MARKER);
  });

  it('runs the sources when a source is added, or the build is missing', async () => {
    await writeFile(path.join(copy, 'src/added-later.ts'), 'export const added = 1;\n');
    expect(catalog('--version').stderr).not.toContain(MARKER);
    await rm(path.join(copy, 'src/added-later.ts'));
    expect(catalog('--version').stderr).toContain(MARKER);
    await rm(path.join(copy, 'dist/build-stamp.json'));
    const r = catalog('--version');
    expect(r.stdout.trim()).toBe('1.0.0');
    expect(r.stderr).not.toContain(MARKER);
  });
});
