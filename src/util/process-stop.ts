/**
 * How a long-running process (`catalog serve`, `api`, `projector`) stops, whatever state it is in.
 *
 * - SIGTERM, SIGINT and SIGHUP, from the first moment (while the embedded PostgreSQL starts too):
 *   the first one stops the process cleanly, running the registered cleanups (newest first) and
 *   exiting with status 0; if that takes longer than the grace period (8 s) it exits with
 *   status 1 regardless. A second signal exits at once (status 128 + the signal's number).
 * - A standard output that can no longer be written (the reader of a pipe went away: EPIPE; the
 *   terminal went away: EIO) stops it the same way, with status 1: a service must not run on
 *   with its log lost (see docs/signals.md).
 * - An uncaught exception or unhandled rejection is logged and stops it, with status 1; one
 *   while it is already stopping is logged, and the stop goes on.
 * At any exit, a server process this one started is told to stop by the 'exit' hooks (see
 * src/db/embedded.ts), so nothing of it is left behind.
 *
 * Nothing here writes to an output that may be gone without catching the error: a stop can
 * never turn into a loop of failing writes.
 */
import { writeSync } from 'node:fs';
import { constants } from 'node:os';

export type StopReason =
  | { kind: 'signal'; signal: NodeJS.Signals }
  | { kind: 'output-closed'; err: NodeJS.ErrnoException }
  | { kind: 'error'; err: unknown }
  | { kind: 'fatal'; err: Error }
  | { kind: 'parent-gone' };

export interface StopLog {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  fatal?(obj: object, msg?: string): void;
}

const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
/** How long a clean stop may take before the process exits regardless. */
const STOP_GRACE_MS = 8_000;

interface State {
  stopping: boolean;
  reason?: StopReason;
  cleanups: Array<() => Promise<void> | void>;
  holds: Set<Promise<unknown>>;
  log?: StopLog | undefined;
  /** Resolves once the log's lines so far are written (bounded by its owner). */
  logWritten?: (() => Promise<void>) | undefined;
  graceMs: number;
}

let state: State | undefined;

/** Writes one line to stderr, ignoring any failure (stderr may be gone as well). */
function sayOnStderr(line: string): void {
  try {
    writeSync(2, `${line}\n`);
  } catch {
    // nowhere left to say it
  }
}

function logInfo(obj: object, msg: string): void {
  try {
    state?.log?.info(obj, msg);
  } catch {
    // the log is best effort while stopping
  }
}

function logError(obj: object, msg: string, level: 'error' | 'fatal' = 'error'): void {
  try {
    if (state?.log) (level === 'fatal' && state.log.fatal ? state.log.fatal.bind(state.log) : state.log.error.bind(state.log))(obj, msg);
    else sayOnStderr(`catalog: ${msg}${'err' in obj ? `: ${String((obj as { err: unknown }).err)}` : ''}`);
  } catch {
    // the log is best effort while stopping
  }
}

function signalNumber(signal: NodeJS.Signals): number {
  return (constants.signals as Record<string, number>)[signal] ?? 15;
}

/**
 * Installs the handlers (idempotent). Call it first thing in a long-running command, before the
 * database starts. `graceMs` shortens the grace period (tests).
 */
export function handleStops(opts: { graceMs?: number } = {}): void {
  if (state) return;
  state = { stopping: false, cleanups: [], holds: new Set(), graceMs: opts.graceMs ?? STOP_GRACE_MS };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  process.on('uncaughtException', (err) => onError(err));
  process.on('unhandledRejection', (err) => onError(err));
  // Anything else writing to stdout (a library's console.log) meets a lost output here rather
  // than as an uncaught exception; stderr's failures are ignored (there is no one to tell).
  process.stdout.on('error', (err: NodeJS.ErrnoException) => requestStop({ kind: 'output-closed', err }));
  process.stderr.on('error', () => undefined);
}

