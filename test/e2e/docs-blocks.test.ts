import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../src/util/project-file.ts';
import { foreignHosts, readDocs, runnableBlocks, type RunnableBlock } from '../helpers/markdown-docs.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/**
 * Every shell block the README and docs/ mark as runnable (`<!-- runnable -->` before a ```sh
 * fence; docs/development.md, "Runnable blocks"), run as it is printed there with `sh -e` against
 * a live service on the fixture catalog, its address in CATALOG_URL and API. A block that names
 * a host other than loopback is refused before it runs. A named block (a script that runs until
 * stopped) is left to the test that names it. Needs sh, curl and jq; without them it is skipped
 * with a line saying so, except under CI=true, where it fails.
 */
const ROOT = path.dirname(projectPath('package.json'));
const tools = ['sh', 'curl', 'jq'].filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
const runnable = tools.length === 0;
if (!runnable && !process.env.CI) console.log(`docs blocks test skipped: ${tools.join(', ')} not installed`);

const docs = readDocs(ROOT);
const blocks: RunnableBlock[] = [...docs].filter(([f]) => f === 'README.md' || f.startsWith('docs/')).flatMap(([f, text]) => runnableBlocks(f, text));
const plain = blocks.filter((b) => b.name === undefined);
const named = blocks.filter((b) => b.name !== undefined);

let stack: TestStack;
let work: string;

beforeAll(async () => {
  if (!runnable) return;
  // The blocks read the export and search more often than a minute's budget of one address allows.
  stack = await startTestStack({ listen: true, env: { RATE_LIMIT_EXPORT_PER_MIN: '1000', RATE_LIMIT_SEARCH_PER_MIN: '1000', RATE_LIMIT_OTHER_PER_MIN: '1000', RATE_LIMIT_CHANGES_PER_MIN: '1000' } });
  work = await mkdtemp(path.join(os.tmpdir(), 'docs-blocks-'));
});
afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Runs one block in a folder of its own; resolves with its exit status and output. */
async function run(block: RunnableBlock, index: number): Promise<{ code: number | null; out: string }> {
  const dir = await mkdtemp(path.join(work, `block-${index}-`));
  await writeFile(path.join(dir, 'block.sh'), `${block.code}\n`);
  const child = spawn('sh', ['-e', 'block.sh'], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: dir, CATALOG_URL: stack.baseUrl, API: `${stack.baseUrl}/api/v1` },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, out };
}

describe('the runnable blocks of the docs', () => {
  it('are found: the tour, the API and MCP examples, and the mirror script', () => {
    expect(plain.filter((b) => b.file === 'README.md').length).toBeGreaterThanOrEqual(2);
    expect(plain.some((b) => b.file === 'docs/api.md')).toBe(true);
    expect(plain.some((b) => b.file === 'docs/mcp.md')).toBe(true);
    expect(named.map((b) => b.name)).toContain('mirror-catalog');
  });

  it('name only loopback hosts', () => {
    for (const b of blocks) expect(foreignHosts(b.code), `${b.file}:${b.line}`).toEqual([]);
  });

  it('each named block is run by a test that names it', async () => {
    const tests = await readdir(path.join(ROOT, 'test'), { recursive: true });
    const texts = await Promise.all(
      tests.filter((f) => f.endsWith('.test.ts') && !f.endsWith('docs-blocks.test.ts')).map((f) => readFile(path.join(ROOT, 'test', f), 'utf8')),
    );
    for (const b of named) expect(texts.some((t) => t.includes(`'${b.name}'`)), `${b.file}:${b.line} (${b.name})`).toBe(true);
  });

  describe.runIf(runnable || process.env.CI)('against a live service', () => {
    it.each(plain.map((b, i) => [`${b.file}:${b.line}`, b, i] as const))('%s exits 0', async (_where, block, index) => {
      const { code, out } = await run(block, index);
      expect(code, out).toBe(0);
      expect(out.length).toBeGreaterThan(0);
    });
  });
});
