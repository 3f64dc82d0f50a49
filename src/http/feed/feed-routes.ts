import { Readable, pipeline } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Budgets } from '../../budgets/budgets.ts';
import type { Config } from '../../config/config.ts';
import type { ChangeFeed } from '../../read/change-feed.ts';
import { exportEtag, formatCursor } from '../../read/feed-cursor.ts';
import { parseChangesParams, parseNoParams } from '../../read/params.ts';
import { ifNoneMatchMatches, NO_STORE } from '../caching.ts';
import { keyOfRequest } from '../budget-hook.ts';
import { compressorFor, ndjsonStream, negotiateCoding } from './export-stream.ts';
import { createHeldRequests, type HeldHolder } from './held-requests.ts';
import type { Metrics } from '../metrics.ts';

/**
 * GET /export and GET /changes under /api/v1 (docs/api.md: "Export and change feed"), registered
 * inside the REST scope so CORS, the rate limit and the error object are the same as on every
 * other endpoint. The export spends from its own budget (an answer is the whole catalog), the
 * feed from its own (a consumer following it must keep its budget for other calls); a long
 * poll counts once, when it arrives. Long polls and exports held open at once are capped per
 * address (per key for a keyed request) and in the process (held-requests.ts, docs/connections.md).
 */
export function registerFeedRoutes(api: FastifyInstance, deps: { feed: ChangeFeed; config: Config; budgets: Budgets; metrics: Metrics }): void {
  const { feed } = deps;
  // A copy up to five minutes old is still exact once followed from its own cursor, so the
  // export may be kept as long as the spec lets an edge keep anything (and browsers alike);
  // one fetched with a consumer key only by its client (caching.ts: keyedCacheControlFor).
  const exportMaxAge = Math.max(0, Math.min(300, Math.floor(deps.config.cache.maxAgeSeconds)));
  const exportCacheControl = `public, max-age=${exportMaxAge}`;
  const keyedExportCacheControl = `private, max-age=${exportMaxAge}`;
  const longPolls = createHeldRequests('long polls', deps.config.connections.longPolls);
  const exports = createHeldRequests('exports', deps.config.connections.exports);
  deps.metrics.watchHeld('long polls', longPolls);
  deps.metrics.watchHeld('exports', exports);
  const holderOf = (request: FastifyRequest): HeldHolder => {
    const key = keyOfRequest(request);
    return key ? { kind: 'key', id: key.id } : { kind: 'address', id: request.clientNetwork };
  };

  api.get('/export', { config: { operationId: 'exportProducts', rateLimitBucket: 'export' } }, async (request, reply) => {
    parseNoParams(request.query);
    const snapshot = feed.exportSnapshot();
    const coding = negotiateCoding(request.headers['accept-encoding']);
    reply
      .header('etag', exportEtag(snapshot.head, coding))
      .header('cache-control', keyOfRequest(request) ? keyedExportCacheControl : exportCacheControl)
      .header('vary', 'Accept-Encoding, Authorization')
      .header('catalog-cursor', formatCursor(snapshot.head));
    // Each coding has its own tag, and any of them names this same catalog.
    const inm = request.headers['if-none-match'];
    if ((['identity', 'gzip', 'br'] as const).some((c) => ifNoneMatchMatches(inm, exportEtag(snapshot.head, c)))) {
      return reply.code(304).send();
    }
    reply.type('application/x-ndjson');
    if (coding !== 'identity') reply.header('content-encoding', coding);
    // HEAD: the headers alone, without producing (or compressing) the catalog to throw it away.
    if (request.method === 'HEAD') return reply.send(Readable.from([]));
    // Held until the answer is sent or the client goes (a slow reader keeps its place).
    const place = exports.take(holderOf(request));
    if (!place.ok) throw place.error;
    reply.raw.once('close', place.release);
    const body = ndjsonStream(snapshot.docs);
    const compressor = compressorFor(coding);
    if (!compressor) return reply.send(body);
    // A client that goes away destroys the compressor, and the pipeline the source with it.
    pipeline(body, compressor, (err) => {
      if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') request.log.warn({ err }, 'export stream failed');
    });
    return reply.send(compressor);
  });

  // Long polls end at once on shutdown, with what there is, rather than hold the close up.
  const closing = new AbortController();
  const polls = new Set<Promise<unknown>>();
  api.addHook('preClose', async () => {
    closing.abort();
    await Promise.allSettled([...polls]);
  });

  api.get('/changes', { config: { operationId: 'listChanges', rateLimitBucket: 'changes' } }, async (request, reply) => {
    const query = parseChangesParams(request.query);
    const place = query.wait > 0 ? longPolls.take(holderOf(request)) : undefined;
    if (place && !place.ok) throw place.error;
    const gone = new AbortController();
    const onClose = () => gone.abort();
    if (query.wait > 0) {
      // Held open longer than the server's idle timeout (30 s) allows an ordinary request. (A
      // request injected in a test has no real socket.)
      request.raw.socket?.setTimeout?.((query.wait + 15) * 1000);
      reply.raw.once('close', onClose);
    }
    // A long poll with a key that is revoked (or stops) meanwhile ends at once, refused: its key
    // is checked again (nothing spent, no guess counted).
    const key = keyOfRequest(request);
    const keyAgain = () => deps.budgets.decide(undefined, request.clientNetwork, request.headers.authorization);
    const stopWatching = key && query.wait > 0 ? deps.budgets.keys.onChange(() => keyAgain().allowed || gone.abort()) : undefined;
    const answering = feed.changes(query, AbortSignal.any([gone.signal, closing.signal]));
    polls.add(answering);
    try {
      const answer = await answering;
      const again = key ? keyAgain() : undefined;
      if (again && !again.allowed) throw again.refusal;
      // Answered because the server is closing: the connection must not be kept for another request.
      if (closing.signal.aborted) reply.header('connection', 'close');
      return reply.header('cache-control', NO_STORE).type('application/json; charset=utf-8').send(answer.body);
    } finally {
      stopWatching?.();
      place?.release();
      polls.delete(answering);
      reply.raw.off('close', onClose);
    }
  });
}
