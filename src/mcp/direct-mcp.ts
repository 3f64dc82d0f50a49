import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Caller } from '../auth/caller.ts';
import { isKeyBearer } from '../auth/consumer-keys/consumer-keys.ts';
import type { Budgets } from '../budgets/budgets.ts';
import { pushRateLimitHeaders } from '../budgets/rate-limit-headers.ts';
import type { BudgetOwner, Counted } from '../budgets/verdict.ts';
import type { DirectReadsDeps } from '../http/direct-reads.ts';
import { requestIdFor } from '../http/infrastructure.ts';
import type { RequestObserver } from '../http/metrics.ts';
import type { McpCaller } from './call-context.ts';
import { headersGivenOnce, transportAccepts, type DirectAnswer, type DirectReadCall, type DirectReadCalls } from './direct-read-calls.ts';
import { MCP_BODY, MCP_KEY_VERDICT, MCP_PATH, type McpBodyRequest } from './mcp-path.ts';
import { traceToolCall } from './tool-tracing.ts';

/**
 * The MCP calls asked for most, answered beneath Fastify as the REST reads are
 * (src/http/direct-reads.ts): a POST to /api/mcp that is one plain `tools/call` of a read tool
 * or `resources/read` of a product or category, in either protocol era, from a client with no
 * credential or a valid consumer key, without an Origin (a server-side
 * client; browsers' CORS and origin checks are Fastify's). Such a request is read and answered
 * here with the very answer the Fastify route gives it (route.ts: answerDirect), its headers in
 * the same order, the same budget spent, the same request metrics.
 *
 * Anything else goes to Fastify: before its body is read when its headers already say so (another
 * method, path or spelling, an Origin, an access token, a body sent in chunks or larger than
 * MAX_BODY, headers the transport would refuse, access logging at debug, a service closing);
 * after, when the body is not such a call (initialize, tools/list, a maker tool, anything the
 * fast path is not certain about, or a read call whose consumer key the budgets refuse), carrying
 * the body it was sent (MCP_BODY) for the route to read instead of the request (route.ts: its
 * preParsing hook), and a key's refusal (MCP_KEY_VERDICT) for the route to send.
 * test/int/mcp/direct-mcp.test.ts sends the same requests to a service with and without this
 * path and compares the answers.
 */
export interface McpDirectDeps {
  direct: DirectReadCalls;
  /** Whose budget a call spends: its consumer key's, or its address's. */
  budgets: Budgets;
  /** Request metrics of /api/mcp by status, as the Fastify path records them. */
  observer: (status: number) => RequestObserver;
  clients: DirectReadsDeps['clients'];
  accessLogging: () => boolean;
  closing: () => boolean;
  /** The process logger: a failing tool is logged with the request's id. */
  logger: Logger | undefined;
}

export type McpDirect = (req: IncomingMessage, res: ServerResponse, fallback: (req: IncomingMessage, res: ServerResponse) => void) => boolean;

/** Larger bodies go to Fastify (its limit is 1 MB); a read tool's call is a few hundred bytes. */
const MAX_BODY = 64 * 1024;
/** A body naming these may be prototype poisoning: Fastify's parser decides about it. */
const POISON = /__proto__|constructor/;
const ANONYMOUS: Caller = { kind: 'anonymous' };

/** The caller of one request of this path (route.ts has the Fastify path's). */
class DirectCaller implements McpCaller {
  decision: Counted | undefined;
  readonly era: McpCaller['era'];
  readonly #logger: Logger | undefined;
  readonly #id: string;

  constructor(
    readonly auth: Caller,
    readonly network: string,
    readonly owner: BudgetOwner | undefined,
    era: McpCaller['era'],
    logger: Logger | undefined,
    id: string,
  ) {
    this.era = era;
    this.#logger = logger;
    this.#id = id;
  }

  onRateDecision(verdict: Counted): void {
    this.decision = verdict;
  }

