import type { IncomingMessage } from 'node:http';

/** Where the MCP endpoint answers (spec: its path carries no version). */
export const MCP_PATH = '/api/mcp';

/**
 * The body of a request the beneath-Fastify path read and then handed to Fastify
 * (direct-mcp.ts): the route reads it from here instead of the request (its preParsing hook).
 */
export const MCP_BODY = Symbol('catalog.mcpBody');

export interface McpBodyRequest extends IncomingMessage {
  [MCP_BODY]?: Buffer;
}
