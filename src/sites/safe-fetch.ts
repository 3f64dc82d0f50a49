import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { TransformStream, type ReadableStream } from 'node:stream/web';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type * as Undici from 'undici';
import type { Agent, Headers, HeadersInit, RequestInit, Response } from 'undici';
import {
  BlockedAddressError,
  createGuardedAgent,
  HostLookupError,
  loadUndici,
  refuseLiteralHost,
  type GuardedAgentOptions,
} from './guarded-agent.ts';
import { SiteFetchError } from './site-fetch-error.ts';

/**
 * The guarded Agent a fetcher uses, made on its first fetch (undici is loaded then), once; a
 * fetcher closed before any fetch has nothing to close.
 */
function lazyAgent(make: () => Promise<Agent>): { get: () => Promise<Agent>; made: () => Promise<Agent> | undefined } {
  let agent: Promise<Agent> | undefined;
  return { get: () => (agent ??= make()), made: () => agent };
}

/**
 * Fetching makers' websites without letting a URL reach inside our own network.
 *
 * Rules (every one enforced here or in guarded-agent.ts, and tested):
 * - only http: and https: URLs, with no user name or password;
 * - every connection goes through the guarded Agent: the host's addresses are all judged by the
 *   address policy at connect time, IP-literal hosts before any socket exists, and the connected
 *   socket's remote address once more;
 * - redirects are followed by hand, at most 5, and each target is checked like the first URL
 *   (scheme, credentials, address);
 * - one deadline (10 s) covers DNS, connecting, every redirect and reading the body;
 * - at most 2 MiB of body is read (after content decoding); a Content-Length over the limit is
 *   refused before reading, a longer body is cut off and reported as too_large;
 * - a page must be text/html or application/xhtml+xml, an image image/*.
 * Failures are SiteFetchError with a stable code and a message a maker can read.
 *
 * Two entry points: `createSiteFetcher` (GET a page or an image, redirects followed, body read
 * and limited) and `createGuardedFetch` (a WHATWG `fetch` for libraries that take one: single
 * request, redirects returned rather than followed, body limited as it is read).
 */

export const SITE_FETCH_LIMITS = {
  timeoutMs: 10_000,
  maxBodyBytes: 2 * 1024 * 1024,
  maxRedirects: 5,
} as const;

type ContentKind = 'html' | 'image';

export interface SiteFetcherOptions extends GuardedAgentOptions {
  /** One deadline for the whole fetch: DNS, redirects and body. Default 10 s. */
  timeoutMs?: number;
  /** Most body bytes read. Default 2 MiB. */
  maxBodyBytes?: number;
  /** Most redirects followed. Default 5. */
  maxRedirects?: number;
  userAgent?: string;
}

interface FetchOptions {
  /** What the answer must be. Default html. */
  kind?: ContentKind;
  /** A lower body limit for this fetch (a favicon needs far less than a page). */
  maxBytes?: number;
  /** Lets the caller give up early; the caller's own abort reason is rethrown as is. */
  signal?: AbortSignal;
}

interface FetchedResource {
  /** The URL that answered, after redirects (without fragment). */
  url: string;
  status: number;
  /** Media type, lowercase, without parameters. */
  contentType: string;
  /** The charset parameter of Content-Type, lowercase, when given. */
  charset: string | undefined;
  /** The body, content encoding (gzip, br, deflate) already undone. */
  body: Buffer;
}

export interface SiteFetcher {
  fetch(url: string, opts?: FetchOptions): Promise<FetchedResource>;
  /** Closes the connections kept alive. */
  close(): Promise<void>;
}

const DEFAULT_USER_AGENT = 'catalog-site-check/1.0';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const ACCEPT: Record<ContentKind, string> = {
  html: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1',
  image: 'image/*;q=0.9,*/*;q=0.1',
};
const TLS_ERROR = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

function shown(url: string): string {
  return url.length > 120 ? `${url.slice(0, 119)}…` : url;
}

function megabytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return mb >= 1 ? `${Number(mb.toFixed(1))} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

function seconds(ms: number): string {
  const s = ms / 1000;
  return `${Number(s.toFixed(1))} second${s === 1 ? '' : 's'}`;
}

/** Parses and checks a URL to fetch: http(s), no credentials. The fragment is dropped. */
function checkFetchUrl(input: string | URL): URL {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    throw new SiteFetchError('invalid_url', String(input), `“${shown(String(input))}” is not a web address.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SiteFetchError('invalid_url', url.href, `“${shown(url.href)}” is not a web address: only http:// and https:// addresses can be opened.`);
  }
  if (url.username || url.password) {
    throw new SiteFetchError('invalid_url', url.href, `“${shown(url.href)}” contains a user name or password; give the address without them.`);
  }
  url.hash = '';
  return url;
}

