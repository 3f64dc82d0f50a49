/**
 * A typed client of the catalog's REST API: the types are generated from the service's
 * openapi.json by openapi-typescript (src/openapi.d.ts, `npm run build`), the requests made by
 * openapi-fetch. Refusals are retried as docs/api-reference.md#errors says: 429 and 503 after
 * Retry-After (with jitter), 500 with a growing jittered back-off; a mirror that meets
 * CURSOR_EXPIRED takes a new export.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './openapi.d.ts';

export type Product = components['schemas']['Product'];
export type Category = components['schemas']['Category'];
export type SearchResult = components['schemas']['SearchResult'];
export type ChangePage = components['schemas']['ChangePage'];
export type ErrorBody = components['schemas']['Error'];
export type SearchParams = NonNullable<paths['/search']['get']['parameters']['query']>;
export type { components, paths };

/** A refusal of the service: its status and its stable `code` (branch on the code, never the message). */
export class CatalogApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly body: ErrorBody | undefined;
  constructor(status: number, body: ErrorBody | undefined) {
    super(body?.message ?? `HTTP ${status}`);
    this.name = 'CatalogApiError';
    this.status = status;
    this.code = body?.code ?? `HTTP_${status}`;
    this.body = body;
  }
}

export interface CatalogClientOptions {
  /** The API's base URL, ending in /api/v1 (e.g. https://catalog.example/api/v1). */
  baseUrl: string;
  /** A consumer key (`ck_…`), sent as `Authorization: Bearer …` on every request. */
  key?: string;
  /** Retries of one request refused with 429, 503 or 500 (default 5). */
  maxRetries?: number;
  /** The longest wait between two tries, in ms (default 60 000). */
  maxDelayMs?: number;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: typeof globalThis.fetch;
}

const RETRIED = new Set([429, 500, 503]);

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
  });
}

/** How long to wait before try `attempt` (1-based) of an answer refused with `res`. */
export function retryDelayMs(res: Response, attempt: number, maxDelayMs: number, random: () => number = Math.random): number {
  const after = Number(res.headers.get('retry-after'));
  const base = Number.isFinite(after) && after >= 0 && res.status !== 500 ? after * 1000 : 500 * 2 ** (attempt - 1);
  // Jitter: up to a second (or a quarter of the wait) more, so clients refused together do not return together.
  return Math.min(maxDelayMs, base + random() * Math.max(1000, base / 4));
}

/** A fetch that retries 429, 503 and 500 as the reference says. */
function retryingFetch(inner: typeof globalThis.fetch, maxRetries: number, maxDelayMs: number): typeof globalThis.fetch {
  return async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    for (let attempt = 1; ; attempt++) {
      const res = await inner(request.clone());
      if (!RETRIED.has(res.status) || attempt > maxRetries) return res;
      await res.body?.cancel();
      await sleep(retryDelayMs(res, attempt, maxDelayMs), request.signal);
    }
  };
}

export interface CatalogClient {
  /** The openapi-fetch client itself, typed by the service's paths. */
  readonly raw: Client<paths>;
  search(params?: SearchParams, init?: { signal?: AbortSignal }): Promise<SearchResult>;
  categories(init?: { signal?: AbortSignal }): Promise<Category[]>;
  product(slug: string, init?: { signal?: AbortSignal }): Promise<Product>;
  /** Every live product, and the change-feed cursor the export is consistent with. */
  exportAll(init?: { signal?: AbortSignal }): Promise<{ products: Product[]; cursor: string }>;
  changes(since: string, opts?: { limit?: number; wait?: number; signal?: AbortSignal }): Promise<ChangePage>;
  /** Keeps `products` equal to the live catalog: an export, then the change feed, until stopped. */
  mirror(opts?: MirrorOptions): Mirror;
}

