import pino, { type Logger } from 'pino';
import type { Config } from '../config/config.ts';

/**
 * The process logger: JSON lines (one object per line, for log collectors), or readable lines
 * when LOG_FORMAT=pretty, which is the default while the output is a terminal.
 */
/** Whether the log goes out as readable lines (else JSON, one object per line). */
export function logIsPretty(config: Config, fd: 1 | 2 = 1): boolean {
  const terminal = (fd === 2 ? process.stderr : process.stdout).isTTY === true;
  return config.logFormat === 'pretty' || (config.logFormat === 'auto' && terminal);
}

export function createLogger(config: Config, opts: { stderr?: boolean } = {}): Logger {
  const fd = opts.stderr ? 2 : 1;
  const terminal = (fd === 2 ? process.stderr : process.stdout).isTTY === true;
  const pretty = logIsPretty(config, fd);
  if (pretty) {
    return pino({
      level: config.logLevel,
      transport: { target: 'pino-pretty', options: { destination: fd, colorize: terminal, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' } },
    });
  }
  return pino({ level: config.logLevel }, pino.destination(fd));
}
