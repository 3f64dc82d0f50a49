import { cursorExpired, internalError } from '../contract/errors.ts';
import type { ChangesQuery } from '../contract/schemas.ts';
import type { Pool } from '../db/pool.ts';
import { formatCursor, parseCursor, type ChangeLogPosition } from './feed-cursor.ts';
import type { CatalogSnapshot, ProjectionMirror } from './projection-mirror.ts';

/**
 * The bulk export and the change feed for consumers that keep a copy of the whole catalog
 * (docs/api.md: "Export and change feed"). The export is this process's mirror at one position of
 * the change log; the feed reads the log (projection.changes) from PostgreSQL, never past that
 * same position, so a change is announced only once GET /products/{slug} on this process shows
 * it, and export + the changes after its cursor = the live catalog.
 */
interface ChangesAnswer {
  /** `{"changes":[…],"cursor":"…"}`, each product the stored JSON as it is. */
  readonly body: string;
  readonly count: number;
  readonly cursor: string;
}

export interface ChangeFeed {
  /** The live catalog at the position this process reflects (see CatalogSnapshot). */
  exportSnapshot(): CatalogSnapshot;
  /**
   * The changes after `since`, oldest first; with `wait`, held until one exists, `wait` seconds
   * pass or `signal` aborts (the client went away, the server is closing), then answered with
   * what there is. Throws CURSOR_EXPIRED (410) for a cursor the log cannot continue.
   */
  changes(query: ChangesQuery, signal?: AbortSignal): Promise<ChangesAnswer>;
}

export interface ChangeFeedOptions {
  pool: Pool;
  mirror: Pick<ProjectionMirror, 'head' | 'onChange' | 'exportSnapshot'>;
  /** How long the projector keeps changes, for the CURSOR_EXPIRED message. */
  retentionHours: number;
  log?: { error(obj: object, msg?: string): void };
}

/** An answer stops growing once its products reach this many bytes (at least one change is always given). */
const CHANGES_MAX_BODY_BYTES = 8 * 1024 * 1024;

interface ChangeRow {
  change_log: string;
  pruned: number;
  position: number | null;
  op: 'upsert' | 'delete' | null;
  slug: string | null;
  doc: string | null;
}

export function createChangeFeed(opts: ChangeFeedOptions): ChangeFeed {
  const { pool, mirror } = opts;
  const waiters = new Set<() => void>();
  mirror.onChange(() => {
    for (const wake of [...waiters]) wake();
  });

  /** Resolves at the mirror's next change, after `ms`, or on abort. */
  function nextChange(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * One statement, so one snapshot: what the log has pruned and the changes
   * after `after` up to `upTo` agree. The limit applies first (a consumer far behind reads no
   * more rows than it gets); the running byte count then keeps an answer to a size a client
   * can hold, at least the first change always coming.
   */
  async function readChanges(after: number, upTo: number, limit: number): Promise<ChangeRow[]> {
    const { rows } = await pool.query<ChangeRow>(
      `SELECT s.change_log, s.changes_pruned_through AS pruned, c.position, c.op, c.slug, c.doc
         FROM projection.state s
         LEFT JOIN LATERAL (
           SELECT w.position, w.op, w.slug, w.doc FROM (
             SELECT l.*, sum(COALESCE(octet_length(l.doc), 0)) OVER (ORDER BY l.position) - COALESCE(octet_length(l.doc), 0) AS bytes_before
               FROM (SELECT position, op, slug, doc FROM projection.changes
                      WHERE position > $1 AND position <= $2
                      ORDER BY position
                      LIMIT $3) l) w
            WHERE w.bytes_before < $4
         ) c ON true
        ORDER BY c.position`,
      [after, upTo, limit, CHANGES_MAX_BODY_BYTES],
    );
    return rows;
  }

  function expiredMessage(): string {
    const days = Math.round((opts.retentionHours / 24) * 10) / 10;
    return `This cursor is older than the changes the feed still holds (it keeps them ${days} days).`;
  }

  function answer(log: string, rows: readonly ChangeRow[], since: number): ChangesAnswer {
    let body = '{"changes":[';
    let last = since;
    for (const row of rows) {
      if (row.position === null) continue;
      // Positions are gapless (projector/change-log.ts): anything else is a fault, never a skip.
      if (row.position !== last + 1) {
        const err = internalError();
        opts.log?.error({ expected: last + 1, found: row.position }, 'the change log has a gap; refusing to skip changes');
        throw err;
      }
      last = row.position;
      if (last > since + 1) body += ',';
      body += `{"cursor":"${formatCursor({ log, position: row.position })}","op":"${row.op}","slug":${JSON.stringify(row.slug)},"product":${row.doc ?? 'null'}}`;
    }
    const cursor = formatCursor({ log, position: last });
    return { body: `${body}],"cursor":"${cursor}"}`, count: last - since, cursor };
  }

  /**
   * A cursor past this process's position comes from a process further ahead (fine: wait for
   * this one), or from a history this database no longer has (restored from a backup).
   */
  async function checkAhead(since: ChangeLogPosition): Promise<void> {
    const { rows } = await pool.query<{ head: number }>('SELECT change_position AS head FROM projection.state');
    if (since.position > (rows[0]?.head ?? 0)) {
      throw cursorExpired('This cursor is ahead of the change feed: the catalog database was restored to an earlier state since it was given.');
    }
  }

  return {
    exportSnapshot: () => mirror.exportSnapshot(),
    async changes(query, signal) {
      const start = mirror.head;
      if (query.since === undefined) return answer(start.log, [], start.position);
      const since = parseCursor(query.since);
      if (!since || since.log !== start.log) {
        throw cursorExpired('This cursor is from another change feed (another catalog database, or this one before it was recreated).');
      }
      const deadline = Date.now() + query.wait * 1000;
      let checkedAhead = false;
      for (;;) {
        const head = mirror.head;
        if (since.position < head.position) {
          const rows = await readChanges(since.position, head.position, query.limit);
          const state = rows[0]!;
          if (since.position < state.pruned) throw cursorExpired(expiredMessage());
          return answer(state.change_log, rows, since.position);
        }
        if (since.position > head.position && !checkedAhead) {
          await checkAhead(since);
          checkedAhead = true;
          // The mirror may have moved meanwhile: look again before waiting for its next change.
          continue;
        }
        // From reading the head to waiting for its next change nothing yields, so no change slips between.
        const remaining = deadline - Date.now();
        if (remaining <= 0 || signal?.aborted) return answer(head.log, [], since.position);
        await nextChange(remaining, signal);
      }
    },
  };
}
