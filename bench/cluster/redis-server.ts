import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { Redis } from 'ioredis';

/**
 * A redis-server of the run's own on a spare loopback port, without persistence, so that
 * stopping it (a fault the run injects) disturbs nobody else. Stopped and started again by its
 * own pid, on the same port.
 */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** Whether it is running now. */
  readonly running: boolean;
  /** Its process while it runs (to freeze it: freeze.ts). */
  readonly pid: number | undefined;
  /** Stops it (SIGKILL: as a crash would, and at once). */
  stop(): Promise<void>;
  /** Starts it again on the same port; resolves once it answers PING. */
  start(): Promise<void>;
}

/** Whether `redis-server` runs from the PATH (of `env`, by default this process's). */
export function hasRedisServer(env: NodeJS.ProcessEnv = process.env): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore', env }).status === 0;
}

export async function freeLoopbackPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function untilPing(url: string, timeoutMs: number): Promise<void> {
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null, connectTimeout: 1000 });
  probe.on('error', () => undefined);
  try {
    const deadline = Date.now() + timeoutMs;
    await probe.connect().catch(() => undefined);
    for (;;) {
      try {
        await probe.ping();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`redis-server on ${url} did not answer within ${timeoutMs / 1000} s`, { cause: err });
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } finally {
    probe.disconnect();
  }
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freeLoopbackPort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async () => {
    if (child) return;
    const started = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    child = started;
    started.once('exit', () => {
      if (child === started) child = undefined;
    });
    await untilPing(url, 10_000);
  };
  await start();
  // The run's own server never outlives the run.
  process.once('exit', () => child?.kill('SIGKILL'));
  return {
    url,
    port,
    get running() {
      return child !== undefined;
    },
    get pid() {
      return child?.pid;
    },
    async stop() {
      const running = child;
      if (!running) return;
      const exited = once(running, 'exit');
      running.kill('SIGKILL');
      await exited;
      child = undefined;
    },
    start,
  };
}
