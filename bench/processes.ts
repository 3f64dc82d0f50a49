import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Child processes of a benchmark run. Each child leads a process group of its own (so the
 * embedded PostgreSQL a `catalog serve` starts belongs to it too), and every group still alive
 * is stopped when the run ends: normally, on an error, or on Ctrl-C.
 */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly pid: number;
  /** The last lines the child wrote (stdout and stderr), for error messages. */
  tail(): string;
  /** Resolves with the first stdout/stderr line matching re; rejects on exit or timeout. */
  waitForLine(re: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  readonly exited: Promise<number | string>;
  /** SIGTERM to the leader, then SIGKILL to the whole group if it is still there after graceMs. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<Child>();
const TAIL_LINES = 40;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

export interface SpawnOptions {
  args: string[];
  env?: Record<string, string>;
  /** Options for node itself, before the script (e.g. --cpu-prof). */
  nodeOptions?: string[];
  /** Collect stdout in full (load results); otherwise only a tail is kept. */
  captureStdout?: boolean;
}

/** Spawns `node [nodeOptions] args...` in the repository, in a process group of its own. */
export function spawnNode(name: string, opts: SpawnOptions): Child & { stdout(): string } {
  const child = spawn(process.execPath, [...(opts.nodeOptions ?? []), ...opts.args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...opts.env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`${name}: could not spawn ${opts.args.join(' ')}`);
  const pid = child.pid;
  const lines: string[] = [];
  const waiters = new Set<{ re: RegExp; resolve: (m: RegExpMatchArray) => void }>();
  let stdoutAll = '';
  const onText = (partial: { rest: string }, chunk: Buffer, isStdout: boolean) => {
    const text = chunk.toString('utf8');
    if (isStdout && opts.captureStdout) stdoutAll += text;
    const parts = (partial.rest + text).split('\n');
    partial.rest = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      if (lines.length > TAIL_LINES) lines.shift();
      for (const w of waiters) {
        const m = line.match(w.re);
        if (m) {
          waiters.delete(w);
          w.resolve(m);
        }
      }
    }
  };
  const outRest = { rest: '' };
  const errRest = { rest: '' };
  child.stdout!.on('data', (c: Buffer) => onText(outRest, c, true));
  child.stderr!.on('data', (c: Buffer) => onText(errRest, c, false));

  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });

  let stopping: Promise<void> | undefined;
  const handle: Child & { stdout(): string } = {
    name,
    process: child,
    pid,
    tail: () => [...lines, outRest.rest, errRest.rest].filter(Boolean).join('\n'),
    stdout: () => stdoutAll,
    exited,
    waitForLine(re, timeoutMs) {
      return new Promise((resolve, reject) => {
        const waiter = { re, resolve: (m: RegExpMatchArray) => done(() => resolve(m)) };
        const timer = setTimeout(() => done(() => reject(new Error(`${name}: no line matching ${re} within ${timeoutMs / 1000} s\n${handle.tail()}`))), timeoutMs);
        let finished = false;
        const done = (fn: () => void) => {
          if (finished) return;
          finished = true;
          clearTimeout(timer);
          waiters.delete(waiter);
          fn();
        };
        waiters.add(waiter);
        void exited.then((code) => done(() => reject(new Error(`${name} exited (${code}) before printing a line matching ${re}\n${handle.tail()}`))));
      });
    },
    stop(graceMs = 30_000) {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          try {
            process.kill(pid, 'SIGTERM');
          } catch {
            // already gone
          }
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
          clearTimeout(timer);
        }
        // Whatever is left of the group (an orphaned PostgreSQL after a crash) goes too.
        killGroup(pid, 'SIGKILL');
        live.delete(handle);
      })();
      return stopping;
    },
  };
  live.add(handle);
  void exited.then(() => {
    if (!stopping) live.delete(handle);
  });
  return handle;
}

/** Stops every child still running, most recent first (an `api` before the `serve` it attaches to). */
export async function stopAll(): Promise<void> {
  for (const child of [...live].reverse()) await child.stop();
}

let handlersInstalled = false;

/** Ctrl-C or SIGTERM: stop every child, then exit. */
export function stopChildrenOnSignals(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping the benchmark's processes…\n`);
      // A second Ctrl-C while stopping kills the groups at once.
      process.once(signal, () => {
        for (const c of live) killGroup(c.pid, 'SIGKILL');
        process.exit(130);
      });
      void stopAll().finally(() => process.exit(130));
    });
  }
  // Last resort when the run dies without reaching its own cleanup.
  process.once('exit', () => {
    for (const c of live) killGroup(c.pid, 'SIGKILL');
  });
}
