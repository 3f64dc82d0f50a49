import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readlink, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RELOCATED_DATA } from '../../src/db/embedded-as-root.ts';

/**
 * `catalog serve`, `api` and `projector` that cannot start say why in one line on stderr,
 * naming the cause and the fix, and exit with a non-zero status, with no stack trace. The
 * contract (docs/operating.md): stderr carries those lines only, for the operator at a terminal
 * and for whatever collects the process's output; stdout carries the log (JSON lines when it is
 * not a terminal), where the error's stack is written at debug level.
 */
const CLI = path.resolve('bin/catalog.js');
const STACK_FRAME = /^\s+at /m;

const dirs: string[] = [];
const servers: net.Server[] = [];
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** The environment of the test run without any setting of the service's own. */
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'MEILI_URL', 'PORT', 'HOST', 'PUBLIC_URL', 'SITE_URL', 'LOG_LEVEL', 'LOG_FORMAT', 'DATA_DIR']) delete base[name];
  return { ...base, LOG_FORMAT: 'json', ...extra };
}

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `catalog ARGS` to its end (failing the test if it is still running after 30 s). */
function catalog(args: string[], extra: Record<string, string>): Promise<Outcome> {
  const child = spawn(process.execPath, [CLI, ...args], { env: env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`catalog ${args.join(' ')} still running after 30 s:\n${stdout}\n${stderr}`));
    }, 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The one line on stderr (failing unless there is exactly one), after the common checks. */
function oneLine(outcome: Outcome): string {
  expect(outcome.code, outcome.stderr).not.toBe(0);
  expect(outcome.code).not.toBeNull();
  const lines = outcome.stderr.split('\n').filter((l) => l !== '');
  expect(lines, outcome.stderr).toHaveLength(1);
  expect(outcome.stderr + outcome.stdout).not.toMatch(STACK_FRAME);
  return lines[0]!;
}

/** A port on 127.0.0.1 that nothing listens on (taken and given back). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A port on 127.0.0.1 that this test holds for its whole run. */
async function heldPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return (server.address() as net.AddressInfo).port;
}

describe('a port in use', () => {
  it.each(['serve', 'api'])('catalog %s names the port and says to stop its holder or change PORT', async (command) => {
    const port = await heldPort();
    // A database that refuses: the port is looked at first, so the start fails before any database.
    const outcome = await catalog([command], { HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: `postgres://postgres@127.0.0.1:${await closedPort()}/catalog` });
    expect(oneLine(outcome)).toBe(`catalog: port ${port} on 127.0.0.1 is in use by another process: stop it, or set PORT to a free port`);
    expect(outcome.code).toBe(1);
  });

  it('keeps the stack in the log, at debug level, and out of stderr', async () => {
    const port = await heldPort();
    const outcome = await catalog(['serve'], { HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'debug' });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe(`catalog: port ${port} on 127.0.0.1 is in use by another process: stop it, or set PORT to a free port\n`);
    // stdout is the log: every line a JSON object, one of them the failure with its stack.
    const entries = outcome.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { level: number; msg: string; err?: { code?: string; stack?: string } });
    const failure = entries.find((e) => e.msg === 'the start failed');
    expect(failure, outcome.stdout).toBeDefined();
    expect(failure!.level).toBe(20);
    expect(failure!.err?.stack).toMatch(STACK_FRAME);
    expect(failure!.err?.stack).toContain('EADDRINUSE');
  });
});

