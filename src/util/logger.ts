import pino, { type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { Config } from '../config/config.ts';
import { logOutput, type LogOutput } from './log-output.ts';

/**
 * The process logger: JSON lines (one object per line, for log collectors), or readable lines
 * when LOG_FORMAT=pretty, which is the default while the output is a terminal. Either way the
 * lines are formatted on this thread and written in order by src/util/log-output.ts: no worker
 * thread, and an output that is gone ends the writing instead of looping on it.
 */
/** Whether the log goes out as readable lines (else JSON, one object per line). */
export function logIsPretty(config: Config, fd: 1 | 2 = 1): boolean {
  const terminal = (fd === 2 ? process.stderr : process.stdout).isTTY === true;
  return config.logFormat === 'pretty' || (config.logFormat === 'auto' && terminal);
}

export interface LoggerOptions {
  /** Log to stderr (one-off commands, whose stdout is their result) instead of stdout. */
  stderr?: boolean;
  /** Told once when the output is gone (EPIPE, EIO…); nothing more is written to it. */
  onOutputClosed?: (err: NodeJS.ErrnoException) => void;
}

/** The output a logger made by createLogger writes to (the start banner goes there too). */
const outputs = new WeakMap<Logger, LogOutput>();

export function createLogger(config: Config, opts: LoggerOptions = {}): Logger {
  const fd = opts.stderr ? 2 : 1;
  const terminal = (fd === 2 ? process.stderr : process.stdout).isTTY === true;
  const format = logIsPretty(config, fd)
    ? prettyFactory({ colorize: terminal, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' })
    : undefined;
  const output = logOutput(fd, { ...(opts.onOutputClosed && { onClosed: opts.onOutputClosed }), ...(format && { format }) });
  const logger = pino({ level: config.logLevel }, output);
  outputs.set(logger, output);
  return logger;
}

/** Resolves once the logger's lines so far are written (at most `ms` later). */
export function logWritten(logger: Logger, ms = 1_000): Promise<void> {
  const output = outputs.get(logger);
  if (!output) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([output.drained(), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}

/** Writes text (such as the start banner) to the logger's output, in order with its lines. */
export function writeToLogOutput(logger: Logger, text: string): void {
  const output = outputs.get(logger);
  if (output) {
    output.writeRaw(text);
  } else {
    process.stdout.write(text);
  }
}
