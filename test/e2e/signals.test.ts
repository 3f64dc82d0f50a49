import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { freePort } from '../helpers/stack.ts';

/**
 * Signals and a lost terminal (docs/signals.md): `catalog serve`, `api` and `projector`, started
 * from bin/catalog.js as a user starts them, stop within 10 s on SIGTERM, SIGINT and SIGHUP in
 * whatever state they are, a second signal ends them at once, a closed standard output stops them
 * with a word on stderr, and a terminal that goes away leaves nothing of them running: neither
 * the node process nor its embedded PostgreSQL. Every process signalled here is one this file
 * started (or one those started: the embedded server of a data folder of its own).
 */
const CLI = path.resolve('bin/catalog.js');
const STOP_MS = 10_000;
const SIGNAL_NUMBER = { SIGTERM: 15, SIGINT: 2, SIGHUP: 1 } as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped by its parent) runs no more.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Whether the process catches SIGHUP (its SigCgt mask in /proc): its handlers are installed. */
function handlesSignals(pid: number): boolean {
  try {
    const mask = /SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & 1n) === 1n;
  } catch {
    return false;
  }
}

/** CPU time (user + system) the process has used so far, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function waitFor(what: string, check: () => boolean, ms = 90_000, output?: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${output ? `:\n${output().slice(-3000)}` : ''}`);
    await sleep(50);
  }
}

/** Waits until none of the processes runs any more; the time it took, or the ones left. */
async function allGone(pids: number[], ms = STOP_MS): Promise<{ ms: number; left: number[] }> {
  const start = Date.now();
  while (Date.now() - start < ms && pids.some(alive)) await sleep(50);
  return { ms: Date.now() - start, left: pids.filter(alive) };
}

/** The embedded PostgreSQL of a data folder: its postmaster and the postmaster's children. */
function postgresOf(dataDir: string): { postmaster: number; all: number[] } | undefined {
  const file = path.join(dataDir, 'pg', 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const postmaster = Number(readFileSync(file, 'utf8').split('\n')[0]);
  if (!Number.isInteger(postmaster) || postmaster <= 0 || !alive(postmaster)) return undefined;
  return { postmaster, all: [postmaster, ...childrenOf(postmaster)] };
}

function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', MEILI_URL: '', SMTP_URL: '', ...extra };
  if (!extra.DATABASE_URL) delete env.DATABASE_URL;
  delete env.REDIS_URL;
  return env;
}

