import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { distribution, punchlineWriter, type Distribution } from './freshness.ts';
import { footprintOf, type Footprint } from './footprint.ts';
import { machineBusyTicks, processTicks, TICKS } from './proc-stat.ts';

/**
 * The bulk export and the change feed, measured against the running service:
 *
 * - Export: GET /api/v1/export read whole, one request at a time, by a plain HTTP client in the
 *   benchmark process that counts the bytes and drops them: time to first and last byte, the
 *   bytes on the wire, and the CPU the serving process spent on it (/proc). Uncompressed first
 *   (the first request at a version also orders the catalog), then br and gzip.
 * - Feed: a consumer long-polls GET /api/v1/changes (wait=30) and asks again as soon as an
 *   answer arrives, while listing updates are committed at a steady rate through the write model
 *   (a plain SQL UPDATE putting a unique word into one listing's punchline, as the freshness
 *   measurement does); for each update, the time from its commit being acknowledged to the
 *   consumer holding the answer that carries it.
 */
export interface ExportRun {
  coding: 'identity' | 'br' | 'gzip';
  status: number;
  /** Bytes received (compressed when a coding was asked for). */
  bytes: number;
  /** Products in the answer (counted on uncompressed runs only). */
  lines: number | undefined;
  firstByteMs: number;
  lastByteMs: number;
  /** CPU time of the serving process during the request. */
  serverCpuMs: number;
  /** Cores busy meanwhile with anything but the server and this client: work foreign to the measurement. */
  otherCores: number;
}

/** Watches the machine's CPU over a span: cores used by others than the server and this process. */
function otherCoresMeter(serverPid: number): () => number {
  const machine0 = machineBusyTicks();
  const server0 = processTicks(serverPid);
  const self0 = process.cpuUsage();
  const started = performance.now();
  return () => {
    const seconds = (performance.now() - started) / 1000;
    const machine1 = machineBusyTicks();
    const server1 = processTicks(serverPid);
    const self = process.cpuUsage(self0);
    if (machine0 === undefined || machine1 === undefined || server0 === undefined || server1 === undefined || seconds <= 0) return Number.NaN;
    const others = (machine1 - machine0 - (server1 - server0)) / TICKS - (self.user + self.system) / 1e6;
    return Math.max(0, others / seconds);
  };
}

export interface ExportResult {
  runs: ExportRun[];
  /** serve's footprint before the exports, right after them, and after SETTLE_MS with nothing to do. */
  footprint: { before: Footprint; after: Footprint; settled: Footprint };
}

