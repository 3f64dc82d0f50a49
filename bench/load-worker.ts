/**
 * The load generator, run as a process of its own so it never shares an event loop with the
 * benchmark's bookkeeping: autocannon, driven programmatically, against one URL.
 *
 *   node bin/run-ts.js bench/load-worker.ts SPEC.json
 *
 * SPEC is a LoadSpec (bench/load.ts). A warm-up run comes first and is discarded. The result
 * (a LoadResult) is printed as one JSON line on stdout. Latencies are taken from every
 * response with sub-millisecond precision (autocannon's own histogram keeps whole
 * milliseconds).
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type { LoadRequest, LoadResult, LoadSpec } from './load.ts';
import { machineBusyTicks, processTicks, TICKS } from './proc-stat.ts';

const specFile = process.argv[2];
if (!specFile) {
  console.error('usage: load-worker.ts SPEC.json');
  process.exit(2);
}
const spec = JSON.parse(readFileSync(specFile, 'utf8')) as LoadSpec;

function toRequest(r: LoadRequest): autocannon.Request {
  return {
    method: r.method ?? 'GET',
    path: r.path,
    ...(r.headers && { headers: r.headers }),
    ...(r.body !== undefined && { body: r.body }),
  } as autocannon.Request;
}

/**
 * Every connection walks the request list from its own starting point, so concurrent
 * connections do not ask for the same variant at the same moment (identical searches in
 * flight at once would be computed once, flattering an uncached scenario).
 */
function setupClient(): (client: autocannon.Client) => void {
  let next = 0;
  const n = spec.requests.length;
  const step = Math.max(1, Math.floor(n / spec.connections));
  return (client) => {
    keepNoBodies(client);
    if (n <= 1) return;
    const start = (next++ * step) % n;
    const rotated = [...spec.requests.slice(start), ...spec.requests.slice(0, start)];
    client.setRequests(rotated.map(toRequest));
  };
}

/**
 * autocannon appends every response body to a string (`req.body += chunk`, for its expectBody
 * and verifyBody options, which this run does not use), decoding it as UTF-8. A body with a few
 * non-ASCII characters (an MCP search's text carries its ellipses) costs the generator about
 * three times the CPU of an ASCII body of the same size, 150 µs a request for a 39 KB answer:
 * enough to make the generator, not the service, the limit of a row on 2 cores. The answers are
 * checked before the load (the preflight); during it only status, size and time are kept.
 */
function keepNoBodies(client: autocannon.Client): void {
  const queue = (client as unknown as { pipelinedRequests?: { addBody?: unknown } }).pipelinedRequests;
  if (queue && typeof queue.addBody === 'function') queue.addBody = () => undefined;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

async function run(durationSeconds: number, record: boolean): Promise<LoadResult> {
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const statusCodes: Record<string, number> = {};
  let finish: (err: unknown, result: autocannon.Result) => void = () => undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = (err, result) => (err ? reject(err) : resolve(result));
  });
  const instance = autocannon(
    {
      url: spec.url,
      connections: spec.connections,
      duration: durationSeconds,
      requests: spec.requests.map(toRequest),
      setupClient: setupClient(),
      timeout: 10,
    },
    (err, result) => finish(err, result),
  );
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
    if (!record) return;
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = responseTime;
  });
  const started = performance.now();
  const cpu0 = { machine: machineBusyTicks(), server: processTicks(spec.serverPid), self: process.cpuUsage() };
  const result = await done;
  const seconds = (performance.now() - started) / 1000;
  const cpu1 = { machine: machineBusyTicks(), server: processTicks(spec.serverPid), self: process.cpuUsage(cpu0.self) };
  const loadGenCores = (cpu1.self.user + cpu1.self.system) / 1e6 / seconds;
  const serverCores = cpu0.server !== undefined && cpu1.server !== undefined ? (cpu1.server - cpu0.server) / TICKS / seconds : undefined;
  const machineCores = cpu0.machine !== undefined && cpu1.machine !== undefined ? (cpu1.machine - cpu0.machine) / TICKS / seconds : undefined;
  const sorted = latencies.subarray(0, count).sort();
  const responses = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  const ok = Object.entries(statusCodes)
    .filter(([code]) => code.startsWith('2'))
    .reduce((a, [, n]) => a + n, 0);
  return {
    seconds,
    responses,
    requestsPerSecond: responses / seconds,
    okPerSecond: ok / seconds,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: count ? sorted[count - 1]! : Number.NaN,
    non2xx: responses - ok,
    statusCodes,
    errors: result.errors,
    timeouts: result.timeouts,
    bytesPerResponse: responses ? result.throughput.total / responses : 0,
    cpu: {
      server: serverCores,
      loadGenerator: loadGenCores,
      machine: machineCores,
      other: machineCores !== undefined && serverCores !== undefined ? Math.max(0, machineCores - serverCores - loadGenCores) : undefined,
    },
  };
}

if (spec.warmupSeconds > 0) await run(spec.warmupSeconds, false);
const result = await run(spec.durationSeconds, true);
process.stdout.write(`${JSON.stringify(result)}\n`);