describe('a data folder the embedded PostgreSQL cannot use', () => {
  const asRoot = process.getuid?.() === 0;

  it.skipIf(!asRoot)('as root, in a folder closed to postgres: keeps the data under /var/lib/catalog-service, linked from DIR/pg', { timeout: 60_000 }, async () => {
    // mkdtemp makes the folder 0700, owned by root: the postgres user may not enter it.
    const parent = await mkdtemp(path.join(os.tmpdir(), 'catalog-startup-'));
    dirs.push(parent);
    expect((await stat(parent)).mode & 0o777).toBe(0o700);
    const dataDir = path.join(parent, 'data');
    const first = await catalog(['migrate', '--data-dir', dataDir], {});
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('applied migration');
    const target = await readlink(path.join(dataDir, 'pg'));
    dirs.push(target);
    expect(path.dirname(target)).toBe(RELOCATED_DATA);
    const folder = await stat(target);
    expect(folder.mode & 0o777).toBe(0o700);
    expect(folder.uid).not.toBe(0);
    // The next start finds the same data through the link.
    const second = await catalog(['migrate', '--data-dir', dataDir], {});
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('database is up to date');
    expect(await readlink(path.join(dataDir, 'pg'))).toBe(target);
  });

  it.skipIf(!asRoot)('as root: names the folder above existing data that postgres cannot enter, and the fix, which works', { timeout: 60_000 }, async () => {
    const parent = await mkdtemp(path.join(os.tmpdir(), 'catalog-startup-'));
    dirs.push(parent);
    const dataDir = path.join(parent, 'data');
    // Data made while postgres could pass through the parent; then the parent is closed to it.
    await chmod(parent, 0o701);
    const made = await catalog(['migrate', '--data-dir', dataDir], {});
    expect(made.code, made.stderr).toBe(0);
    await chmod(parent, 0o700);
    for (const command of ['serve', 'projector']) {
      const outcome = await catalog([command, '--data-dir', dataDir], { PORT: '0' });
      const line = oneLine(outcome);
      expect(outcome.code).toBe(1);
      expect(line).toBe(
        `catalog: the embedded PostgreSQL runs as the system user postgres when catalog runs as root, and postgres cannot enter ${parent}, above its data in ${path.join(dataDir, 'pg')}: let it in (chmod o+x ${parent}), move the data to a folder it can reach (--data-dir or DATA_DIR, e.g. /var/lib/catalog), or run catalog as another user`,
      );
    }
    // Doing what the line says is enough: the same data is started again.
    await chmod(parent, 0o701);
    const fixed = await catalog(['migrate', '--data-dir', dataDir], {});
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stdout + fixed.stderr).toContain('database is up to date');
  });

  it('names a data folder that cannot be made', async () => {
    const parent = await mkdtemp(path.join(os.tmpdir(), 'catalog-startup-'));
    dirs.push(parent);
    await writeFile(path.join(parent, 'a-file'), '');
    const dataDir = path.join(parent, 'a-file', 'data');
    const outcome = await catalog(['serve', '--data-dir', dataDir], { PORT: '0' });
    expect(oneLine(outcome)).toBe(
      `catalog: the data folder ${dataDir} cannot be made (ENOTDIR): choose another one (--data-dir or DATA_DIR), or make it and give it to the user catalog runs as`,
    );
  });
});

describe('a DATABASE_URL that refuses', () => {
  it.each(['serve', 'api', 'projector'])('catalog %s says so in one line, with the status to retry on', async (command) => {
    const port = await closedPort();
    const outcome = await catalog([command], { PORT: '0', DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/catalog` });
    expect(oneLine(outcome)).toBe(`catalog: the database cannot be reached (connect ECONNREFUSED 127.0.0.1:${port}); retry once it is back`);
    expect(outcome.code).toBe(75);
  });
});

describe('missing or invalid settings', () => {
  it.each(['serve', 'api', 'projector'])('catalog %s prints one line per bad setting: the variable, the value given, what is accepted', async (command) => {
    const outcome = await catalog([command], {
      PORT: 'eighty',
      LOG_LEVEL: 'loud',
      PUBLIC_URL: 'catalog.example',
      // A password in a bad URL is not repeated.
      DATABASE_URL: 'mysql://catalog:s3cret@127.0.0.1/catalog',
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr + outcome.stdout).not.toMatch(STACK_FRAME);
    expect(outcome.stderr.split('\n').filter((l) => l !== '').sort()).toEqual([
      'catalog: configuration error: DATABASE_URL="mysql://***@127.0.0.1/catalog": must be a postgres:// or postgresql:// URL',
      'catalog: configuration error: LOG_LEVEL="loud": must be one of fatal, error, warn, info, debug, trace, silent',
      'catalog: configuration error: PORT="eighty": must be a whole number from 0 to 65535',
      'catalog: configuration error: PUBLIC_URL="catalog.example": must be an http(s) URL',
    ]);
    expect(outcome.stderr).not.toContain('s3cret');
  });

  it('names a setting that is wrong only beside another, with the value in force', async () => {
    const outcome = await catalog(['api'], { REQUEST_TIMEOUT_SECONDS: '5' });
    expect(oneLine(outcome)).toBe('catalog: configuration error: HEADERS_TIMEOUT_SECONDS="10": must be at most REQUEST_TIMEOUT_SECONDS (5)');
  });

  it('refuses an option given without its value, with the usage', async () => {
    const outcome = await catalog(['serve', '--data-dir'], {});
    expect(outcome.code).toBe(2);
    expect(outcome.stderr.split('\n')[0]).toBe("Option '--data-dir <value>' argument missing");
    expect(outcome.stderr).toContain('usage: catalog serve');
    expect(outcome.stderr).not.toMatch(STACK_FRAME);
  });
});
