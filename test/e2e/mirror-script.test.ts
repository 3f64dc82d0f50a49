import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../src/util/project-file.ts';
import { FIXTURE_IDS } from '../helpers/fixtures.ts';
import { runnableBlocks } from '../helpers/markdown-docs.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';
import { insertListing, updateListing } from '../helpers/write-model.ts';

/**
 * The curl + jq script of docs/api.md that keeps a mirror of the catalog (the runnable block
 * named `mirror-catalog`: docs/development.md, "Runnable blocks"), run as it is printed there
 * against a live service: it exports, follows the feed, and starts over from a new export when
 * its cursor expired. Needs sh, curl and jq (CI installs jq); without them it is skipped with a
 * line saying so, except under CI=true, where it fails.
 */
const tools = ['sh', 'curl', 'jq'].filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
const runnable = tools.length === 0;
if (!runnable && !process.env.CI) console.log(`mirror script test skipped: ${tools.join(', ')} not installed`);

let stack: TestStack;
let work: string;
const scripts: ChildProcess[] = [];

/** The script block of docs/api.md, section "Export and change feed". */
async function mirrorScript(): Promise<string> {
  const blocks = runnableBlocks('docs/api.md', await readFile(projectPath('docs/api.md'), 'utf8'));
  const block = blocks.find((b) => b.name === 'mirror-catalog');
  if (!block) throw new Error('docs/api.md has no runnable block named mirror-catalog');
  return `${block.code}\n`;
}

beforeAll(async () => {
  if (!runnable) return;
  // The test's own checks read the export and every product often: budgets out of their way.
  stack = await startTestStack({ listen: true, env: { RATE_LIMIT_EXPORT_PER_MIN: '1000', RATE_LIMIT_OTHER_PER_MIN: '100000' } });
  work = await mkdtemp(path.join(os.tmpdir(), 'mirror-script-'));
  await writeFile(path.join(work, 'mirror-catalog.sh'), await mirrorScript());
});
afterAll(async () => {
  for (const s of scripts) if (s.exitCode === null && s.signalCode === null) process.kill(-s.pid!, 'SIGKILL');
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

function runScript(dir: string): ChildProcess {
  // Its own process group, so stopping it stops the curl it may be waiting on.
  const child = spawn('sh', [path.join(work, 'mirror-catalog.sh')], {
    env: { PATH: process.env.PATH, API: `${stack.baseUrl}/api/v1`, DIR: dir },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.on('exit', (code, signal) => {
    if (signal === null) console.error(`mirror script exited ${code}: ${stderr}`);
  });
  scripts.push(child);
  return child;
}

async function stopScript(child: ChildProcess): Promise<void> {
  process.kill(-child.pid!, 'SIGTERM');
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
}

/** The live catalog as the API answers it: slug → Product. */
async function liveCatalog(): Promise<Record<string, unknown>> {
  const res = await fetch(`${stack.baseUrl}/api/v1/export`);
  const out: Record<string, unknown> = {};
  for (const line of (await res.text()).split('\n').filter(Boolean)) {
    const p = JSON.parse(line) as { slug: string };
    out[p.slug] = p;
  }
  return out;
}

async function mirrored(dir: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path.join(dir, 'catalog.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

async function expectMirrorOfLive(dir: string): Promise<void> {
  await stack.settle();
  const live = await liveCatalog();
  await expect.poll(() => mirrored(dir), { timeout: 20_000, interval: 100 }).toEqual(live);
  for (const [slug, product] of Object.entries(live)) {
    expect(await (await fetch(`${stack.baseUrl}/api/v1/products/${slug}`)).json()).toEqual(product);
  }
}

describe.runIf(runnable || process.env.CI)('the mirror script of docs/api.md', () => {
  it('exports, then follows the feed: renames, leavers, newcomers and edits all reach the file', async () => {
    const dir = path.join(work, 'mirror');
    const script = runScript(dir);
    await expectMirrorOfLive(dir);
    await updateListing(stack.db.pool, FIXTURE_IDS['deploy-kite']!, { slug: 'deploy-kite-renamed' });
    await updateListing(stack.db.pool, FIXTURE_IDS['note-garden']!, { status: 'hidden' });
    await updateListing(stack.db.pool, FIXTURE_IDS['pixel-forge']!, { punchline: 'Mirrored by a shell script' });
    await insertListing(stack.db.pool, { slug: 'appears-in-the-mirror' });
    await expectMirrorOfLive(dir);
    const copy = (await mirrored(dir)) as Record<string, { punchline: string }>;
    expect(copy['pixel-forge']!.punchline).toBe('Mirrored by a shell script');
    expect(copy['note-garden']).toBeUndefined();
    expect(copy['deploy-kite-renamed']).toBeDefined();
    await stopScript(script);

    // Stopped and started again, it goes on from its cursor.
    await updateListing(stack.db.pool, FIXTURE_IDS['note-garden']!, { status: 'live' });
    const again = runScript(dir);
    await expectMirrorOfLive(dir);
    await stopScript(again);
  });

  it('starts over from a new export when its cursor expired', async () => {
    const dir = path.join(work, 'expired');
    const head = ((await (await fetch(`${stack.baseUrl}/api/v1/changes`)).json()) as { cursor: string }).cursor;
    const foreign = `${head.startsWith('ffffffff') ? '00000000' : 'ffffffff'}-1`;
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'cursor'), `${foreign}\n`);
    await writeFile(path.join(dir, 'catalog.json'), '{"stale-listing":{}}');
    const script = runScript(dir);
    await expectMirrorOfLive(dir);
    expect((await readFile(path.join(dir, 'cursor'), 'utf8')).trim()).not.toBe(foreign);
    await stopScript(script);
  });
});
