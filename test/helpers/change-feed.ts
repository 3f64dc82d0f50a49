import type pg from 'pg';

/**
 * The change log and a consumer of the export and the feed, for the tests of both: the log read
 * straight from projection.changes, and a client that keeps a copy of the catalog (slug →
 * Product JSON text) over real HTTP, the way docs/api.md tells consumers to.
 */
type Db = Pick<pg.ClientBase, 'query'>;

export interface LoggedChange {
  position: number;
  op: 'upsert' | 'delete';
  slug: string;
  doc: string | null;
}

export async function changesAfter(db: Db, position = 0): Promise<LoggedChange[]> {
  const { rows } = await db.query<LoggedChange>('SELECT position, op, slug, doc FROM projection.changes WHERE position > $1 ORDER BY position', [position]);
  return rows;
}

export async function logHead(db: Db): Promise<number> {
  const { rows } = await db.query<{ change_position: number }>('SELECT change_position FROM projection.state');
  return rows[0]!.change_position;
}

/** The live catalog as the projection holds it: slug → Product JSON. */
export async function projectedCatalog(db: Db): Promise<Map<string, string>> {
  const { rows } = await db.query<{ slug: string; doc: string }>('SELECT slug, doc FROM projection.products');
  return new Map(rows.map((r) => [r.slug, r.doc]));
}

/** Applies changes, in order, to a copy keyed by slug. */
export function applyChanges(copy: Map<string, string>, changes: Iterable<{ op: string; slug: string; doc: string | null }>): Map<string, string> {
  for (const c of changes) {
    if (c.op === 'upsert') copy.set(c.slug, c.doc!);
    else copy.delete(c.slug);
  }
  return copy;
}

/** The whole log replayed onto an empty catalog (a database whose log began with its projection empty). */
export async function replayedLog(db: Db): Promise<Map<string, string>> {
  return applyChanges(new Map(), await changesAfter(db, 0));
}

export interface ChangePageBody {
  changes: Array<{ cursor: string; op: 'upsert' | 'delete'; slug: string; product: Record<string, unknown> | null }>;
  cursor: string;
}

/**
 * A consumer of the REST API over HTTP: exports, then follows the feed. Products are kept as
 * text; every answer is checked to be JSON in the form JSON.stringify writes, so the text a
 * product is kept as is byte for byte the text the service sent.
 */
export class CatalogCopy {
  readonly products = new Map<string, string>();
  cursor = '';
  /** Slugs in the order of the last export. */
  order: string[] = [];
  /** Cursors of every change applied, in order. */
  readonly applied: string[] = [];

  constructor(
    private readonly api: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  async export(): Promise<void> {
    const res = await fetch(`${this.api}/export`, { headers: this.headers });
    if (res.status !== 200) throw new Error(`export answered ${res.status}: ${await res.text()}`);
    const body = await res.text();
    this.products.clear();
    this.order = [];
    for (const line of body.split('\n')) {
      if (line === '') continue;
      const slug = (JSON.parse(line) as { slug: string }).slug;
      if (this.products.has(slug)) throw new Error(`the export holds ${slug} twice`);
      this.products.set(slug, line);
      this.order.push(slug);
    }
    if (!body.endsWith('\n') && body !== '') throw new Error('the export does not end with a newline');
    this.cursor = res.headers.get('catalog-cursor') ?? '';
  }

  /** One request of the feed, applied; returns the number of changes it carried. */
  async poll(opts: { limit?: number; wait?: number; signal?: AbortSignal } = {}): Promise<number> {
    const q = new URLSearchParams({ since: this.cursor, limit: String(opts.limit ?? 1000), wait: String(opts.wait ?? 0) });
    const res = await fetch(`${this.api}/changes?${q}`, { headers: this.headers, ...(opts.signal && { signal: opts.signal }) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`changes answered ${res.status}: ${text}`);
    const page = JSON.parse(text) as ChangePageBody;
    if (JSON.stringify(page) !== text) throw new Error('the feed answer is not in the form JSON.stringify writes');
    for (const c of page.changes) {
      if (c.op === 'upsert') this.products.set(c.slug, JSON.stringify(c.product));
      else this.products.delete(c.slug);
      this.applied.push(c.cursor);
    }
    this.cursor = page.cursor;
    return page.changes.length;
  }

  /** Polls without waiting until an answer carries nothing. */
  async drain(): Promise<void> {
    while ((await this.poll()) > 0);
  }
}

/** Position part of a cursor (the tests know the format the service writes; clients must not). */
export function positionOf(cursor: string): number {
  return Number(cursor.slice(cursor.indexOf('-') + 1));
}

/** Slugs newest first, never-listed last, ties by id: the search order, which the export follows. */
export function newestFirst(products: Iterable<string>): string[] {
  const parsed = [...products].map((text) => JSON.parse(text) as { slug: string; id: string; listed_at: string | null });
  const time = (p: { listed_at: string | null }) => (p.listed_at === null ? Number.NEGATIVE_INFINITY : Date.parse(p.listed_at));
  parsed.sort((a, b) => (time(a) !== time(b) ? (time(a) > time(b) ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return parsed.map((p) => p.slug);
}
