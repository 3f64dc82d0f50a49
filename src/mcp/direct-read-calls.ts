import type { IncomingHttpHeaders } from 'node:http';
import { isJsonContentType, type CallToolResult } from '@modelcontextprotocol/server';
import { LRUCache } from 'lru-cache';
import type { Counted } from '../budgets/verdict.ts';
import { CatalogError, internalError } from '../contract/errors.ts';
import type { ReadBody, ReadService } from '../read/read-service.ts';
import type { McpCaller, McpDeps } from './call-context.ts';
import { LEGACY_VERSIONS, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, MODERN_VERSION, type Era } from './protocol.ts';
import { READ_TOOLS, runReadTool, runReadToolNow, successResult, type ReadTool } from './read-tools.ts';
import { cacheScopeOf, protocolErrorOf, readResourceNow, resourceOf } from './resources.ts';
import { errorResult } from './tool-result.ts';
import { spendNow } from './call-context.ts';

/**
 * The fast path of the read calls. A request that is one plain JSON-RPC `tools/call` of
 * search_products, list_categories or get_product, or one `resources/read` of a product or a
 * category, in either era, is answered here, without an SDK server and exchange, with the very
 * bytes the SDK would send: the same budget spent, the same checks, the same result, built by
 * the same functions the SDK's handlers call (read-tools.ts, resources.ts), which shape it for
 * the era themselves, so the SDK sends it unchanged. Anything else, and any request this module
 * is not certain about, goes to the SDK.
 *
 * What is done here once per answer rather than per call: parsing the REST body into the
 * structured result, checking it against the contract, writing the model's text, and
 * serializing the result. The serialized result is kept under the answer's strong ETag, which
 * names its bytes, while the projection does not change.
 *
 * The conditions mirror what the SDK checks before it runs a handler: Accept, Content-Type, one
 * JSON-RPC request with an integer or string id; for the modern era (2026-07-28) the
 * `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers equal to the body and a plain
 * `_meta` envelope (protocol version, client capabilities, client info: nothing else, so no
 * progress token, log level or trace context); for the legacy era no envelope and a supported
 * legacy version or none. test/int/mcp/mcp-answers.test.ts holds the answers of both paths to
 * the bytes recorded from the SDK alone, and test/int/mcp/direct-mcp.test.ts compares a service
 * with and without this path.
 */
export type DirectReadCall =
  | { readonly kind: 'tool'; readonly era: Era; readonly id: string | number; readonly tool: ReadTool; readonly args: Record<string, unknown> }
  | { readonly kind: 'resource'; readonly era: Era; readonly id: string | number; readonly uri: string; readonly target: { kind: 'product' | 'category'; slug: string } };

/**
 * A JSON-RPC response body in two pieces, written one after the other: everything before the
 * id (the result, kept with the answer) and the id with what follows it. No copy of the result
 * is made per request.
 */
export interface DirectAnswer {
  readonly head: Buffer;
  readonly tail: Buffer;
}

export interface DirectReadCalls {
  /** The call, when the SDK would answer this request with nothing but the handler's result. */
  match(body: unknown, rawHeaders: readonly string[], headers: IncomingHttpHeaders): DirectReadCall | undefined;
  /** The JSON-RPC response body for the call, the budget spent as the handler spends it. */
  answer(call: DirectReadCall, caller: McpCaller): Promise<DirectAnswer>;
  /** The same, at once when the budget is decided at once and the answer at hand (runReadToolNow). */
  answerNow(call: DirectReadCall, caller: McpCaller): DirectAnswer | Promise<DirectAnswer>;
}

const TOOLS = new Map(READ_TOOLS.map((tool) => [tool.name, tool]));

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every key of `value` is one of `allowed`. */
function keysWithin(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key in value) if (!allowed.includes(key)) return false;
  return true;
}

const MESSAGE_KEYS = ['jsonrpc', 'id', 'method', 'params'] as const;
const TOOL_PARAMS = ['name', 'arguments'] as const;
const TOOL_PARAMS_MODERN = ['name', 'arguments', '_meta'] as const;
const RESOURCE_PARAMS = ['uri'] as const;
const RESOURCE_PARAMS_MODERN = ['uri', '_meta'] as const;
const ENVELOPE_KEYS = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES, META_CLIENT_INFO] as const;
const CLIENT_INFO_KEYS = ['name', 'version', 'title'] as const;
/** Request headers the SDK reads before a handler runs; given twice, the SDK is asked. */
const CHECKED_HEADERS = new Set(['accept', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name']);
/** A slug the SDK's URI template matches as it is: unreserved characters only. */
const PLAIN_SLUG = /^[A-Za-z0-9._~-]{1,200}$/;

export function headersGivenOnce(rawHeaders: readonly string[]): boolean {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!CHECKED_HEADERS.has(name)) continue;
    if (seen.has(name)) return false;
    seen.add(name);
  }
  return true;
}

