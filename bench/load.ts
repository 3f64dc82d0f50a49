import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawnNode } from './processes.ts';

/** One request of a scenario; a scenario with several walks through them in turn. */
export interface LoadRequest {
  method?: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadSpec {
  /** Origin only, e.g. http://127.0.0.1:41234 */
  url: string;
  requests: LoadRequest[];
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** The process under load, to report the CPU it used (Linux). */
  serverPid?: number;
}

export interface LoadResult {
  /** Length of the measured run. */
  seconds: number;
  responses: number;
  /** Every response per second, whatever its status. */
  requestsPerSecond: number;
  /** 2xx responses per second. */
  okPerSecond: number;
  /** Latency percentiles in milliseconds, from request sent to response complete. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  bytesPerResponse: number;
  /**
   * Cores busy during the measured run, on average: the server process, the load generator,
   * the whole machine, and what remains (other processes: the benchmark's own bookkeeping is
   * idle then, so this is work foreign to the measurement).
   */
  cpu: { server?: number; loadGenerator: number; machine?: number; other?: number };
}

/** Runs autocannon in a child process (bench/load-worker.ts) and returns its measured run. */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'catalog-bench-load-'));
  const specFile = path.join(dir, 'spec.json');
  try {
    await writeFile(specFile, JSON.stringify(spec));
    const child = spawnNode('load generator', { args: ['bin/run-ts.js', 'bench/load-worker.ts', specFile], captureStdout: true });
    const limitMs = (spec.durationSeconds + spec.warmupSeconds + 60) * 1000;
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([child.exited, new Promise<string>((r) => (timer = setTimeout(() => r('timeout'), limitMs)))]);
    clearTimeout(timer);
    await child.stop();
    const line = child
      .stdout()
      .split('\n')
      .reverse()
      .find((l) => l.startsWith('{'));
    if (code !== 0 || !line) throw new Error(`the load generator failed (${code})\n${child.tail()}`);
    return JSON.parse(line) as LoadResult;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