  /** Made only when a tool fails: the request's child logger, as Fastify's would be. */
  get log(): McpCaller['log'] {
    return this.#logger?.child({ reqId: this.#id }) ?? { warn: () => undefined, error: () => undefined };
  }
}

export function createMcpDirect(deps: McpDirectDeps): McpDirect {
  const { direct, budgets, accessLogging, closing } = deps;
  const clients = deps.clients;
  const observers = new Map<number, RequestObserver>();
  const observe = (status: number, started: number) => {
    let observer = observers.get(status);
    if (!observer) observers.set(status, (observer = deps.observer(status)));
    observer((performance.now() - started) / 1000);
  };

  function write(res: ServerResponse, id: string, caller: DirectCaller, answer: DirectAnswer, started: number): void {
    const head: Array<string | number> = ['x-request-id', id, 'x-content-type-options', 'nosniff'];
    if (caller.decision) pushRateLimitHeaders(head as string[], caller.decision);
    head.push('content-type', 'application/json', 'content-length', answer.head.length + answer.tail.length);
    // One write to the socket for the headers and both pieces (route.ts: writeDirect).
    res.cork();
    res.writeHead(200, head as string[]);
    res.write(answer.head);
    res.end(answer.tail);
    res.uncork();
    observe(200, started);
  }

  /** The body read: answered here when it is a read tool's plain call, else handed to Fastify with it. */
  function handle(req: McpBodyRequest, res: ServerResponse, fallback: (req: IncomingMessage, res: ServerResponse) => void, body: Buffer, started: number): void {
    let call: DirectReadCall | undefined;
    let message: unknown;
    if (!closing() && !res.destroyed) {
      const text = body.toString('utf8');
      if (!POISON.test(text)) {
        try {
          message = JSON.parse(text);
          call = direct.match(message, req.rawHeaders, req.headers);
        } catch {
          // Not JSON: Fastify answers the parse error.
        }
      }
    }
    if (!call) {
      req[MCP_BODY] = body;
      fallback(req, res);
      return;
    }
    const address = clients.of(req).network;
    let owner: BudgetOwner | undefined;
    const authorization = req.headers.authorization;
    if (authorization !== undefined) {
      // Whose budget the call spends: its consumer key's; a key refused is the route's to answer,
      // with this verdict (its guess counted here, once).
      const verdict = budgets.decide(undefined, address, authorization, req.rawHeaders);
      if (verdict instanceof Promise || !verdict.allowed) {
        req[MCP_BODY] = body;
        req[MCP_KEY_VERDICT] = verdict;
        fallback(req, res);
        return;
      }
      owner = verdict.owner;
    }
    traceToolCall(res, message);
    const id = requestIdFor(req);
    const caller = new DirectCaller(ANONYMOUS, address, owner, call.era, deps.logger, id);
    const answer = direct.answerNow(call, caller);
    if (answer instanceof Promise) {
      answer.then(
        (a) => write(res, id, caller, a, started),
        () => res.destroy(),
      );
    } else write(res, id, caller, answer, started);
  }

  return (req, res, fallback) => {
    if (req.method !== 'POST' || req.url !== MCP_PATH || closing() || accessLogging()) return false;
    const headers = req.headers;
    if (headers.origin !== undefined || headers['transfer-encoding'] !== undefined) return false;
    const length = Number(headers['content-length']);
    if (!(length > 0 && length <= MAX_BODY)) return false;
    if (!transportAccepts(headers) || !headersGivenOnce(req.rawHeaders)) return false;
    // A consumer key's budgets (decided once the body is read); an access token (a maker's sign-in) is Fastify's.
    if (headers.authorization !== undefined && !isKeyBearer(headers.authorization)) return false;
    const started = performance.now();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    req.once('end', () => handle(req, res, fallback, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), started));
    // A client gone before its body arrived: nothing to answer.
    req.once('error', () => res.destroy());
    return true;
  };
}
