import { writeSync } from 'node:fs';

/**
 * Where the log's lines go: a file descriptor (1 or 2), written synchronously, a line at a time,
 * so that every line is out before the process exits and a write can never be left looping.
 *
 * (pino's own destination, sonic-boom, retries a failed synchronous flush for ever, once every
 * 100 ms, whatever the error: a `logger.fatal`, or the flush at exit, on an output that is gone —
 * a pipe whose reader left (EPIPE), a terminal that was closed (EIO) — then never returns, and
 * the process no longer answers signals.)
 *
 * An output that is gone (EPIPE, EIO, EBADF, ENXIO…) is said once through `onClosed` and written
 * no more. A full non-blocking pipe (EAGAIN) keeps the lines, up to 1 MiB, and tries again a
 * little later; past that, lines are dropped. Other errors (say a full disk behind a redirection
 * to a file) drop the line and are said once on stderr.
 */
export interface LogOutput {
  /** A log line from pino (formatted first when a format is given). */
  write(line: string): boolean;
  /** Text written as it is (the start banner), in order with the log's lines. */
  writeRaw(text: string): void;
  /** Whether the output is gone (nothing more is written). */
  readonly closed: boolean;
}

const GONE = new Set(['EPIPE', 'EIO', 'EBADF', 'ENXIO', 'ENOTCONN', 'ECONNRESET', 'EDESTADDRREQ', 'ENODEV']);
const RETRY = new Set(['EAGAIN', 'EWOULDBLOCK', 'EINTR', 'EBUSY']);
const MAX_PENDING = 1 << 20;
const RETRY_MS = 20;

export function logOutput(
  fd: number,
  opts: { onClosed?: (err: NodeJS.ErrnoException) => void; format?: (line: string) => string } = {},
): LogOutput {
  let closed = false;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let retry: NodeJS.Timeout | undefined;
  let complained = false;

  const close = (err: NodeJS.ErrnoException) => {
    closed = true;
    pending = [];
    pendingBytes = 0;
    if (retry) clearTimeout(retry);
    opts.onClosed?.(err);
  };

  const flush = () => {
    retry = undefined;
    while (pending.length > 0 && !closed) {
      const buf = pending[0]!;
      let n: number;
      try {
        n = writeSync(fd, buf);
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        if (err.code && RETRY.has(err.code)) {
          retry ??= setTimeout(flush, RETRY_MS);
          retry.unref();
          return;
        }
        if (!err.code || GONE.has(err.code)) {
          close(err);
          return;
        }
        // Anything else: this line is lost; say so once, keep going with the next.
        pending.shift();
        pendingBytes -= buf.length;
        if (!complained) {
          complained = true;
          try {
            writeSync(2, `catalog: log lines lost (${err.code}: ${err.message})\n`);
          } catch {
            // nowhere to say it
          }
        }
        continue;
      }
      pendingBytes -= n;
      if (n >= buf.length) pending.shift();
      else pending[0] = buf.subarray(n);
    }
  };

  const enqueue = (text: string) => {
    if (closed || !text) return;
    const buf = Buffer.from(text);
    if (pendingBytes + buf.length > MAX_PENDING) return;
    pending.push(buf);
    pendingBytes += buf.length;
    if (!retry) flush();
  };

  return {
    get closed() {
      return closed;
    },
    write(line: string): boolean {
      if (!closed) enqueue(opts.format ? opts.format(line) : line);
      return true;
    },
    writeRaw: enqueue,
  };
}
