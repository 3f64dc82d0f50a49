/**
 * JSON-RPC error bodies for answers given at the HTTP level, before or instead of the MCP
 * server (wrong method, refused origin, unreadable body), shaped as the SDK's transport shapes
 * its own: no request id is known, so `id` is null.
 */
export interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  error: { code: number; message: string };
  id: null;
}

/** Codes: -32700 parse error, -32603 internal error, -32000 transport-level refusal. */
export function jsonRpcError(code: number, message: string): JsonRpcErrorBody {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}
