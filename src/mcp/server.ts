import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import packageJson from '../../package.json' with { type: 'json' };
import type { McpCallContext } from './call-context.ts';
import { registerReadTools } from './read-tools.ts';
import { registerSubmitPrompt } from './submit-prompt.ts';

/** What a client is told about this server when it connects. */
export const MCP_INSTRUCTIONS = [
  'This server reads the live catalog of a product directory: listings of software and digital products, each in a category, with labels and tags.',
  'Tools: search_products (full-text search and filters by category, label and tag, paginated), list_categories (every category with its live-listing count), get_product (one listing by slug, with its full profile and promo code).',
  'Results are newest first; `total` counts every match across all pages.',
  'Whenever you show a listing, link it to its `url`, its page in the directory.',
  'No sign-in is needed. Calls are limited per IP address (searches and other calls have separate per-minute budgets); a TOO_MANY_REQUESTS error means: slow down and retry shortly.',
  'The submit_to_directory prompt drafts a listing from a product website for the maker to approve.',
].join('\n');

/**
 * The SDK builds a fresh Ajv (with every format) for each server it constructs unless given one:
 * with a server per request, that alone cost about a millisecond a call. One shared instance.
 */
const sharedValidator = new AjvJsonSchemaValidator();

/** One server per HTTP request: the transport is stateless, and the tools close over the caller. */
export function createMcpServer(ctx: McpCallContext): McpServer {
  const server = new McpServer(
    { name: 'catalog', title: 'Product catalog', version: packageJson.version },
    { instructions: MCP_INSTRUCTIONS, jsonSchemaValidator: sharedValidator },
  );
  registerReadTools(server, ctx);
  registerSubmitPrompt(server, ctx);
  return server;
}