export interface MirrorOptions {
  /** Seconds each long poll waits for a change (default 25). */
  wait?: number;
  /** Called after each export and each page of changes applied. */
  onUpdate?: (mirror: Mirror) => void;
  /** A copy kept from before (its products and cursor): followed from there, re-exported if the cursor expired. */
  from?: { cursor: string; products: Iterable<Product> };
  /** Called on an error the mirror will retry after (a network failure, say); it never gives up. */
  onError?: (err: unknown) => void;
}

export interface Mirror {
  /** slug → Product, as the live catalog reads. */
  readonly products: Map<string, Product>;
  /** The position followed; undefined before the first export. */
  readonly cursor: string | undefined;
  /** How many exports it took (1, plus one per expired cursor). */
  readonly exports: number;
  stop(): Promise<void>;
}

async function answer<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<{ data: T; response: Response }> {
  const { data, error, response } = await p;
  if (!response.ok || data === undefined) throw new CatalogApiError(response.status, error as ErrorBody | undefined);
  return { data, response };
}

export function createCatalogClient(options: CatalogClientOptions): CatalogClient {
  const fetchImpl = retryingFetch(options.fetch ?? globalThis.fetch, options.maxRetries ?? 5, options.maxDelayMs ?? 60_000);
  const raw = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    fetch: fetchImpl,
    headers: options.key ? { authorization: `Bearer ${options.key}` } : {},
  });

  const client: CatalogClient = {
    raw,
    async search(params = {}, init = {}) {
      return (await answer(raw.GET('/search', { params: { query: params }, ...init }))).data;
    },
    async categories(init = {}) {
      return (await answer(raw.GET('/categories', init))).data.categories;
    },
    async product(slug, init = {}) {
      return (await answer(raw.GET('/products/{slug}', { params: { path: { slug } }, ...init }))).data;
    },
    async exportAll(init = {}) {
      const { data, response } = await answer(raw.GET('/export', { parseAs: 'text', ...init }));
      const cursor = response.headers.get('catalog-cursor');
      if (!cursor) throw new CatalogApiError(response.status, { code: 'NO_CURSOR', message: 'The export carried no Catalog-Cursor.' });
      const products = data.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Product);
      return { products, cursor };
    },
    async changes(since, opts = {}) {
      const query = { since, ...(opts.limit !== undefined && { limit: opts.limit }), ...(opts.wait !== undefined && { wait: opts.wait }) };
      return (await answer(raw.GET('/changes', { params: { query }, ...(opts.signal && { signal: opts.signal }) }))).data;
    },
    mirror(opts = {}) {
      const controller = new AbortController();
      const state = {
        products: new Map<string, Product>([...(opts.from?.products ?? [])].map((p) => [p.slug, p])),
        cursor: opts.from?.cursor,
        exports: 0,
      };
      const mirror: Mirror = {
        get products() { return state.products; },
        get cursor() { return state.cursor; },
        get exports() { return state.exports; },
        stop: async () => { controller.abort(); await running.catch(() => undefined); },
      };
      const signal = controller.signal;
      const reexport = async () => {
        const { products, cursor } = await client.exportAll({ signal });
        state.products = new Map(products.map((p) => [p.slug, p]));
        state.cursor = cursor;
        state.exports++;
        opts.onUpdate?.(mirror);
      };
      const running = (async () => {
        let failures = 0;
        while (!signal.aborted) {
          try {
            if (state.cursor === undefined) await reexport();
            const page = await client.changes(state.cursor!, { wait: opts.wait ?? 25, signal });
            for (const change of page.changes) {
              if (change.op === 'upsert' && change.product) state.products.set(change.slug, change.product);
              else state.products.delete(change.slug);
            }
            state.cursor = page.cursor;
            failures = 0;
            opts.onUpdate?.(mirror);
          } catch (err) {
            if (signal.aborted) return;
            if (err instanceof CatalogApiError && err.code === 'CURSOR_EXPIRED') {
              state.cursor = undefined;
              continue;
            }
            opts.onError?.(err);
            failures++;
            await sleep(Math.min(30_000, 500 * 2 ** failures) * (0.5 + Math.random()), signal).catch(() => undefined);
          }
        }
      })();
      return mirror;
    },
  };
  return client;
}