interface Running {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

/** A `catalog` command as a child of this test, stdout and stderr captured (stdout a pipe). */
function run(args: string[], env: NodeJS.ProcessEnv): Running {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  return { child, output: () => out, exited };
}

/** Up when it answers (serve, api) or when its projector is leading or standing by (projector). */
async function started(command: string, r: Running): Promise<string | undefined> {
  let url: string | undefined;
  await waitFor(
    `catalog ${command} to start`,
    () => {
      if (r.child.exitCode !== null) throw new Error(`catalog ${command} exited while starting:\n${r.output()}`);
      if (command === 'projector') return /projector is leading|standing by/.test(r.output());
      url = /listening on (http:\/\/[^\s"]+)/.exec(r.output())?.[1];
      return url !== undefined;
    },
    90_000,
    r.output,
  );
  return url;
}

/** Signals the process and waits (at most `ms`) for it to exit: its status and how long it took. */
async function signalAndWait(r: Running, signal: NodeJS.Signals, ms = STOP_MS): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const at = Date.now();
  r.child.kill(signal);
  const result = await Promise.race([r.exited, sleep(ms + 5_000).then(() => undefined)]);
  if (!result) {
    r.child.kill('SIGKILL');
    throw new Error(`still running ${ms + 5_000} ms after ${signal}:\n${r.output().slice(-3000)}`);
  }
  return { code: result.code, signal: result.signal, ms: result.at - at };
}

/** A terminal of our own: util-linux `script` in a session of its own runs `command` on its pty. */
function underTerminal(command: string, env: NodeJS.ProcessEnv): { script: ChildProcess; output(): string } {
  const script = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...env, SHELL: '/bin/sh' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  script.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  script.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return { script, output: () => out };
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

const dirs: string[] = [];
/** Every pid this file saw started (commands, embedded servers): killed outright at the end if left. */
const ours = new Set<number>();

afterAll(async () => {
  for (const pid of ours) if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('catalog serve with its embedded PostgreSQL', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-signals-'));
    dirs.push(dataDir);
  });

  it('a terminal that goes away leaves nothing running: the service and its PostgreSQL stop within 10 s, without spinning', async () => {
    // The service's output is the terminal (readable logs), its stdin too.
    const term = underTerminal(`exec ${quote(process.execPath)} ${quote(CLI)} serve --no-demo --data-dir ${quote(dataDir)}`, baseEnv({}));
    if (term.script.pid) ours.add(term.script.pid);
    await waitFor('the service under the terminal to listen', () => term.output().includes('listening on'), 120_000, term.output);
    const node = Number(readFileSync(path.join(dataDir, 'pg-owner.pid'), 'utf8'));
    const pg = postgresOf(dataDir);
    expect(pg).toBeDefined();
    for (const pid of [node, ...pg!.all]) ours.add(pid);
    expect(alive(node)).toBe(true);

    process.kill(term.script.pid!, 'SIGKILL'); // the terminal window closes
    // Gone, not left spinning (a spinning process, deaf to signals, would still be there).
    const gone = await allGone([node, ...pg!.all]);
    expect(gone.left, term.output().slice(-2000)).toEqual([]);
    expect(gone.ms).toBeLessThan(STOP_MS);
  }, 180_000);

  it('piped into head under a terminal that then goes away: nothing of it is left running', async () => {
    // `npm start 2>&1 | head -n 1000`: stdout is a pipe to head; the terminal's hang-up reaches
    // the service, head and the embedded PostgreSQL alike (one process group).
    const term = underTerminal(`${quote(process.execPath)} ${quote(CLI)} serve --no-demo --data-dir ${quote(dataDir)} 2>&1 | head -n 1000`, baseEnv({ LOG_FORMAT: 'json' }));
    if (term.script.pid) ours.add(term.script.pid);
    await waitFor('the service to listen', () => term.output().includes('listening on'), 120_000, term.output);
    const node = Number(/"pid":(\d+)/.exec(term.output())![1]);
    const pg = postgresOf(dataDir)!;
    for (const pid of [node, ...pg.all]) ours.add(pid);
    process.kill(term.script.pid!, 'SIGKILL');
    const gone = await allGone([node, ...pg.all]);
    expect(gone.left, term.output().slice(-2000)).toEqual([]);
  }, 180_000);

  it('a signal while the embedded PostgreSQL starts stops the service and the server within 10 s', async () => {
    const before = postgresOf(dataDir);
    expect(before).toBeUndefined();
    const r = run(['serve', '--no-demo', '--data-dir', dataDir], baseEnv({ LOG_FORMAT: 'json' }));
    ours.add(r.child.pid!);
    let pg: ReturnType<typeof postgresOf>;
    // The moment the server's process exists (it records its pid before it accepts connections).
    await waitFor('the embedded server to be started', () => (pg = postgresOf(dataDir)) !== undefined || r.child.exitCode !== null, 90_000, r.output);
    expect(r.output()).not.toContain('listening on');
    for (const pid of pg!.all) ours.add(pid);
    const stop = await signalAndWait(r, 'SIGTERM');
    expect(stop.ms).toBeLessThan(STOP_MS);
    expect(stop.code).toBe(0);
    const gone = await allGone([pg!.postmaster, ...childrenOf(pg!.postmaster)]);
    expect(gone.left, r.output().slice(-2000)).toEqual([]);
    expect(r.output()).not.toMatch(/Error|at .*\.[jt]s:\d+/);
  }, 120_000);

  it('a signal while the supervisor starts a killed PostgreSQL again stops the service and every server within 10 s', async () => {
    const r = run(['serve', '--no-demo', '--data-dir', dataDir], baseEnv({ LOG_FORMAT: 'json' }));
    ours.add(r.child.pid!);
    await started('serve', r);
    const first = postgresOf(dataDir)!;
    for (const pid of first.all) ours.add(pid);
    process.kill(first.postmaster, 'SIGKILL'); // the server dies under the service
    await waitFor('the supervisor to start it again', () => /starting it again/.test(r.output()), 20_000, r.output);
    const stop = await signalAndWait(r, 'SIGINT');
    expect(stop.ms).toBeLessThan(STOP_MS);
    expect(stop.code, r.output().slice(-2000)).toBe(0);
    const gone = await allGone([first.postmaster, ...first.all]);
    expect(gone.left).toEqual([]);
    // Whatever the supervisor had started meanwhile is stopped too.
    await waitFor('no server left on the folder', () => postgresOf(dataDir) === undefined, STOP_MS, r.output);
  }, 120_000);
});

describe('serve, api and projector on DATABASE_URL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  const env = () => baseEnv({ DATABASE_URL: db.url, LOG_FORMAT: 'json', PROJECTOR_POLL_MS: '200' });
  const argsOf = (command: string) => (command === 'serve' ? ['serve', '--no-demo'] : [command]);

  /** A request that never finishes arriving: it holds a clean stop up until it is cut. */
  const halfSent = async (url: string) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(new URL(url).port) });
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /api/v1/categories HTTP/1.1\r\nHost: x\r\n'); // and nothing more
    return socket;
  };

  // Each command meets each signal once: one of them while it starts, the others once it runs.
  const plan = {
    serve: { starting: 'SIGTERM', running: ['SIGINT', 'SIGHUP'] },
    api: { starting: 'SIGINT', running: ['SIGHUP', 'SIGTERM'] },
    projector: { starting: 'SIGHUP', running: ['SIGTERM', 'SIGINT'] },
  } as const;

  for (const [command, { starting, running }] of Object.entries(plan)) {
    it(`catalog ${command} stops cleanly within 10 s on ${starting} while it starts, and on ${running.join(' and ')} once running`, async () => {
      const whileStarting = async () => {
        const r = run(argsOf(command), env());
        ours.add(r.child.pid!);
        // As soon as it handles signals: the first thing it does, before it opens the database.
        await waitFor('its signal handlers', () => handlesSignals(r.child.pid!) || r.child.exitCode !== null, 60_000, r.output);
        expect(r.output()).not.toContain('listening on');
        const stop = await signalAndWait(r, starting);
        expect(stop, `${command} ${starting} while starting:\n${r.output().slice(-2000)}`).toMatchObject({ code: 0, signal: null });
        expect(stop.ms).toBeLessThan(STOP_MS);
      };
      const onceRunning = async (signal: NodeJS.Signals) => {
        const r = run(argsOf(command), env());
        ours.add(r.child.pid!);
        await started(command, r);
        const stop = await signalAndWait(r, signal);
        expect(stop, `${command} ${signal}:\n${r.output().slice(-2000)}`).toMatchObject({ code: 0, signal: null });
        expect(stop.ms).toBeLessThan(STOP_MS);
        expect(r.output()).toContain(`"msg":"${signal}: stopping"`);
        expect(r.output()).toContain('"msg":"stopped"');
      };
      await whileStarting();
      for (const signal of running) await onceRunning(signal);
    }, 120_000);
  }

  it('catalog serve with a long poll and a half-sent request open stops cleanly within 10 s', async () => {
    const r = run(['serve', '--no-demo'], env());
    ours.add(r.child.pid!);
    const url = (await started('serve', r))!;
    const poll = fetch(`${url}/api/v1/changes?wait=25`).then(
      (res) => res.status,
      () => 0,
    );
    const socket = await halfSent(url);
    // A request sent after them has been answered: the long poll has been read and is waiting.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    await sleep(200);
    const stop = await signalAndWait(r, 'SIGTERM');
    expect(stop.ms).toBeLessThan(STOP_MS);
    expect(stop.code, r.output().slice(-2000)).toBe(0);
    // The long poll was answered (with what there was), not dropped.
    expect(await poll).toBe(200);
    socket.destroy();
  }, 120_000);

  it('catalog api: a second signal during a stop held up by a client ends it at once', async () => {
    const r = run(['api'], env());
    ours.add(r.child.pid!);
    const url = (await started('api', r))!;
    // The stop waits for a request that never finishes arriving (up to 5 s, then cuts it).
    const socket = await halfSent(url);
    await sleep(200);
    r.child.kill('SIGTERM');
    await waitFor('the stop to begin', () => r.output().includes('SIGTERM: stopping'), 5_000, r.output);
    const second = await signalAndWait(r, 'SIGINT', 2_000);
    socket.destroy();
    expect(second.ms).toBeLessThan(2_000);
    expect(second.code, r.output().slice(-2000)).toBe(128 + SIGNAL_NUMBER.SIGINT);
    expect(r.output()).toContain('second SIGINT: exiting at once');
  }, 90_000);

  it('a reader that stops reading its standard output does not hold catalog api up: it answers, and the lines follow later', async () => {
    const port = await freePort();
    // LOG_LEVEL=debug: every request writes an access line (about 400 bytes); the budget allows them all.
    const r = run(['api'], { ...env(), PORT: String(port), LOG_LEVEL: 'debug', RATE_LIMIT_OTHER_PER_MIN: '100000' });
    ours.add(r.child.pid!);
    await started('api', r);
    r.child.stdout!.pause(); // the pipe fills up (a paused terminal, a stalled log shipper)
    const before = r.output().length;
    const requests = 2_000;
    let ok = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < requests) {
          next++;
          const res = await fetch(`http://127.0.0.1:${port}/api/v1/categories`);
          await res.arrayBuffer();
          if (res.status === 200) ok++;
        }
      }),
    );
    expect(ok).toBe(requests);
    // Far more than a pipe holds was logged meanwhile; nothing of it was written yet, or little.
    expect(r.output().length - before).toBeLessThan(requests * 300);
    r.child.stdout!.resume();
    await waitFor('the queued lines', () => (r.output().match(/"url":"\/api\/v1\/categories"/g)?.length ?? 0) >= requests, 20_000, () => `${r.output().length} bytes`);
    const stop = await signalAndWait(r, 'SIGTERM');
    expect(stop.code).toBe(0);
  }, 120_000);

  it('a closed standard output (EPIPE) stops catalog api cleanly, said on stderr, without spinning', async () => {
    const port = await freePort();
    // LOG_LEVEL=debug: every request writes an access line.
    const r = run(['api'], { ...env(), PORT: String(port), LOG_LEVEL: 'debug' });
    ours.add(r.child.pid!);
    let stderr = '';
    r.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    await started('api', r);
    // The reader of its stdout goes away; the next line it logs meets a broken pipe.
    r.child.stdout!.destroy();
    await sleep(200);
    const cpuBefore = cpuMs(r.child.pid!);
    await fetch(`http://127.0.0.1:${port}/api/v1/categories`).catch(() => undefined);
    const askedAt = Date.now();
    const result = await Promise.race([r.exited, sleep(STOP_MS + 5_000).then(() => undefined)]);
    if (!result) {
      const cpu = alive(r.child.pid!) ? cpuMs(r.child.pid!) - cpuBefore : 0;
      r.child.kill('SIGKILL');
      throw new Error(`still running after its stdout closed (CPU used meanwhile: ${cpu} ms):\n${stderr}`);
    }
    expect(result.at - askedAt).toBeLessThan(STOP_MS);
    expect(result.code).toBe(1);
    expect(stderr).toContain('standard output closed (EPIPE): stopping');
  }, 90_000);
});
