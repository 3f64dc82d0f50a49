import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { alive } from '../../src/db/embedded.ts';

/**
 * `catalog serve` as a newcomer runs it: no DATABASE_URL, so an embedded PostgreSQL in the data
 * folder, a demo catalog imported into the empty database, the address printed, a clean stop.
 */
const CLI = path.resolve('bin/catalog.js');

function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  delete env.MEILI_URL;
  return env;
}

interface Started {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output: () => string;
}

function startServe(args: string[], env: NodeJS.ProcessEnv): Promise<Started> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in time:\n${out}`)), 90_000);
    const onData = () => {
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        resolve({ child, url: m[1]!, output: () => out });
      }
    };
    child.stdout.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${out}`));
    });
  });
}

function stop(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

function postgresPid(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'pg', 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  return Number(readFileSync(file, 'utf8').split('\n')[0]);
}

/** The embedded server's address, from the files it keeps beside its data. */
function embeddedUrl(dataDir: string): string {
  const password = readFileSync(path.join(dataDir, 'pg-password'), 'utf8').trim();
  const port = readFileSync(path.join(dataDir, 'pg-port'), 'utf8').trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

describe('catalog serve on the embedded defaults', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('starts on embedded PostgreSQL with the demo catalog, stops cleanly, and keeps its data', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-serve-'));
    dirs.push(dataDir);
    const env = baseEnv({ PORT: '0', DEMO_COUNT: '300', LOG_LEVEL: 'warn' });

    const first = await startServe(['--data-dir', dataDir], env);
    expect(first.output()).toContain('/api/v1');
    expect(first.output()).toContain('/api/mcp');
    const search = await fetch(`${first.url}/api/v1/search?limit=5`);
    expect(search.status).toBe(200);
    const page = (await search.json()) as { products: Array<{ id: string; slug: string }>; total: number };
    expect(page.total).toBeGreaterThan(100);
    expect(page.total).toBeLessThanOrEqual(300);
    const categories = (await (await fetch(`${first.url}/api/v1/categories`)).json()) as { categories: unknown[] };
    expect(categories.categories.length).toBeGreaterThanOrEqual(20);

    const pgPid = postgresPid(dataDir);
    expect(pgPid).toBeDefined();
    expect(await stop(first.child)).toBe(0);
    // the embedded server went down with the service
    for (let i = 0; i < 100 && alive(pgPid!); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(pgPid!)).toBe(false);

    // Restart on the same folder: the same catalog, not a second demo import.
    const second = await startServe(['--data-dir', dataDir], env);
    const again = (await (await fetch(`${second.url}/api/v1/search?limit=5`)).json()) as typeof page;
    expect(again.total).toBe(page.total);
    expect(again.products.map((p) => p.id)).toEqual(page.products.map((p) => p.id));
    expect(await stop(second.child)).toBe(0);
  }, 180_000);

  it('adopts the PostgreSQL server left behind by a killed service and stops it on the next clean stop', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-serve-'));
    dirs.push(dataDir);
    const env = baseEnv({ PORT: '0', LOG_LEVEL: 'warn' });
    const killed = await startServe(['--no-demo', '--data-dir', dataDir], env);
    const pgPid = postgresPid(dataDir)!;
    killed.child.removeAllListeners('exit');
    await new Promise((resolve) => {
      killed.child.on('exit', resolve);
      killed.child.kill('SIGKILL');
    });
    expect(alive(pgPid)).toBe(true);

    const next = await startServe(['--no-demo', '--data-dir', dataDir], env);
    expect((await fetch(`${next.url}/healthz`)).status).toBe(200);
    expect(postgresPid(dataDir)).toBe(pgPid);
    expect(await stop(next.child)).toBe(0);
    for (let i = 0; i < 100 && alive(pgPid); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(pgPid)).toBe(false);
  }, 120_000);

  it('imports into the embedded database without a trace on stderr and leaves no server running', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-import-'));
    dirs.push(dataDir);
    const env = baseEnv({ LOG_LEVEL: 'warn' });
    const run = (args: string[], input?: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, ...args], { env });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('exit', (code) => resolve({ code, stdout, stderr }));
        child.stdin.end(input ?? '');
      });
    const demo = await run(['demo-data', '--count', '15', '--seed', '3']);
    expect(demo.code).toBe(0);
    const imported = await run(['import', '-', '--data-dir', dataDir], demo.stdout);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/^imported 15 listings/m);
    expect(imported.stderr).not.toMatch(/Error|at .*\.js:\d+/);
    const pid = postgresPid(dataDir);
    for (let i = 0; pid && i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    expect(pid === undefined || !alive(pid)).toBe(true);

    const s = await startServe(['--no-demo', '--data-dir', dataDir], baseEnv({ PORT: '0', LOG_LEVEL: 'warn' }));
    const categories = (await (await fetch(`${s.url}/api/v1/categories`)).json()) as { categories: Array<{ count: number }> };
    expect(categories.categories.reduce((n, c) => n + c.count, 0)).toBeGreaterThan(0);
    expect(await stop(s.child)).toBe(0);
  }, 120_000);

  it('an interrupted import exits 130 and stops the embedded server it started', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-import-'));
    dirs.push(dataDir);
    const child = spawn(process.execPath, [CLI, 'import', '-', '--data-dir', dataDir], { env: baseEnv({}) });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // a catalog that keeps coming: the import is still reading when the signal arrives
    child.stdin.write('{"kind":"category","slug":"design","name":"Design","noun":"tools"}\n');
    for (let i = 0; i < 200 && !/applied migration|up to date/.test(stderr); i++) await new Promise((r) => setTimeout(r, 50));
    const pid = postgresPid(dataDir);
    expect(pid).toBeDefined();
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    for (let i = 0; i < 100 && alive(pid!); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(pid!)).toBe(false);
  }, 60_000);

  it('a standby projector on the same folder stops on SIGTERM even after the database went away', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-standby-'));
    dirs.push(dataDir);
    const env = baseEnv({ PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
    const service = await startServe(['--no-demo', '--data-dir', dataDir], env);
    // LOG_FORMAT=json: every line the service wrote so far is one JSON object, the banner included.
    const lines = service.output().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    const standby = spawn(process.execPath, [CLI, 'projector', '--data-dir', dataDir], { env });
    let out = '';
    standby.stdout.on('data', (d: Buffer) => (out += d.toString()));
    for (let i = 0; i < 200 && !/standing by/.test(out); i++) await new Promise((r) => setTimeout(r, 50));
    expect(out).toMatch(/standing by/);
    expect(await stop(service.child)).toBe(0);
    const exited = new Promise<number | null>((resolve) => standby.on('exit', resolve));
    standby.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), 25_000))]);
    if (code === 'still running') standby.kill('SIGKILL');
    expect(code).not.toBe('still running');
  }, 90_000);

  it('npm start stops with npm: a SIGTERM to npm also stops the service and its database', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-npm-'));
    dirs.push(dataDir);
    const npm = spawn('npm', ['start', '--silent'], {
      env: baseEnv({ PORT: '0', DATA_DIR: dataDir, DEMO_COUNT: '10', LOG_LEVEL: 'warn' }),
      cwd: path.resolve('.'),
    });
    let out = '';
    npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
    for (let i = 0; i < 600 && !/listening on (http:\/\/[^\s"]+)/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
    const url = /listening on (http:\/\/[^\s"]+)/.exec(out)?.[1];
    expect(url).toBeDefined();
    const pgPid = postgresPid(dataDir)!;
    npm.kill('SIGTERM');
    let down = false;
    for (let i = 0; i < 200 && !down; i++) {
      await new Promise((r) => setTimeout(r, 100));
      down = !alive(pgPid) && (await fetch(`${url}/healthz`).then(() => false, () => true));
    }
    expect(down).toBe(true);
  }, 90_000);

  it('starts its embedded PostgreSQL again when it is killed, serving reads meanwhile, and carries on', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-serve-'));
    dirs.push(dataDir);
    const s = await startServe(['--data-dir', dataDir], baseEnv({ PORT: '0', DEMO_COUNT: '40', LOG_LEVEL: 'info', LOG_FORMAT: 'json' }));
    const page = (await (await fetch(`${s.url}/api/v1/search?limit=1`)).json()) as { products: { slug: string }[] };
    const slug = page.products[0]!.slug;
    const killed = postgresPid(dataDir)!;
    process.kill(killed, 'SIGKILL');
    // Reads go on from memory at once.
    expect((await fetch(`${s.url}/api/v1/products/${slug}`)).status).toBe(200);
    await expect.poll(() => /the embedded PostgreSQL is running again/.test(s.output()), { timeout: 60_000, interval: 200 }).toBe(true);
    const started = postgresPid(dataDir)!;
    expect(started).not.toBe(killed);
    await expect.poll(async () => (await fetch(`${s.url}/readyz`)).status, { timeout: 30_000, interval: 200 }).toBe(200);
    // A change written to the database now reaches the API: the projector leads again.
    const db = new pg.Client({ connectionString: embeddedUrl(dataDir) });
    await db.connect();
    await db.query(`UPDATE catalog.listings SET punchline = 'Written after the restart' WHERE slug = $1`, [slug]);
    await db.end();
    await expect.poll(async () => (await (await fetch(`${s.url}/api/v1/products/${slug}`)).text()).includes('Written after the restart'), { timeout: 30_000, interval: 100 }).toBe(true);
    expect(await stop(s.child)).toBe(0);
    for (let i = 0; i < 100 && alive(started); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(started)).toBe(false);
  }, 180_000);

  it('stops with status 1, saying why, when its embedded PostgreSQL cannot be started again', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-serve-'));
    dirs.push(dataDir);
    const s = await startServe(['--no-demo', '--data-dir', dataDir], baseEnv({ PORT: '0', LOG_LEVEL: 'warn', LOG_FORMAT: 'pretty' }));
    // The server reads its configuration only when it starts: a broken file keeps it down from now on.
    await appendFile(path.join(dataDir, 'pg', 'postgresql.conf'), '\nthis line is not a setting\n');
    const exited = new Promise<number | null>((resolve) => {
      s.child.removeAllListeners('exit');
      s.child.on('exit', (code) => resolve(code));
    });
    process.kill(postgresPid(dataDir)!, 'SIGKILL');
    expect(await exited).toBe(1);
    expect(s.output()).toMatch(/FATAL: stopping: the embedded PostgreSQL in \S+ stopped and could not be started again after 5 attempts: .*postgresql\.conf/);
  }, 120_000);

  it('--no-demo starts on an empty catalog', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-serve-'));
    dirs.push(dataDir);
    const s = await startServe(['--no-demo', '--data-dir', dataDir], baseEnv({ PORT: '0', LOG_LEVEL: 'warn' }));
    const body = (await (await fetch(`${s.url}/api/v1/search`)).json()) as { total: number; products: unknown[] };
    expect(body).toEqual({ products: [], total: 0, page: 1, limit: 20 });
    expect(await stop(s.child)).toBe(0);
  }, 120_000);

  it('refuses a bad configuration value with one line naming the variable', async () => {
    const child = spawn(process.execPath, [CLI, 'serve'], { env: baseEnv({ PORT: 'eighty' }) });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(err.trim()).toBe('catalog: configuration error: PORT="eighty": must be a whole number from 0 to 65535');
  });

  it('prints its version', async () => {
    const child = spawn(process.execPath, [CLI, '--version']);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    expect(await new Promise<number | null>((resolve) => child.on('exit', resolve))).toBe(0);
    expect(out.trim()).toBe('1.0.0');
  });

  it('prints usage for an unknown command', async () => {
    const child = spawn(process.execPath, [CLI, 'frobnicate']);
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(2);
    expect(err).toContain("unknown command 'frobnicate'");
    expect(err).toContain('serve');
  });
});
