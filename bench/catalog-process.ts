import { performance } from 'node:perf_hooks';
import { spawnNode, type Child } from './processes.ts';

/**
 * The real service as a child process: `node bin/catalog.js serve|api` on the benchmark's data
 * folder, on a free port, with rate limits lifted through configuration.
 */
export interface CatalogProcess {
  readonly child: Child;
  readonly url: string;
  readonly pid: number;
  /** Milliseconds from spawn to the first 200 on /readyz. */
  readonly readyMs: number;
  stop(): Promise<void>;
}

export interface CatalogStart {
  command: 'serve' | 'api';
  dataDir: string;
  demo?: boolean;
  demoCount?: number;
  env?: Record<string, string>;
  nodeOptions?: string[];
  /** How long to wait for the listening line (a first 100,000-listing import takes a while). */
  timeoutMs?: number;
}

/**
 * glibc's allocator settings the service is run with (Dockerfile, `npm start`): two arenas, and a
 * fixed trim threshold, so that memory freed after a burst (an export's chunks and compressor
 * state, a snapshot's read) goes back to the system instead of staying resident.
 */
const ALLOCATOR_ENV: Record<string, string> = { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072' };

/** Configuration every benchmarked process shares: no rate limit in the way, quiet logs. */
const BENCH_ENV: Record<string, string> = {
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_SEARCH_PER_MIN: '10000000',
  RATE_LIMIT_OTHER_PER_MIN: '10000000',
  RATE_LIMIT_PAGES_PER_MIN: '10000000',
  RATE_LIMIT_EXPORT_PER_MIN: '10000000',
  RATE_LIMIT_CHANGES_PER_MIN: '10000000',
  // glibc's allocator as the image and `npm start` set it (docs/performance.md, "glibc's allocator after exports");
  // BENCH_GLIBC_MALLOC=default runs the processes with glibc's defaults instead, to compare.
  ...(process.env.BENCH_GLIBC_MALLOC === 'default' ? {} : ALLOCATOR_ENV),
};

const LISTENING = /catalog (?:service|API) listening on (http:\/\/[^\s"]+)/;

async function waitReady(url: string, timeoutMs: number, stillRunning: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!stillRunning()) throw new Error(`the service exited while waiting for ${url}/readyz`);
    try {
      const res = await fetch(`${url}/readyz`);
      const text = await res.text();
      if (res.status === 200) return;
      last = `${res.status} ${text.slice(0, 300)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${url}/readyz did not answer 200 within ${timeoutMs / 1000} s (last: ${last})`);
}

export async function startCatalog(opts: CatalogStart): Promise<CatalogProcess> {
  const args = ['bin/catalog.js', opts.command, '--data-dir', opts.dataDir];
  if (opts.command === 'serve' && !opts.demo) args.push('--no-demo');
  const started = performance.now();
  const child = spawnNode(`catalog ${opts.command}`, {
    args,
    nodeOptions: opts.nodeOptions,
    env: {
      ...BENCH_ENV,
      ...(opts.demoCount !== undefined && { DEMO_COUNT: String(opts.demoCount) }),
      ...opts.env,
    },
  });
  try {
    const match = await child.waitForLine(LISTENING, opts.timeoutMs ?? 120_000);
    const url = match[1]!;
    await waitReady(url, 60_000, () => child.process.exitCode === null);
    const readyMs = performance.now() - started;
    return { child, url, pid: child.pid, readyMs, stop: () => child.stop() };
  } catch (err) {
    await child.stop();
    throw err;
  }
}
