import { readdir } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { footprintOf } from './footprint.ts';
import { distribution, type Distribution } from './freshness.ts';

/**
 * The held-connections phase (docs/connections.md): 10,000 connections held open against the
 * running service with its default settings (idle keep-alive connections, requests whose headers
 * stopped half-way, change-feed long polls from 150 loopback addresses, 20 each), and ordinary
 * requests answered meanwhile, timed, compared with the same requests before any was held. A
 * half-sent request is cut at the header deadline (10 s); each one cut is opened again at once,
 * as a client trying to exhaust the service would, so their number stays the same.
 */
export interface HeldResult {
  connections: { idle: number; halfSent: number; longPolls: number; pollAddresses: number };
  /** Seconds to open them all. */
  openSeconds: number;
  /** The process's RSS before, with every connection held (after the ordinary requests), and 5 s after they were let go. */
  rssMB: { before: number; held: number; after: number };
  /** The process's open file descriptors while they were held. */
  descriptorsHeld: number;
  /** Half-sent requests the service cut (408, header deadline) while held, each opened again. */
  halfSentCut: number;
  /** Long polls refused (429/503) or answered while held: 0 unless a cap or the wait was reached. */
  longPollsRefused: number;
  /** Ordinary requests at `concurrency`: before any connection was held, and while 10,000 were. */
  quiet: Distribution;
  held: Distribution;
  /** Ordinary requests not answered 200 (either run). */
  failed: number;
  concurrency: number;
}

const IDLE = 4000;
const HALF_SENT = 3000;
const POLL_ADDRESSES = 150;
const POLLS_PER_ADDRESS = 20;
const ORDINARY = 3000;
const CONCURRENCY = 8;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function inBatches(items: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items) await fn(next++);
    }),
  );
}

function connect(port: number, localAddress = '127.0.0.1'): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress });
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => undefined);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

function get(agent: http.Agent, port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function timed(port: number, paths: string[]): Promise<{ latency: Distribution; failed: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const durations: number[] = [];
  let failed = 0;
  await inBatches(ORDINARY, CONCURRENCY, async (i) => {
    const started = performance.now();
    const status = await get(agent, port, paths[i % paths.length]!).catch(() => 0);
    durations.push(performance.now() - started);
    if (status !== 200) failed++;
  });
  agent.destroy();
  return { latency: distribution(durations, 0), failed };
}

export async function measureHeldConnections(opts: { baseUrl: string; serverPid: number; paths: string[] }): Promise<HeldResult> {
  const port = Number(new URL(opts.baseUrl).port);
  // Every path answered once first, so both timed runs find the same cached answers.
  const warm = new http.Agent({ keepAlive: true });
  for (const path of opts.paths) await get(warm, port, path);
  warm.destroy();
  const quiet = await timed(port, opts.paths);
  const before = await footprintOf(opts.serverPid);
  const head = (await (await fetch(`${opts.baseUrl}/api/v1/changes`)).json()) as { cursor: string };
  const sockets = new Set<net.Socket>();
  let letGo = false;
  let halfSentCut = 0;
  let longPollsRefused = 0;
  const started = performance.now();

  await inBatches(IDLE, 100, async () => {
    const socket = await connect(port);
    sockets.add(socket);
    await new Promise<void>((resolve) => {
      socket.once('data', () => resolve());
      socket.write('GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n');
    });
  });
  await inBatches(POLL_ADDRESSES * POLLS_PER_ADDRESS, 100, async (i) => {
    const socket = await connect(port, `127.0.1.${1 + (i % POLL_ADDRESSES)}`);
    sockets.add(socket);
    socket.once('data', () => longPollsRefused++);
    socket.write(`GET /api/v1/changes?since=${encodeURIComponent(head.cursor)}&wait=30 HTTP/1.1\r\nHost: bench\r\n\r\n`);
  });
  const halfSent = async (): Promise<void> => {
    const socket = await connect(port);
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      if (letGo) return;
      halfSentCut++;
      void halfSent().catch(() => undefined);
    });
    socket.write('GET /api/v1/categories HTTP/1.1\r\nHost: bench\r\nUser-Agent: slow\r\n');
  };
  await inBatches(HALF_SENT, 100, halfSent);
  const openSeconds = (performance.now() - started) / 1000;

  const held = await timed(port, opts.paths);
  const heldFootprint = await footprintOf(opts.serverPid);
  const descriptorsHeld = (await readdir(`/proc/${opts.serverPid}/fd`)).length;
  letGo = true;
  for (const s of sockets) s.destroy();
  await sleep(5000);
  const after = await footprintOf(opts.serverPid);
  return {
    connections: { idle: IDLE, halfSent: HALF_SENT, longPolls: POLL_ADDRESSES * POLLS_PER_ADDRESS, pollAddresses: POLL_ADDRESSES },
    openSeconds,
    rssMB: { before: before.rssMB, held: heldFootprint.rssMB, after: after.rssMB },
    descriptorsHeld,
    halfSentCut,
    longPollsRefused,
    quiet: quiet.latency,
    held: held.latency,
    failed: quiet.failed + held.failed,
    concurrency: CONCURRENCY,
  };
}
