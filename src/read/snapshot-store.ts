import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { to as copyTo } from 'pg-copy-streams';
import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import type { SearchDocument } from '../search/port.ts';
import { SEARCH_COLUMNS } from '../search/search-row.ts';
import type { Snapshot } from './snapshot.ts';
import { readWholeFile, snapshotBuffer, SNAPSHOT_FILE_SUFFIX, type SnapshotPrefetch } from './snapshot-file.ts';
import { LISTING_ORDER_SQL, SNAPSHOT_FORMAT, SnapshotBuilder, type SnapshotRow } from './snapshot.ts';

/**
 * Where snapshots live. The leading projector writes each one into PostgreSQL
 * (projection.snapshots, in parts: projector/snapshot-writer.ts), so an API process started on any host
 * finds it; each process also keeps the last one it read in a local file, so a restart on the
 * same host reads its disk instead of the database. A snapshot is immutable and named by a
 * random id: a local file is used only when the database still lists that id as its latest.
 */
export interface SnapshotInfo {
  id: string;
  version: number;
  size: number;
  listings: number;
  search: boolean;
}

type Queryable = Pick<Pool, 'query'> | PoolClient;

/** The newest complete snapshot of this format (with a search index or without), if any. */
export async function latestSnapshot(db: Queryable, search: boolean): Promise<SnapshotInfo | undefined> {
  const { rows } = await db.query<{ id: string; version: number; size: number; listings: number }>(
    `SELECT id, version, size, listings FROM projection.snapshots
      WHERE complete AND format = $1 AND search = $2 ORDER BY version DESC LIMIT 1`,
    [SNAPSHOT_FORMAT, search],
  );
  const row = rows[0];
  return row && { id: row.id, version: Number(row.version), size: Number(row.size), listings: Number(row.listings), search };
}

/** At most this many connections read a snapshot's parts at once (the transaction's own included). */
const PART_READERS = 4;

/**
 * Reads a snapshot's bytes with COPY in binary format: the parts arrive as raw bytes (a plain
 * query would send bytea as hex text, twice the bytes, decoded again here). With a `pool`,
 * parts are read on up to four connections at once, each in a transaction that imports the
 * snapshot of `client`'s (which must be REPEATABLE READ and stay open meanwhile), so they all
 * see the same rows: the server's work of reading each part and the copying here spread over
 * the cores instead of one part after another.
 */
export async function readSnapshotBytes(client: PoolClient, info: SnapshotInfo, pool?: Pool): Promise<Buffer> {
  if (!/^[0-9a-f-]{36}$/.test(info.id)) throw new Error(`invalid snapshot id ${info.id}`);
  // octet_length of a value stored apart reads only its pointer, not the value.
  const { rows } = await client.query<{ part: number; size: number }>(
    'SELECT part, octet_length(bytes) AS size FROM projection.snapshot_parts WHERE snapshot = $1 ORDER BY part',
    [info.id],
  );
  const parts: Array<{ part: number; at: number; size: number }> = [];
  let total = 0;
  for (const row of rows) {
    parts.push({ part: row.part, at: total, size: row.size });
    total += row.size;
  }
  if (total !== info.size) throw new Error(`snapshot ${info.id}: its parts hold ${total} bytes of ${info.size}`);
  const out = snapshotBuffer(info.size);
  let next = 0;
  const take = () => (next < parts.length ? parts[next++] : undefined);
  // Every part's copy once taken; a rejection is seen by the Promise.all below.
  const copies: Promise<void>[] = [];
  const drain = async (c: PoolClient) => {
    for (let p = take(); p; p = take()) {
      const copying = copyPart(c, info.id, p, out);
      copying.catch(() => undefined);
      copies.push(copying);
      await copying;
    }
  };
  const helpers = pool ? Math.min(PART_READERS, parts.length) - 1 : 0;
  if (helpers > 0) {
    const { rows: exported } = await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id');
    const shared = exported[0]!.id;
    // Helpers are not waited for: one that gets no connection soon (a busy pool) finds the parts
    // taken when it does, and gives its connection back; one that cannot share the snapshot takes
    // no part. The parts a helper took are waited for below.
    const helper = async () => {
      const c = await pool!.connect().catch(() => undefined);
      if (!c) return;
      if (next >= parts.length) {
        c.release();
        return;
      }
      // Not withTransaction: a part whose copy failed may leave this connection in the middle of
      // a COPY, where a ROLLBACK would wait unanswered; such a connection is discarded unasked, and
      // the failure reaches the reader through that part's promise, not from here.
      let failed = false;
      try {
        await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        await c.query(`SET TRANSACTION SNAPSHOT '${shared.replace(/'/g, "''")}'`);
        await drain(c);
        await c.query('COMMIT');
      } catch {
        // A failed copy is reported through its promise; a connection left mid-COPY or
        // mid-transaction is not given back for reuse.
        failed = true;
      } finally {
        c.release(failed);
      }
    };
    for (let h = 0; h < helpers; h++) void helper();
  }
  await drain(client);
  await Promise.all(copies);
  return out;
}

