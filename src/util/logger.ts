import pino, { type Logger } from 'pino';
import type { Config } from '../config/config.ts';

/**
 * The process logger: JSON lines (one object per line, for log collectors), or readable lines
 * when LOG_FORMAT=pretty, which is the default while the output is a terminal.
 */
export function createLogger(config: Config, opts: { stderr?: boolean } = {}): Logger {
  const fd = opts.stderr ? 2 : 1;
  const terminal = (fd === 2 ? process.stderr : process.stdout).isTTY === true;
  const pretty = config.logFormat === 'pretty' || (config.logFormat === 'auto' && terminal);
  if (pretty) {
    return pino({
      level: config.logLevel,
      transport: { target: 'pino-pretty', options: { destination: fd, colorize: terminal, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' } },
    });
  }
  return pino({ level: config.logLevel }, pino.destination(fd));
}
