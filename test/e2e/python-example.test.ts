import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/auth/consumer-keys/consumer-keys.ts';
import { projectPath } from '../../src/util/project-file.ts';
import { FIXTURE_IDS } from '../helpers/fixtures.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';
import { insertListing, updateListing } from '../helpers/write-model.ts';

/**
 * The standard-library Python example of clients/python against a running service: a keyed
 * search, refusals reported by their code, and a mirror kept exact through writes and an expired
 * cursor. Needs python3 (CI has it); without it the file is skipped with a line saying so, except
 * under CI=true, where it fails.
 */
const runnable = spawnSync('sh', ['-c', 'command -v python3']).status === 0;
if (!runnable && !process.env.CI) console.log('python example test skipped: python3 not installed');

const SCRIPT = projectPath('clients/python/catalog_mirror.py');
let stack: TestStack;
let api: string;
let key: string;
let work: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  if (!runnable) return;
  stack = await startTestStack({ listen: true, env: { RATE_LIMIT_EXPORT_PER_MIN: '1000', RATE_LIMIT_OTHER_PER_MIN: '100000' } });
  api = `${stack.baseUrl}/api/v1`;
  key = (await createKey(stack.db.pool, { name: `python-${Date.now().toString(36)}`, limits: { search: 777 } })).key;
  while (!stack.service.budgets.keys.check(`Bearer ${key}`).ok) await new Promise((r) => setTimeout(r, 20));
  work = await mkdtemp(path.join(os.tmpdir(), 'python-example-'));
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Runs the script to its end; never spawnSync: the service under test answers in this process. */
async function run(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn('python3', [SCRIPT, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const [status] = (await once(child, 'exit')) as [number | null];
  return { status, stdout, stderr };
}

async function liveCatalog(): Promise<Record<string, unknown>> {
  const text = await (await fetch(`${api}/export`)).text();
  return Object.fromEntries(text.split('\n').filter(Boolean).map((line) => [(JSON.parse(line) as { slug: string }).slug, JSON.parse(line)]));
}

async function mirrored(file: string): Promise<unknown> {
  try {
    return (JSON.parse(await readFile(file, 'utf8')) as { products: unknown }).products;
  } catch {
    return undefined;
  }
}

describe.runIf(runnable || process.env.CI)('the Python example', () => {
  it('searches with a consumer key, and reports 401 INVALID_KEY and 400 by their codes', async () => {
    const ok = await run(['search', api, 'pixel'], { CATALOG_KEY: key });
    expect(ok.status, ok.stderr).toBe(0);
    const page = JSON.parse(ok.stdout) as { products: Array<{ slug: string }>; total: number };
    expect(page.total).toBeGreaterThan(0);
    const bad = await run(['search', api], { CATALOG_KEY: `ck_${'a'.repeat(40)}` });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('401 INVALID_KEY');
    const invalid = await run(['search', api, 'x']);
    expect(invalid.status).toBe(1);
    expect(invalid.stderr).toContain('400 BAD_REQUEST');
  });

  it('keeps a mirror exact through writes, and exports again when its cursor expired', async () => {
    const file = path.join(work, 'catalog.json');
    const head = ((await (await fetch(`${api}/changes`)).json()) as { cursor: string }).cursor;
    const foreign = `${head.startsWith('ffffffff') ? '00000000' : 'ffffffff'}-1`;
    await writeFile(file, JSON.stringify({ cursor: foreign, products: { 'stale-listing': {} } }));
    const child = spawn('python3', [SCRIPT, 'mirror', api, file], { env: { PATH: process.env.PATH, CATALOG_KEY: key, CATALOG_WAIT: '1' }, stdio: 'ignore' });
    children.push(child);
    const equal = async () => {
      await stack.settle();
      const live = await liveCatalog();
      await expect.poll(() => mirrored(file), { timeout: 20_000, interval: 100 }).toEqual(live);
    };
    await equal();
    await updateListing(stack.db.pool, FIXTURE_IDS['deploy-kite']!, { slug: 'deploy-kite-python' });
    await updateListing(stack.db.pool, FIXTURE_IDS['note-garden']!, { status: 'hidden' });
    await insertListing(stack.db.pool, { slug: 'python-newcomer' });
    await equal();
    child.kill('SIGTERM');
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  });
});