function exportOnce(baseUrl: string, coding: ExportRun['coding'], serverPid: number): Promise<ExportRun> {
  return new Promise((resolve, reject) => {
    const cpu0 = processTicks(serverPid);
    const others = otherCoresMeter(serverPid);
    const started = performance.now();
    const headers: Record<string, string> = coding === 'identity' ? {} : { 'accept-encoding': coding };
    const req = http.get(`${baseUrl}/api/v1/export`, { headers, agent: false }, (res) => {
      const firstByteMs = performance.now() - started;
      let bytes = 0;
      let lines = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (coding === 'identity') for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => {
        const lastByteMs = performance.now() - started;
        const cpu1 = processTicks(serverPid);
        resolve({
          coding,
          status: res.statusCode ?? 0,
          bytes,
          lines: coding === 'identity' ? lines : undefined,
          firstByteMs,
          lastByteMs,
          serverCpuMs: cpu0 !== undefined && cpu1 !== undefined ? ((cpu1 - cpu0) * 1000) / TICKS : Number.NaN,
          otherCores: others(),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

const SETTLE_MS = 5000;

export async function measureExport(opts: { baseUrl: string; serverPid: number; runs: number; compressedRuns: number }): Promise<ExportResult> {
  const before = await footprintOf(opts.serverPid);
  const runs: ExportRun[] = [];
  const plan: ExportRun['coding'][] = [
    ...Array<ExportRun['coding']>(opts.runs).fill('identity'),
    ...Array<ExportRun['coding']>(opts.compressedRuns).fill('br'),
    ...Array<ExportRun['coding']>(opts.compressedRuns).fill('gzip'),
  ];
  for (const coding of plan) {
    const run = await exportOnce(opts.baseUrl, coding, opts.serverPid);
    if (run.status !== 200) throw new Error(`GET /api/v1/export answered ${run.status}`);
    runs.push(run);
  }
  const after = await footprintOf(opts.serverPid);
  // What stays resident once the exports' garbage is collected and the allocator has had its say.
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  return { runs, footprint: { before, after, settled: await footprintOf(opts.serverPid) } };
}

export interface FeedOptions {
  baseUrl: string;
  serverPid: number;
  dataDir: string;
  slugs: readonly string[];
  updatesPerSecond: number;
  seconds: number;
  /** An update not delivered after this long counts as missed. */
  giveUpMs: number;
}

export interface FeedResult {
  updates: number;
  updatesPerSecond: number;
  /** Answers the consumer received. */
  answers: number;
  delivery: Distribution;
  /** Cores the serving process used during the phase (projector, mirror, the feed's answers). */
  serverCores: number;
  /** Cores busy during the phase with anything but the server and the benchmark (which writes and consumes). */
  otherCores: number;
}

interface ChangePage {
  changes: Array<{ op: string; slug: string; product: { punchline?: string } | null }>;
  cursor: string;
}

export async function measureFeed(opts: FeedOptions): Promise<FeedResult> {
  const api = `${opts.baseUrl}/api/v1`;
  const total = Math.round(opts.updatesPerSecond * opts.seconds);
  const slugs = opts.slugs.slice(0, total);
  const writer = await punchlineWriter(opts.dataDir, slugs, 'catalog bench feed');

  /** `slug word` → commit time, and delivery time once the consumer has it. */
  const committed = new Map<string, number>();
  const delivered = new Map<string, number>();
  let answers = 0;
  let following = true;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const getJson = (url: string) =>
    new Promise<ChangePage>((resolve, reject) => {
      http
        .get(url, { agent }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text) as ChangePage) : reject(new Error(`GET ${url} answered ${res.statusCode}: ${text}`))));
          res.on('error', reject);
        })
        .on('error', reject);
    });
  let cursor = (await getJson(`${api}/changes`)).cursor;
  const consumer = (async () => {
    while (following) {
      const page = await getJson(`${api}/changes?since=${cursor}&limit=1000&wait=30`);
      const at = performance.now();
      answers++;
      for (const c of page.changes) {
        const word = c.product?.punchline?.split(' ').pop();
        if (c.op === 'upsert' && word) delivered.set(`${c.slug} ${word}`, at);
      }
      cursor = page.cursor;
    }
  })();

  const others = otherCoresMeter(opts.serverPid);
  const server0 = processTicks(opts.serverPid);
  const phaseStart = performance.now();
  try {
    const start = performance.now();
    for (let i = 0; i < total; i++) {
      const wait = start + (i * 1000) / opts.updatesPerSecond - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const slug = slugs[i % slugs.length]!;
      const { word } = await writer.update(slug);
      committed.set(`${slug} ${word}`, performance.now());
    }
    const elapsed = (performance.now() - start) / 1000;
    const deadline = performance.now() + opts.giveUpMs;
    while (delivered.size < committed.size && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const latencies: number[] = [];
    let missed = 0;
    for (const [key, at] of committed) {
      const got = delivered.get(key);
      if (got === undefined) missed++;
      else latencies.push(got - at);
    }
    return {
      updates: total,
      updatesPerSecond: total > 1 ? (total - 1) / elapsed : total,
      answers,
      delivery: distribution(latencies, missed),
      serverCores: ((processTicks(opts.serverPid) ?? Number.NaN) - (server0 ?? Number.NaN)) / TICKS / ((performance.now() - phaseStart) / 1000),
      // The embedded PostgreSQL (writes, the projector's and the feed's queries) counts as other.
      otherCores: others(),
    };
  } finally {
    following = false;
    // The consumer's last long poll ends with the next change: putting the punchlines back is one.
    await writer.close();
    await consumer.catch(() => undefined);
    agent.destroy();
  }
}