/** What the Streamable HTTP transport accepts before it hands a request to the server, in either era. */
export function transportAccepts(headers: IncomingHttpHeaders): boolean {
  const accept = headers.accept;
  if (typeof accept !== 'string' || !accept.includes('application/json') || !accept.includes('text/event-stream')) return false;
  if (!isJsonContentType(headers['content-type'])) return false;
  const version = headers['mcp-protocol-version'];
  return version === undefined || version === MODERN_VERSION || (typeof version === 'string' && LEGACY_VERSIONS.includes(version));
}

/** A JSON-RPC id the SDK's schema accepts: a string or a safe integer. */
function isRequestId(id: unknown): id is string | number {
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
}

/** A modern envelope the SDK accepts as it is, with nothing in it this path does not know. */
function plainEnvelope(meta: unknown): boolean {
  if (!isPlainObject(meta) || !keysWithin(meta, ENVELOPE_KEYS)) return false;
  if (meta[META_PROTOCOL_VERSION] !== MODERN_VERSION) return false;
  const capabilities = meta[META_CLIENT_CAPABILITIES];
  if (!isPlainObject(capabilities)) return false;
  for (const key in capabilities) if (!isPlainObject(capabilities[key])) return false;
  const info = meta[META_CLIENT_INFO];
  if (info === undefined) return true;
  return isPlainObject(info) && keysWithin(info, CLIENT_INFO_KEYS) && typeof info.name === 'string' && typeof info.version === 'string' && (info.title === undefined || typeof info.title === 'string');
}

/** The era of a request whose headers and envelope this path is sure of, or undefined. */
function eraOf(method: string, name: string, params: Record<string, unknown>, headers: IncomingHttpHeaders): Era | undefined {
  const version = headers['mcp-protocol-version'];
  if (params._meta === undefined) {
    // A legacy request: no envelope and none of the modern headers.
    if (version === MODERN_VERSION || headers['mcp-method'] !== undefined || headers['mcp-name'] !== undefined) return undefined;
    return 'legacy';
  }
  if (version !== MODERN_VERSION || headers['mcp-method'] !== method || headers['mcp-name'] !== name) return undefined;
  return plainEnvelope(params._meta) ? 'modern' : undefined;
}

/** Everything of a result response before the id: `{"result":…,"jsonrpc":"2.0","id":`. */
function resultHead(resultJson: string): Buffer {
  return Buffer.from(`{"result":${resultJson},"jsonrpc":"2.0","id":`);
}

const ERROR_HEAD = Buffer.from('{"jsonrpc":"2.0","id":');

export interface DirectReadCallsOptions {
  /** Bytes of serialized results kept; 0 serializes every call afresh. */
  cacheMaxBytes: number;
  /** True for a tool whose operation (or one of its parameters) is deprecated: its calls are the SDK path's, which the route marks. */
  deprecatedTool?: (name: string) => boolean;
}

