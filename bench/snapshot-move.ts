import pg from 'pg';
import { CHANGES_SHARE, MIN_CHANGES } from '../projector/snapshots.ts';
import { embeddedConnectionString } from './freshness.ts';
import { footprintOf, type Footprint } from './footprint.ts';
import { runLoad, type LoadRequest, type LoadResult } from './load.ts';

/**
 * A move to a newer snapshot, as every long-running process makes one after enough changes:
 * enough live listings are changed (and put back) for the projector in `serve` to write a new
 * snapshot, and the bench waits until `serve`'s mirror has loaded it, while product requests
 * run against `serve`. Then the same load as before the changes, and `serve`'s memory: what a
 * process holds after a move, not only after its start.
 */
export interface SnapshotMoveResult {
  /** Live listings changed: the projector's threshold for a new snapshot, and a margin. */
  changed: number;
  /** From the changes' commit to the new snapshot complete in the database. */
  writtenSeconds: number;
  /** From the changes' commit to `serve`'s mirror having loaded it. */
  movedSeconds: number;
  /** Product requests while the snapshot was built, written and loaded, and in a quiet moment before. */
  products: { quiet: LoadSummary; during: LoadSummary };
  before: Footprint & { externalMB: number };
  after: Footprint & { externalMB: number };
}

interface LoadSummary {
  okPerSecond: number;
  p99: number;
  max: number;
}

const CHUNK_SECONDS = 5;

async function externalMB(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const m = /^nodejs_external_memory_bytes(?:\{[^}]*\})? (\S+)/m.exec(text);
  return m ? Number(m[1]) / 2 ** 20 : Number.NaN;
}

function summary(results: LoadResult[]): LoadSummary {
  const seconds = results.reduce((a, r) => a + r.seconds, 0);
  return {
    okPerSecond: results.reduce((a, r) => a + r.okPerSecond * r.seconds, 0) / seconds,
    p99: Math.max(...results.map((r) => r.p99)),
    max: Math.max(...results.map((r) => r.max)),
  };
}

export async function measureSnapshotMove(opts: {
  baseUrl: string;
  serverPid: number;
  dataDir: string;
  /** `serve`'s recent output (info level, JSON): its mirror says which snapshot it loaded. */
  tail: () => string;
  productRequests: LoadRequest[];
  /** Requests run after the move, so that the collector has run before memory is read. */
  settleRequests: LoadRequest[];
  connections: number;
  giveUpMs: number;
}): Promise<SnapshotMoveResult> {
  const load = (requests: LoadRequest[], durationSeconds: number, warmupSeconds: number) =>
    runLoad({ url: opts.baseUrl, requests, connections: opts.connections, durationSeconds, warmupSeconds, serverPid: opts.serverPid });
  const quiet = summary([await load(opts.productRequests, CHUNK_SECONDS, 1)]);
  await load(opts.settleRequests, CHUNK_SECONDS, 0);
  const before = { ...(await footprintOf(opts.serverPid)), externalMB: await externalMB(opts.baseUrl) };

  const client = new pg.Client({ connectionString: await embeddedConnectionString(opts.dataDir), application_name: 'bench snapshot move' });
  await client.connect();
  try {
    const known = new Set((await client.query<{ id: string }>('SELECT id FROM projection.snapshots')).rows.map((r) => r.id));
    const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM projection.products');
    // The projector's rule for a new snapshot, and a margin.
    const changed = Math.max(MIN_CHANGES, Math.ceil(rows[0]!.n / CHANGES_SHARE)) + 100;
    // A space appended, then taken off again: each listing changes twice and ends as it was.
    const target = `SELECT id FROM catalog.listings WHERE status = 'live' ORDER BY id LIMIT ${changed}`;
    await client.query(`UPDATE catalog.listings SET punchline = punchline || ' ' WHERE id IN (${target})`);
    await client.query(`UPDATE catalog.listings SET punchline = left(punchline, -1) WHERE id IN (${target})`);
    const committed = Date.now();

    // Watched apart from the load, every 100 ms: the new snapshot complete, then serve on it.
    let writtenSeconds: number | undefined;
    let movedSeconds: number | undefined;
    let giveUp = false;
    const watched = (async () => {
      let fresh: string | undefined;
      while (movedSeconds === undefined && !giveUp) {
        if (fresh === undefined) {
          const { rows: done } = await client.query<{ id: string }>('SELECT id FROM projection.snapshots WHERE complete');
          fresh = done.find((r) => !known.has(r.id))?.id;
          if (fresh !== undefined) writtenSeconds = (Date.now() - committed) / 1000;
        }
        if (fresh !== undefined && opts.tail().includes(`"from":"snapshot ${fresh}`)) movedSeconds = (Date.now() - committed) / 1000;
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const during: LoadResult[] = [];
    try {
      while (movedSeconds === undefined) {
        if (Date.now() - committed > opts.giveUpMs) throw new Error(`serve did not move to a newer snapshot within ${opts.giveUpMs / 1000} s\n${opts.tail()}`);
        during.push(await load(opts.productRequests, CHUNK_SECONDS, 0));
      }
    } finally {
      giveUp = true;
      await watched;
    }
    await load(opts.productRequests, CHUNK_SECONDS, 0);
    await load(opts.settleRequests, CHUNK_SECONDS, 0);
    const after = { ...(await footprintOf(opts.serverPid)), externalMB: await externalMB(opts.baseUrl) };
    return { changed, writtenSeconds: writtenSeconds!, movedSeconds: movedSeconds!, products: { quiet, during: summary(during) }, before, after };
  } finally {
    await client.end();
  }
}
