import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort } from './stack.ts';

/**
 * `catalog api` as a child process of this test (bin/catalog.js: the compiled build when it is
 * current, else the sources), so what it holds (memory, file descriptors) is its own. Optionally
 * under a file-descriptor limit of its own (`ulimit -n`, soft and hard, which Node cannot raise).
 */
export interface ApiProcess {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Its resident set size now, in bytes (/proc/PID/status VmRSS). */
  rss(): number;
  /** Its open file descriptors now (/proc/PID/fd). */
  fds(): number;
  /** SIGTERM, then SIGKILL after 15 s; resolves once it has exited. */
  stop(): Promise<void>;
}

const CLI = path.resolve('bin/catalog.js');

export async function startApiProcess(env: Record<string, string>, opts: { fileLimit?: number } = {}): Promise<ApiProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const fullEnv = { ...process.env, HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: url, SITE_URL: url, LOG_FORMAT: 'json', MEILI_URL: '', SMTP_URL: '', ...env };
  // exec: the shell becomes the service, so the pid is the service's own.
  const child: ChildProcess =
    opts.fileLimit === undefined
      ? spawn(process.execPath, [CLI, 'api'], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('/bin/sh', ['-c', `ulimit -n ${opts.fileLimit} && exec "$0" "$1" api`, process.execPath, CLI], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let exited = false;
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const deadline = Date.now() + 90_000;
  for (;;) {
    const status = await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (exited) throw new Error(`catalog api exited while starting:\n${output.slice(-3000)}`);
    if (Date.now() > deadline) {
      process.kill(child.pid!, 'SIGKILL');
      throw new Error(`catalog api did not become ready:\n${output.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const pid = child.pid!;
  return {
    url,
    port,
    pid,
    output: () => output,
    rss() {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
      if (!kb) throw new Error(`no VmRSS for process ${pid}`);
      return Number(kb) * 1024;
    },
    fds: () => readdirSync(`/proc/${pid}/fd`).length,
    async stop() {
      if (exited) return;
      process.kill(pid, 'SIGTERM');
      const killer = setTimeout(() => exited || process.kill(pid, 'SIGKILL'), 15_000);
      await exit;
      clearTimeout(killer);
    },
  };
}

/** A raw connection to the process, from a loopback address of the caller's choice (127.0.0.0/8). */
export function connect(port: number, localAddress = '127.0.0.1'): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress });
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Everything the server sends on the socket until it closes it (or the socket fails). */
export function received(socket: net.Socket): Promise<{ text: string; closedAt: number }> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.once('close', () => resolve({ text, closedAt: Date.now() }));
    socket.on('error', () => undefined);
  });
}

/** The status, headers and body of the first HTTP/1.1 answer in raw text. */
export function parseAnswer(text: string): { status: number; headers: Record<string, string>; body: string } {
  const end = text.indexOf('\r\n\r\n');
  const head = end === -1 ? text : text.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = end === -1 ? '' : text.slice(end + 4);
  const length = headers['content-length'];
  if (length !== undefined) body = body.slice(0, Number(length));
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, body };
}