export function createDirectReadCalls(deps: McpDeps, opts: DirectReadCallsOptions): DirectReadCalls {
  const handedOver = new Set([...TOOLS.keys()].filter((name) => opts.deprecatedTool?.(name) === true));
  const read: ReadService = deps.read;
  const cache =
    opts.cacheMaxBytes > 0
      ? new LRUCache<string, Buffer>({ maxSize: opts.cacheMaxBytes, sizeCalculation: (head, key) => head.length + key.length + 64 })
      : undefined;
  // Answers of an older projection are never asked for again: dropped when the version moves.
  let cachedVersion = read.version;

  /** The head of a result, kept under `key` (which names its bytes) while the projection stays. */
  function kept(key: string, build: () => CallToolResult | object): Buffer {
    if (!cache) return resultHead(JSON.stringify(build()));
    if (read.version !== cachedVersion) {
      cache.clear();
      cachedVersion = read.version;
    }
    let head = cache.get(key);
    if (!head) {
      head = resultHead(JSON.stringify(build()));
      cache.set(key, head);
    }
    return head;
  }

  function toolAnswer(call: Extract<DirectReadCall, { kind: 'tool' }>, outcome: ReadBody | CatalogError, caller: McpCaller): DirectAnswer {
    const tail = Buffer.from(`${JSON.stringify(call.id)}}`);
    if (outcome instanceof CatalogError) return { head: resultHead(JSON.stringify(errorResult(outcome, call.era))), tail };
    // A strong ETag names the answer's bytes, so a tool's result for it is always the same.
    const head = kept(`${call.tool.name}\u0000${call.era}\u0000${outcome.etag}`, () => successResult(call.tool, outcome.body, call.era, caller.log));
    return { head, tail };
  }

  function resourceAnswer(call: Extract<DirectReadCall, { kind: 'resource' }>, caller: McpCaller): DirectAnswer {
    let head: Buffer;
    try {
      const scope = call.era === 'modern' ? cacheScopeOf(caller) : '';
      const version = call.target.kind === 'product' ? read.productBytes(call.target.slug)?.etag : read.categories().etag;
      head =
        version === undefined
          ? resultHead(JSON.stringify(readResourceNow(deps, caller, call.uri, call.target)))
          : kept(`${call.uri}\u0000${call.era}\u0000${scope}\u0000${version}`, () => readResourceNow(deps, caller, call.uri, call.target));
    } catch (err) {
      return resourceError(call, err instanceof CatalogError ? err : internalError(err), caller);
    }
    return { head, tail: Buffer.from(`${JSON.stringify(call.id)}}`) };
  }

  /** A JSON-RPC error as the SDK writes it: `{"jsonrpc":"2.0","id":…,"error":{…}}`. */
  function resourceError(call: DirectReadCall, err: CatalogError, caller: McpCaller): DirectAnswer {
    if (err.status >= 500) caller.log.error({ err }, 'MCP resource read failed');
    const failure = protocolErrorOf(err);
    const error = { code: failure.code, message: failure.message, data: failure.data };
    return { head: ERROR_HEAD, tail: Buffer.from(`${JSON.stringify(call.id)},"error":${JSON.stringify(error)}}`) };
  }

  /** A resource read whose budget ("other", as get_product's) is decided: its refusal, or its contents. */
  function resourceUnder(call: Extract<DirectReadCall, { kind: 'resource' }>, caller: McpCaller, verdict: Counted | undefined): DirectAnswer {
    if (verdict !== undefined && !verdict.allowed) return resourceError(call, verdict.refusal, caller);
    return resourceAnswer(call, caller);
  }

  return {
    match(body, rawHeaders, headers) {
      if (!isPlainObject(body) || !keysWithin(body, MESSAGE_KEYS)) return undefined;
      const { jsonrpc, id, method, params } = body;
      if (jsonrpc !== '2.0' || !isRequestId(id) || !isPlainObject(params)) return undefined;
      if (method === 'tools/call') {
        const tool = typeof params.name === 'string' ? TOOLS.get(params.name) : undefined;
        if (!tool || handedOver.has(tool.name)) return undefined;
        const era = eraOf(method, tool.name, params, headers);
        if (!era || !keysWithin(params, era === 'modern' ? TOOL_PARAMS_MODERN : TOOL_PARAMS)) return undefined;
        const args = params.arguments === undefined ? {} : params.arguments;
        if (!isPlainObject(args)) return undefined;
        if (!transportAccepts(headers) || !headersGivenOnce(rawHeaders)) return undefined;
        return { kind: 'tool', era, id, tool, args };
      }
      if (method === 'resources/read') {
        const uri = params.uri;
        if (typeof uri !== 'string') return undefined;
        const target = resourceOf(uri);
        if (!target || !PLAIN_SLUG.test(target.slug) || target.slug !== uri.slice(uri.lastIndexOf('/') + 1)) return undefined;
        const era = eraOf(method, uri, params, headers);
        if (!era || !keysWithin(params, era === 'modern' ? RESOURCE_PARAMS_MODERN : RESOURCE_PARAMS)) return undefined;
        if (!transportAccepts(headers) || !headersGivenOnce(rawHeaders)) return undefined;
        return { kind: 'resource', era, id, uri, target };
      }
      return undefined;
    },

    async answer(call, caller) {
      if (call.kind === 'resource') return resourceUnder(call, caller, await spendNow(deps.budgets, caller, 'other'));
      return toolAnswer(call, await runReadTool(call.tool, deps, caller, call.args), caller);
    },

    answerNow(call, caller) {
      if (call.kind === 'resource') {
        const verdict = spendNow(deps.budgets, caller, 'other');
        if (verdict instanceof Promise) return verdict.then((decided) => resourceUnder(call, caller, decided));
        return resourceUnder(call, caller, verdict);
      }
      const outcome = runReadToolNow(call.tool, deps, caller, call.args);
      return outcome instanceof Promise ? outcome.then((o) => toolAnswer(call, o, caller)) : toolAnswer(call, outcome, caller);
    },
  };
}
