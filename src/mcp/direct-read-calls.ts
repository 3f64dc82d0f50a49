import type { IncomingHttpHeaders } from 'node:http';
import { getParseErrorMessage } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { LRUCache } from 'lru-cache';
import { CatalogError } from '../contract/errors.ts';
import type { ReadBody, ReadService } from '../read/read-service.ts';
import type { McpCaller, McpDeps } from './call-context.ts';
import { READ_TOOLS, runReadTool, runReadToolNow, type ReadTool } from './read-tools.ts';
import { bodyResult, errorResult } from './tool-result.ts';

/**
 * The fast path of the read tools. A request that is one plain JSON-RPC `tools/call` of
 * search_products, list_categories or get_product is answered here, without an SDK server and
 * transport, with the very bytes the SDK would send: the same budget spent, the same checks,
 * the same result, serialized the way the SDK serializes it. Anything else, and any call this
 * module is not certain about, goes to the SDK.
 *
 * What the SDK does per call that is done here once per answer: parsing the REST body into
 * structuredContent, validating it against the tool's output schema (the projector already
 * validated every product through the contract; a failure would still be answered as the SDK
 * answers it), normalizing the result through CallToolResultSchema, and serializing it with
 * the body twice (parsed and as text). The serialized result is kept with the read service's
 * answer object, which stays the same object while the projection does not change.
 *
 * The conditions mirror what the SDK checks before it runs a tool (transport: Accept,
 * Content-Type, one JSON-RPC request with an integer or string id, a supported protocol
 * version; server: params of exactly name and arguments, so no task, no _meta), and
 * test/int/mcp/mcp-answers.test.ts holds the answers of both paths to the bytes recorded from the
 * SDK alone.
 */
export interface DirectReadCall {
  readonly tool: ReadTool;
  readonly id: string | number;
  readonly args: Record<string, unknown>;
}

/**
 * A JSON-RPC response body in two pieces, written one after the other: everything before the
 * id (the result, kept with the answer) and the id with the closing brace. No copy of the
 * result is made per request.
 */
export interface DirectAnswer {
  readonly head: Buffer;
  readonly tail: Buffer;
}

export interface DirectReadCalls {
  /** The call, when the SDK would answer this request with nothing but the tool's result. */
  match(body: unknown, rawHeaders: readonly string[], headers: IncomingHttpHeaders): DirectReadCall | undefined;
  /** The JSON-RPC response body for the call, the budget spent as the tool spends it. */
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
const PARAMS_KEYS = ['name', 'arguments'] as const;
/** Request headers the transport reads before a tool runs; given twice, the SDK is asked. */
const CHECKED_HEADERS = new Set(['accept', 'content-type', 'mcp-protocol-version']);

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

/** What the Streamable HTTP transport accepts before it hands a request to the server. */
export function transportAccepts(headers: IncomingHttpHeaders): boolean {
  const accept = headers.accept;
  if (typeof accept !== 'string' || !accept.includes('application/json') || !accept.includes('text/event-stream')) return false;
  if (!isJsonContentType(headers['content-type'])) return false;
  const version = headers['mcp-protocol-version'];
  return version === undefined || (typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version));
}

/** A JSON-RPC id the SDK's schema accepts: a string or a safe integer. */
function isRequestId(id: unknown): id is string | number {
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
}

/** The SDK's answer to structured content that fails the tool's output schema: a tool error. */
export function outputValidationFailure(toolName: string, error: unknown): CallToolResult {
  const failure = new McpError(
    ErrorCode.InvalidParams,
    `Output validation error: Invalid structured content for tool ${toolName}: ${getParseErrorMessage(error)}`,
  );
  return { content: [{ type: 'text', text: failure.message }], isError: true };
}

/** A result as the SDK sends it: normalized by CallToolResultSchema, then serialized. */
export function serializeResult(result: CallToolResult): string {
  return JSON.stringify(CallToolResultSchema.parse(result));
}

/** The tool's result for a body, checked against its output schema as the SDK checks it. */
export function successResult(tool: ReadTool, body: string): CallToolResult {
  const result = bodyResult(body);
  const checked = tool.config.outputSchema.safeParse(result.structuredContent);
  return checked.success ? result : outputValidationFailure(tool.name, checked.error);
}

/** Everything of the response before the id: `{"result":…,"jsonrpc":"2.0","id":`. */
function responseHead(resultJson: string): Buffer {
  return Buffer.from(`{"result":${resultJson},"jsonrpc":"2.0","id":`);
}

export interface DirectReadCallsOptions {
  /** Bytes of serialized results kept; 0 serializes every call afresh. */
  cacheMaxBytes: number;
}

export function createDirectReadCalls(deps: McpDeps, opts: DirectReadCallsOptions): DirectReadCalls {
  const read: ReadService = deps.read;
  const cache =
    opts.cacheMaxBytes > 0
      ? new LRUCache<string, Buffer>({ maxSize: opts.cacheMaxBytes, sizeCalculation: (head) => head.length + 64 })
      : undefined;
  // Answers of an older projection are never asked for again: dropped when the version moves.
  let cachedVersion = read.version;

  function headFor(tool: ReadTool, answer: ReadBody): Buffer {
    if (!cache) return responseHead(serializeResult(successResult(tool, answer.body)));
    if (read.version !== cachedVersion) {
      cache.clear();
      cachedVersion = read.version;
    }
    // A strong ETag names the answer's bytes, so a tool's result for it is always the same.
    const key = `${tool.name}\u0000${answer.etag}`;
    let head = cache.get(key);
    if (!head) {
      head = responseHead(serializeResult(successResult(tool, answer.body)));
      cache.set(key, head);
    }
    return head;
  }

  function answerOf(call: DirectReadCall, outcome: ReadBody | CatalogError): DirectAnswer {
    const head = outcome instanceof CatalogError ? responseHead(serializeResult(errorResult(outcome))) : headFor(call.tool, outcome);
    return { head, tail: Buffer.from(`${JSON.stringify(call.id)}}`) };
  }

  return {
    match(body, rawHeaders, headers) {
      if (!isPlainObject(body) || !keysWithin(body, MESSAGE_KEYS)) return undefined;
      const { jsonrpc, id, method, params } = body;
      if (jsonrpc !== '2.0' || method !== 'tools/call' || !isRequestId(id)) return undefined;
      if (!isPlainObject(params) || !keysWithin(params, PARAMS_KEYS)) return undefined;
      const tool = typeof params.name === 'string' ? TOOLS.get(params.name) : undefined;
      if (!tool) return undefined;
      const given = params.arguments === undefined ? {} : params.arguments;
      if (!isPlainObject(given)) return undefined;
      if (!transportAccepts(headers) || !headersGivenOnce(rawHeaders)) return undefined;
      // The arguments as the SDK hands them to the handler: parsed by the input schema.
      const parsed = tool.config.inputSchema.safeParse(given);
      if (!parsed.success) return undefined;
      return { tool, id, args: parsed.data as Record<string, unknown> };
    },

    async answer(call, caller) {
      return answerOf(call, await runReadTool(call.tool, deps, caller, call.args));
    },

    answerNow(call, caller) {
      const outcome = runReadToolNow(call.tool, deps, caller, call.args);
      if (outcome === undefined) return this.answer(call, caller);
      return outcome instanceof Promise ? outcome.then((o) => answerOf(call, o)) : answerOf(call, outcome);
    },
  };
}
