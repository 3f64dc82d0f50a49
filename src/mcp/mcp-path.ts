import type { IncomingMessage } from 'node:http';
import type { Verdict } from '../budgets/verdict.ts';

/** Where the MCP endpoint answers (spec: its path carries no version). */
export const MCP_PATH = '/api/mcp';

/**
 * The body of a request the beneath-Fastify path read and then handed to Fastify
 * (direct-mcp.ts): the route reads it from here instead of the request (its preParsing hook).
 */
export const MCP_BODY = Symbol('catalog.mcpBody');

/**
 * The budget verdict of a read call's consumer key that the beneath-Fastify path refused when it
 * read the request (401, or 429 for an address guessing keys): the route sends that refusal
 * rather than decide again, so the guess is counted once.
 */
export const MCP_KEY_VERDICT = Symbol('catalog.mcpKeyVerdict');

export interface McpBodyRequest extends IncomingMessage {
  [MCP_BODY]?: Buffer;
  [MCP_KEY_VERDICT]?: Verdict | Promise<Verdict>;
}