function onSignal(signal: NodeJS.Signals): void {
  if (state?.stopping) {
    logError({ signal }, `second ${signal}: exiting at once`);
    process.exit(128 + signalNumber(signal));
  }
  requestStop({ kind: 'signal', signal });
}

function onError(err: unknown): void {
  if (state?.stopping) {
    logError({ err }, 'unexpected error while stopping (the stop goes on)');
    return;
  }
  requestStop({ kind: 'error', err });
}

/**
 * The log the stop reports to (the process logger, once made), and how to wait until its lines
 * are out before a clean stop exits.
 */
export function setStopLog(log: StopLog | undefined, logWritten?: () => Promise<void>): void {
  if (!state) return;
  state.log = log;
  state.logWritten = logWritten;
}

/** Whether a stop was asked for. */
export function isStopping(): boolean {
  return state?.stopping === true;
}

/**
 * Registers a cleanup, run (newest first) when the process stops cleanly. Returns a function that
 * unregisters it.
 */
export function onStop(cleanup: () => Promise<void> | void): () => void {
  if (!state) return () => undefined;
  const cleanups = state.cleanups;
  cleanups.push(cleanup);
  return () => {
    const i = cleanups.indexOf(cleanup);
    if (i >= 0) cleanups.splice(i, 1);
  };
}

/**
 * Work a stop waits for before it exits (within the grace period), such as initialising a data
 * folder, which must not be left half made. Returns `work` itself.
 */
export function holdStop<T>(work: Promise<T>): Promise<T> {
  if (!state) return work;
  const holds = state.holds;
  const held = work.then(
    () => undefined,
    () => undefined,
  );
  holds.add(held);
  void held.then(() => holds.delete(held));
  return work;
}

function exitCode(reason: StopReason): number {
  return reason.kind === 'signal' || reason.kind === 'parent-gone' ? 0 : 1;
}

function describe(reason: StopReason): { obj: object; msg: string } {
  switch (reason.kind) {
    case 'signal':
      return { obj: { signal: reason.signal }, msg: `${reason.signal}: stopping` };
    case 'output-closed':
      return { obj: { code: reason.err.code }, msg: `standard output closed (${reason.err.code ?? reason.err.message}): stopping, as the log can no longer be written` };
    case 'error':
      return { obj: { err: reason.err }, msg: 'unexpected error: stopping' };
    case 'fatal':
      return { obj: { err: reason.err }, msg: `stopping: ${reason.err.message}` };
    case 'parent-gone':
      return { obj: {}, msg: 'the process that started this one is gone (npm): stopping' };
  }
}

/**
 * Stops the process cleanly (the first call; later ones are ignored): waits for held work, runs
 * the cleanups newest first, and exits; exits with status 1 if that outlasts the grace period.
 */
export function requestStop(reason: StopReason): void {
  if (!state) {
    // Not a long-running command: nothing to run, only a status to end with.
    process.exit(exitCode(reason));
  }
  if (state.stopping) return;
  state.stopping = true;
  state.reason = reason;
  const { obj, msg } = describe(reason);
  if (reason.kind === 'output-closed') sayOnStderr(`catalog: ${msg}`);
  if (reason.kind === 'fatal' || reason.kind === 'error') logError(obj, msg, reason.kind === 'fatal' ? 'fatal' : 'error');
  else logInfo(obj, msg);
  const code = exitCode(reason);
  const graceMs = state.graceMs;
  const timer = setTimeout(() => {
    logError({ graceMs }, `not stopped within ${graceMs / 1000} s: exiting now`);
    process.exit(1);
  }, graceMs);
  void (async () => {
    const current = state!;
    await Promise.all([...current.holds]);
    for (const cleanup of [...current.cleanups].reverse()) {
      try {
        await cleanup();
      } catch (err) {
        logError({ err }, 'a part of the service did not stop cleanly');
      }
    }
    logInfo({}, 'stopped');
    await current.logWritten?.().catch(() => undefined);
    clearTimeout(timer);
    process.exit(code);
  })();
}