function blocked(url: string, err: BlockedAddressError): SiteFetchError {
  return new SiteFetchError(
    'blocked_address',
    url,
    err.host === err.address
      ? `We do not connect to ${err.host}: it is ${err.reason}, not a public website.`
      : `We do not connect to ${err.host}: its address is ${err.reason}, not a public website.`,
    { cause: err },
  );
}

function timeoutError(url: string, timeoutMs: number, cause?: unknown): SiteFetchError {
  return new SiteFetchError('timeout', url, `${shown(url)} did not answer completely within ${seconds(timeoutMs)}.`, { cause });
}

function tooLarge(url: string, limit: number, cause?: unknown): SiteFetchError {
  return new SiteFetchError('too_large', url, `${shown(url)} is larger than ${megabytes(limit)}, the most we read.`, { cause });
}

/** Every error in a chain of causes (and inside AggregateErrors from multi-address connects). */
function* causes(err: unknown, depth = 0): Generator<unknown> {
  if (err === undefined || err === null || depth > 8) return;
  yield err;
  if (err instanceof AggregateError) for (const e of err.errors) yield* causes(e, depth + 1);
  if (err instanceof Error) yield* causes(err.cause, depth + 1);
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/**
 * Translates what undici, Node and the guard throw into a SiteFetchError. `phase` says whether
 * response headers had arrived: a failure after that is a bad response, not a failed connection.
 */
function translate(err: unknown, url: string, phase: 'connect' | 'body', timeoutMs: number): SiteFetchError {
  const all = [...causes(err)];
  const own = all.find((e): e is SiteFetchError => e instanceof SiteFetchError);
  if (own) return own;
  const block = all.find((e): e is BlockedAddressError => e instanceof BlockedAddressError);
  if (block) return blocked(url, block);
  const host = (() => {
    try {
      return new URL(url).host;
    } catch {
      return url;
    }
  })();
  if (all.some((e) => e instanceof HostLookupError || ['ENOTFOUND', 'EAI_AGAIN', 'ENODATA'].includes(codeOf(e)))) {
    return new SiteFetchError('dns_failed', url, `We could not find ${host}: the name does not resolve. Check the address and the site's DNS settings.`, { cause: err });
  }
  const codes = all.map(codeOf);
  if (codes.some((c) => ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT'].includes(c))) {
    return timeoutError(url, timeoutMs, err);
  }
  if (codes.some((c) => TLS_ERROR.test(c))) {
    return new SiteFetchError('connect_failed', url, `We could not open ${host} securely: its HTTPS certificate was not accepted.`, { cause: err });
  }
  if (phase === 'body' || codes.some((c) => c.startsWith('Z_') || c === 'UND_ERR_SOCKET' || c === 'HPE_INVALID_CONSTANT')) {
    return new SiteFetchError('bad_response', url, `${shown(url)} sent an answer we could not read completely.`, { cause: err });
  }
  return new SiteFetchError('connect_failed', url, `We could not connect to ${host}. Check that the site is online.`, { cause: err });
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function parseContentType(value: string | undefined | null): { type: string; charset: string | undefined } {
  if (!value) return { type: '', charset: undefined };
  const [type = '', ...params] = value.split(';');
  let charset: string | undefined;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq > 0 && p.slice(0, eq).trim().toLowerCase() === 'charset') {
      charset = p.slice(eq + 1).trim().replace(/^"|"$/g, '').toLowerCase() || undefined;
    }
  }
  return { type: type.trim().toLowerCase(), charset };
}

function decoded(body: Readable, encoding: string | undefined, url: string): AsyncIterable<Buffer> {
  const coding = (encoding ?? '').trim().toLowerCase();
  const decoder =
    coding === 'gzip' || coding === 'x-gzip'
      ? createGunzip()
      : coding === 'br'
        ? createBrotliDecompress()
        : coding === 'deflate'
          ? createInflate()
          : undefined;
  if (decoder) return pipeline(body, decoder, () => undefined);
  if (coding === '' || coding === 'identity') return body;
  body.destroy();
  throw new SiteFetchError('bad_response', url, `${shown(url)} sent its answer in an encoding we cannot read (${coding}).`);
}

async function readCapped(stream: AsyncIterable<Buffer>, limit: number, url: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    // leaving the loop destroys the stream, and with it the connection
    if (size > limit) throw tooLarge(url, limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function checkKind(kind: ContentKind, type: string, url: string): void {
  const ok = kind === 'html' ? HTML_TYPES.has(type) : type.startsWith('image/');
  if (ok) return;
  const got = type ? `it sent ${type}` : 'it sent no content type';
  if (kind === 'html') throw new SiteFetchError('not_html', url, `${shown(url)} is not a web page: ${got} instead of HTML.`);
  throw new SiteFetchError('not_image', url, `${shown(url)} is not an image: ${got}.`);
}

/** Where a redirect leads, checked like any URL we fetch. */
function redirectTarget(location: string, from: URL): URL {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new SiteFetchError('bad_redirect', from.href, `${shown(from.href)} redirected to “${shown(location)}”, which is not a web address.`);
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    throw new SiteFetchError('bad_redirect', from.href, `${shown(from.href)} redirected to “${shown(next.href)}”; only http:// and https:// addresses are followed.`);
  }
  if (next.username || next.password) {
    throw new SiteFetchError('bad_redirect', from.href, `${shown(from.href)} redirected to an address with a user name or password, which we do not follow.`);
  }
  next.hash = '';
  return next;
}

export function createSiteFetcher(opts: SiteFetcherOptions = {}): SiteFetcher {
  const timeoutMs = opts.timeoutMs ?? SITE_FETCH_LIMITS.timeoutMs;
  const maxBodyBytes = opts.maxBodyBytes ?? SITE_FETCH_LIMITS.maxBodyBytes;
  const maxRedirects = opts.maxRedirects ?? SITE_FETCH_LIMITS.maxRedirects;
  const allowLoopback = opts.allowLoopback ?? false;
  const agent = lazyAgent(() => createGuardedAgent({ ...opts, connectTimeoutMs: opts.connectTimeoutMs ?? timeoutMs }));

  async function fetchOnce(input: string, fo: FetchOptions): Promise<FetchedResource> {
    const kind = fo.kind ?? 'html';
    const limit = Math.min(fo.maxBytes ?? maxBodyBytes, maxBodyBytes);
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    const signal = fo.signal ? AbortSignal.any([fo.signal, deadline.signal]) : deadline.signal;
    let current = checkFetchUrl(input);
    let phase: 'connect' | 'body' = 'connect';
    try {
      for (let redirects = 0; ; redirects++) {
        const literal = refuseLiteralHost(current.hostname, allowLoopback);
        if (literal) throw blocked(current.href, literal);
        phase = 'connect';
        const [{ request }, dispatcher] = await Promise.all([loadUndici(), agent.get()]);
        const res = await request(current, {
          dispatcher,
          method: 'GET',
          signal,
          headers: {
            'user-agent': opts.userAgent ?? DEFAULT_USER_AGENT,
            accept: ACCEPT[kind],
            'accept-encoding': 'gzip, br',
          },
        });
        phase = 'body';
        // destroying an undici body emits 'error'; every failure is reported through the throw below
        res.body.on('error', () => undefined);
        const location = header(res.headers, 'location');
        if (REDIRECT_STATUSES.has(res.statusCode) && location !== undefined) {
          res.body.destroy();
          if (redirects >= maxRedirects) {
            throw new SiteFetchError('too_many_redirects', current.href, `${shown(input)} redirected more than ${maxRedirects} times; we stopped following.`);
          }
          current = redirectTarget(location, current);
          continue;
        }
        if (res.statusCode < 200 || res.statusCode > 299) {
          res.body.destroy();
          throw new SiteFetchError('http_status', current.href, `${shown(current.href)} answered with HTTP status ${res.statusCode} instead of the ${kind === 'html' ? 'page' : 'image'}.`, {
            status: res.statusCode,
          });
        }
        const { type, charset } = parseContentType(header(res.headers, 'content-type'));
        try {
          checkKind(kind, type, current.href);
          const length = Number(header(res.headers, 'content-length'));
          if (Number.isFinite(length) && length > limit) throw tooLarge(current.href, limit);
        } catch (err) {
          res.body.destroy();
          throw err;
        }
        const body = await readCapped(decoded(res.body, header(res.headers, 'content-encoding'), current.href), limit, current.href);
        return { url: current.href, status: res.statusCode, contentType: type, charset, body };
      }
    } catch (err) {
      if (fo.signal?.aborted) throw fo.signal.reason;
      if (deadline.signal.aborted && !(err instanceof SiteFetchError && err.code === 'too_large')) throw timeoutError(current.href, timeoutMs);
      throw translate(err, current.href, phase, timeoutMs);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    fetch: (url, fo = {}) => fetchOnce(url, fo),
    close: async () => {
      await (await agent.made())?.close();
    },
  };
}

/* ------------------------------------------------------------------------------------------ */

export interface GuardedFetchOptions extends GuardedAgentOptions {
  /** Deadline for the request and reading its body. Default 10 s. */
  timeoutMs?: number;
  /** Most body bytes a reader of the returned Response gets. Default 2 MiB. */
  maxBodyBytes?: number;
  /** Use this Agent rather than a new guarded one (it must be guarded). */
  agent?: Agent;
}

/** Headers as any fetch implementation spells them, Node's global Headers included. */
type HeadersLike = HeadersInit | { forEach(callback: (value: string, name: string) => void): void };

/** RequestInit as libraries pass it, possibly with a dispatcher of their own, which is ignored. */
type GuardedFetchInit = Omit<RequestInit, 'dispatcher' | 'headers'> & { dispatcher?: unknown; headers?: HeadersLike };
export type GuardedFetch = (input: string | URL, init?: GuardedFetchInit) => Promise<Response>;

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** Copies headers from another fetch implementation's Headers (or a Map) into undici's. */
function undiciHeaders(Headers: typeof Undici.Headers, headers: HeadersLike | undefined): Headers {
  if (headers === undefined || headers instanceof Headers || Array.isArray(headers)) return new Headers(headers);
  const forEach = (headers as { forEach?: unknown }).forEach;
  if (typeof forEach !== 'function') return new Headers(headers as HeadersInit);
  const copy = new Headers();
  (headers as { forEach(callback: (value: string, name: string) => void): void }).forEach((value, name) => copy.append(name, value));
  return copy;
}

/**
 * A WHATWG-compatible fetch through the guarded Agent, for libraries with a `fetch` hook (the
 * OAuth server fetches Client ID Metadata Documents with it). One request: redirects are never
 * followed (`redirect: 'manual'` is forced; a 3xx comes back as is). Any `dispatcher` in `init`
 * is replaced by the guarded Agent; `signal` is kept and combined with the deadline. The
 * returned Response's body errors with too_large once more than `maxBodyBytes` are read, and a
 * Content-Length over the limit is refused before the body is read at all. Failures are
 * SiteFetchError, except that an abort by the caller's own signal rejects with its reason.
 */
export function createGuardedFetch(opts: GuardedFetchOptions = {}): GuardedFetch {
  const timeoutMs = opts.timeoutMs ?? SITE_FETCH_LIMITS.timeoutMs;
  const maxBodyBytes = opts.maxBodyBytes ?? SITE_FETCH_LIMITS.maxBodyBytes;
  const allowLoopback = opts.allowLoopback ?? false;
  const agent = lazyAgent(async () => opts.agent ?? createGuardedAgent({ ...opts, connectTimeoutMs: opts.connectTimeoutMs ?? timeoutMs }));

  return async (input, init = {}) => {
    const url = checkFetchUrl(input);
    const literal = refuseLiteralHost(url.hostname, allowLoopback);
    if (literal) throw blocked(url.href, literal);
    const deadline = AbortSignal.timeout(timeoutMs);
    const own = init.signal ?? undefined;
    const signal = own ? AbortSignal.any([own, deadline]) : deadline;
    const { dispatcher: _theirs, headers, ...rest } = init;
    const [{ fetch: undiciFetch, Headers, Response }, dispatcher] = await Promise.all([loadUndici(), agent.get()]);
    let res: Response;
    try {
      res = await undiciFetch(url, { ...rest, headers: undiciHeaders(Headers, headers), redirect: 'manual', signal, dispatcher });
    } catch (err) {
      if (own?.aborted) throw own.reason;
      if (deadline.aborted) throw timeoutError(url.href, timeoutMs);
      throw translate(err, url.href, 'connect', timeoutMs);
    }
    const length = Number(res.headers.get('content-length'));
    if (res.headers.has('content-length') && Number.isFinite(length) && length > maxBodyBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw tooLarge(url.href, maxBodyBytes);
    }
    let size = 0;
    const limiter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > maxBodyBytes) controller.error(tooLarge(url.href, maxBodyBytes));
        else controller.enqueue(chunk);
      },
    });
    const body = res.body && !NULL_BODY_STATUSES.has(res.status) ? (res.body as ReadableStream<Uint8Array>).pipeThrough(limiter) : null;
    const limited = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    Object.defineProperty(limited, 'url', { value: res.url });
    return limited;
  };
}

/** What readBodyLimited needs of a Response (undici's or Node's global one). */
export interface ResponseWithBody {
  headers: { get(name: string): string | null };
  body: AsyncIterable<Uint8Array> | null;
  url?: string;
}

/**
 * Reads a Response's body into a Buffer, refusing (too_large) a Content-Length over the limit
 * before reading and a body that grows past it while reading. Leaving early cancels the body.
 */
export async function readBodyLimited(response: ResponseWithBody, maxBytes: number): Promise<Buffer> {
  const url = response.url ?? '';
  const declared = response.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) {
    await response.body?.[Symbol.asyncIterator]().return?.();
    throw tooLarge(url, maxBytes);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body) {
    for await (const chunk of response.body) {
      size += chunk.byteLength;
      if (size > maxBytes) throw tooLarge(url, maxBytes);
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks, size);
}
