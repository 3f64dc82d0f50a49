import { write, writeSync } from 'node:fs';

/**
 * Where the log's lines go: a file descriptor (1 or 2). Lines are queued and written in order by
 * one write at a time on libuv's threads, so a reader that stalls (a paused terminal, a slow log
 * shipper) never holds the event loop up; what is still queued when the process exits is written
 * then, once, without retrying.
 *
 * (pino's own destination, sonic-boom, retries a failed synchronous flush for ever, once every
 * 100 ms, whatever the error: a `logger.fatal`, or the flush at exit, on an output that is gone —
 * a pipe whose reader left (EPIPE), a terminal that was closed (EIO) — then never returns, and
 * the process no longer answers signals.)
 *
 * An output that is gone (EPIPE, EIO, EBADF, ENXIO…) is said once through `onClosed` and written
 * no more. A full non-blocking pipe (EAGAIN) is tried again a little later. At most 1 MiB waits;
 * past that, lines are dropped. Other errors (say a full disk behind a redirection to a file)
 * drop the lines of that write and are said once on stderr.
 */
export interface LogOutput {
  /** A log line from pino (formatted first when a format is given). */
  write(line: string): boolean;
  /** Text written as it is (the start banner), in order with the log's lines. */
  writeRaw(text: string): void;
  /** Whether the output is gone (nothing more is written). */
  readonly closed: boolean;
  /** Resolves once every line so far is written (or the output is gone). */
  drained(): Promise<void>;
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
  /** Bytes queued or being written. */
  let pendingBytes = 0;
  let writing = false;
  let retry: NodeJS.Timeout | undefined;
  let complained = false;
  let waiters: Array<() => void> = [];
  const idle = () => closed || (!writing && pending.length === 0);
  const wake = () => {
    if (!idle()) return;
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  };

  const close = (err: NodeJS.ErrnoException) => {
    if (closed) return;
    closed = true;
    pending = [];
    pendingBytes = 0;
    if (retry) clearTimeout(retry);
    process.off('exit', atExit);
    opts.onClosed?.(err);
    wake();
  };

  const complain = (err: NodeJS.ErrnoException) => {
    if (complained) return;
    complained = true;
    try {
      writeSync(2, `catalog: log lines lost (${err.code}: ${err.message})\n`);
    } catch {
      // nowhere to say it
    }
  };

  const pump = () => {
    if (writing || closed || retry || pending.length === 0) return wake();
    const buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
    pending = [];
    writing = true;
    write(fd, buf, 0, buf.length, null, (e, n) => {
      writing = false;
      const err = e as NodeJS.ErrnoException | null;
      if (err) {
        if (err.code && RETRY.has(err.code)) {
          pending.unshift(buf);
          retry = setTimeout(() => {
            retry = undefined;
            pump();
          }, RETRY_MS);
          retry.unref();
          return;
        }
        if (!err.code || GONE.has(err.code)) return close(err);
        pendingBytes -= buf.length;
        complain(err);
      } else {
        pendingBytes -= n;
        if (n < buf.length) pending.unshift(buf.subarray(n));
      }
      pump();
    });
  };

  /** At exit: what waits is written once (nothing in flight), never retried. */
  function atExit(): void {
    if (closed || writing || pending.length === 0) return;
    try {
      writeSync(fd, Buffer.concat(pending));
    } catch {
      // the output is gone or full: these lines are lost
    }
    pending = [];
  }
  process.on('exit', atExit);

  const enqueue = (text: string) => {
    if (closed || !text) return;
    const buf = Buffer.from(text);
    if (pendingBytes + buf.length > MAX_PENDING) return;
    pending.push(buf);
    pendingBytes += buf.length;
    pump();
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
    drained: () => (idle() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
  };
}