/** One part's bytes, by COPY in binary format, written into `out` at the part's place. */
async function copyPart(client: PoolClient, id: string, p: { part: number; at: number; size: number }, out: Buffer): Promise<void> {
  const stream = client.query(copyTo(`COPY (SELECT bytes FROM projection.snapshot_parts WHERE snapshot = '${id}' AND part = ${Number(p.part)}) TO STDOUT (FORMAT binary)`));
  // COPY binary: 11-byte signature, flags (4), extension length (4) + extension; then per row a
  // field count (int16), the value's length (int32) and its bytes; -1 as field count ends it.
  let pending = Buffer.alloc(0);
  let state: 'header' | 'row' | 'value' | 'done' = 'header';
  let valueLeft = 0;
  let written = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let buf = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let at = 0;
    for (;;) {
      if (state === 'value') {
        const n = Math.min(valueLeft, buf.length - at);
        if (written + n > p.size) throw new Error(`snapshot ${id}: part ${p.part} is longer than it said`);
        buf.copy(out, p.at + written, at, at + n);
        written += n;
        valueLeft -= n;
        at += n;
        if (valueLeft > 0) break;
        state = 'row';
        continue;
      }
      if (state === 'header') {
        if (buf.length - at < 19) break;
        const extension = buf.readUInt32BE(at + 15);
        if (buf.length - at < 19 + extension) break;
        at += 19 + extension;
        state = 'row';
        continue;
      }
      if (state === 'row') {
        if (buf.length - at < 2) break;
        const fields = buf.readInt16BE(at);
        if (fields === -1) {
          state = 'done';
          at += 2;
          break;
        }
        if (buf.length - at < 6) break;
        valueLeft = buf.readInt32BE(at + 2);
        at += 6;
        state = 'value';
        continue;
      }
      break;
    }
    pending = at < buf.length ? Buffer.from(buf.subarray(at)) : Buffer.alloc(0);
    buf = pending;
  }
  if (written !== p.size) throw new Error(`snapshot ${id}: read ${written} bytes of part ${p.part}'s ${p.size}`);
}

export const SNAPSHOT_COLUMNS = `slug, doc, website_followed, ${SEARCH_COLUMNS}`;
/** Rows per read while building: between two, the event loop runs (requests are answered). */
const BUILD_BATCH = 500;

/**
 * Builds a snapshot from projection.products as `client`'s transaction sees it (call inside a
 * REPEATABLE READ transaction, at `version`). Ids are sorted in listing order by the database
 * (a sort of keys only), then the rows are read by batches of ids in that order. Between
 * batches the event loop runs, so a process that builds while it serves keeps answering.
 */
