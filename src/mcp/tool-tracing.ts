import type { ServerResponse } from 'node:http';
import { noteRoute, requestsTraced, startRequestChild } from '../http/request-tracing.ts';
import { MCP_PATH } from './mcp-path.ts';

/**
 * A span per `tools/call`, inside the HTTP request's span, when traces are on
 * (docs/operating.md#traces): named `tools/call {tool}` with the attributes of OpenTelemetry's
 * MCP conventions (mcp.method.name, gen_ai.tool.name, jsonrpc.request.id). Both roads call it:
 * the Fastify route (route.ts) and the direct path (direct-mcp.ts). It ends when the answer is
 * sent; a tool's own failure is a result (isError), which the span does not read.
 */
export function traceToolCall(res: ServerResponse, message: unknown): void {
  if (!requestsTraced()) return;
  noteRoute(res, MCP_PATH);
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return;
  const { method, params, id } = message as { method?: unknown; params?: unknown; id?: unknown };
  if (method !== 'tools/call' || typeof params !== 'object' || params === null) return;
  const name = (params as { name?: unknown }).name;
  if (typeof name !== 'string') return;
  startRequestChild(res, `tools/call ${name}`, {
    'mcp.method.name': 'tools/call',
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': name,
    ...((typeof id === 'string' || typeof id === 'number') && { 'jsonrpc.request.id': String(id) }),
    'network.transport': 'tcp',
  });
}