export async function buildSnapshotFromRows(
  client: PoolClient,
  version: number,
  searchFields: readonly (keyof SearchDocument)[] | undefined,
): Promise<Snapshot> {
  const { rows: order } = await client.query<[string]>({ text: `SELECT id FROM projection.products ORDER BY ${LISTING_ORDER_SQL}`, rowMode: 'array' });
  const builder = new SnapshotBuilder(searchFields);
  for (let at = 0; at < order.length; at += BUILD_BATCH) {
    const ids = order.slice(at, at + BUILD_BATCH).map((r) => r[0]);
    const { rows } = await client.query<SnapshotRow>(`SELECT ${SNAPSHOT_COLUMNS} FROM projection.products WHERE id = ANY($1::uuid[])`, [ids]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of ids) {
      const row = byId.get(id);
      if (!row) throw new Error(`product ${id} vanished from the snapshot's transaction`);
      builder.add(row);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return builder.finish(version);
}

/** Builds a snapshot of the projection as it is now, in a read-only transaction of its own. */
export async function buildCurrentSnapshot(pool: Pool, searchFields: readonly (keyof SearchDocument)[] | undefined): Promise<Snapshot> {
  // Read-only: no transaction id, so the build never holds the outbox horizon back.
  return withTransaction(pool, { isolation: 'repeatable read', readOnly: true }, async (client) => {
    const { rows } = await client.query<{ version: number }>('SELECT version FROM projection.state');
    return buildSnapshotFromRows(client, rows[0]?.version ?? 0, searchFields);
  });
}

/**
 * The local copy of the last snapshot read: `<dir>/<snapshot id>.snapshot`. Files of other
 * snapshots are removed once a newer one is written, and any file unused for a day.
 */
export class LocalSnapshotCache {
  constructor(
    private readonly dir: string,
    /** A read of the newest local copy begun as the process started (snapshot-file.ts). */
    private prefetch?: Promise<SnapshotPrefetch | undefined>,
  ) {}

  private file(info: SnapshotInfo): string {
    return path.join(this.dir, `${info.id}${SNAPSHOT_FILE_SUFFIX}`);
  }

  /**
   * The snapshot's bytes when this host has them: those of the read begun at start
   * (`prefetch`) when it was of this snapshot, else the file read now.
   */
  async read(info: SnapshotInfo): Promise<Buffer | undefined> {
    return (await this.prefetched(info)) ?? readWholeFile(this.file(info), info.size);
  }

  /**
   * The early read's bytes when it was of this snapshot. Used once: a later read (a newer
   * snapshot) reads its own file, and bytes of another snapshot are let go before that read.
   */
  private async prefetched(info: SnapshotInfo): Promise<Buffer | undefined> {
    const early = await this.prefetch;
    this.prefetch = undefined;
    if (!early) return undefined;
    const bytes = early.take();
    return early.id === info.id && early.size === info.size ? bytes : undefined;
  }

  /** Lets the early read's bytes go unused (the first load needed none from this host). */
  forgetPrefetch(): void {
    const early = this.prefetch;
    this.prefetch = undefined;
    void early?.then((it) => it?.take());
  }

  /** Keeps a copy (written aside, then renamed into place), and removes older ones. */
  async write(info: SnapshotInfo, bytes: Buffer): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = this.file(info);
    // A name of its own per write: a projector and a mirror of one process may keep the same
    // snapshot at once, and each must rename a file only it wrote.
    const temporary = `${file}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(temporary, bytes);
    await rename(temporary, file);
    const dayAgo = Date.now() - 86_400_000;
    for (const name of await readdir(this.dir)) {
      const full = path.join(this.dir, name);
      if (full === file) continue;
      try {
        // Another process's copy may still be read for a moment: only snapshots older than a
        // minute go (a process reading one has its file open), and anything unused for a day.
        const s = await stat(full);
        if (s.mtimeMs < dayAgo || (name.endsWith(SNAPSHOT_FILE_SUFFIX) && s.mtimeMs < Date.now() - 60_000)) await rm(full, { force: true });
      } catch {
        // gone already
      }
    }
  }
}
