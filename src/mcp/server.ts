import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import packageJson from '../../package.json' with { type: 'json' };
import type { McpDeps } from './call-context.ts';
import { registerMakerTools } from './maker-tools.ts';
import { registerReadTools } from './read-tools.ts';
import { registerSubmitPrompt } from './submit-prompt.ts';

/** What a client is told about this server when it connects. */
export const MCP_INSTRUCTIONS = [
  'This server reads the live catalog of a product directory: listings of software and digital products, each in a category, with labels and tags.',
  'Tools: search_products (full-text search and filters by category, label and tag, paginated), list_categories (every category with its live-listing count), get_product (one listing by slug, with its full profile and promo code).',
  'Results are newest first; `total` counts every match across all pages.',
  'Whenever you show a listing, link it to its `url`, its page in the directory.',
  'No sign-in is needed to read. Calls are limited per IP address (searches and other calls have separate per-minute budgets); a TOO_MANY_REQUESTS error means: slow down and retry shortly.',
  'Makers: submit_product submits a product (without sign-in it saves a private draft and returns a claim link for the maker to open in a browser). my_listings, check_badge, update_listing and upgrade_listing act on the signed-in maker\'s own listings; they need the maker to sign in through OAuth (the server answers 401 with where to sign in) and approve this app.',
  'Nothing is ever paid or published from here: payment links and claim links are for the maker to open in a browser.',
  'The submit_to_directory prompt drafts a listing from a product website for the maker to approve, then saves it with submit_product.',
].join('\n');

/** The SDK builds a fresh Ajv (with every format) for each server unless given one. */
const sharedValidator = new AjvJsonSchemaValidator();

/**
 * One MCP server with every tool and prompt. Handlers are registered once, with the
 * process-wide services only: whatever depends on the request (the caller's IP, the budget
 * headers, the logger, the signed-in maker) they take from their `extra` with callerOf(extra)
 * (call-context.ts), never from a closure.
 *
 * Registering another tool: call server.registerTool here (or in a register* function called
 * here), read the caller (its address, the signed-in maker and the scopes granted) inside the
 * handler with callerOf(extra), spend a budget with spendBudget(deps.rateLimits, caller, bucket); tools/list
 * then advertises it with its input and output schemas. Only the three read tools also have
 * the fast path of direct-read-calls.ts; every other tool is served by the SDK, unchanged.
 */
export function createMcpServer(deps: McpDeps): McpServer {
  const server = new McpServer(
    { name: 'catalog', title: 'Product catalog', version: packageJson.version },
    { instructions: MCP_INSTRUCTIONS, jsonSchemaValidator: sharedValidator },
  );
  registerReadTools(server, deps);
  registerMakerTools(server, deps);
  registerSubmitPrompt(server, deps);
  return server;
}

/**
 * Servers ready for a request. The transport is stateless (one per HTTP request), and an SDK
 * server serves one transport at a time, so each request borrows a server, connects its
 * transport, and gives the server back once the transport is closed. Building a server (its
 * tools, prompt and schemas) is then paid once per concurrent request rather than per request.
 * A server keeps no state of its own between connections that this service uses: the client
 * info an initialize leaves behind is read by nothing here.
 */
export interface McpServerPool {
  acquire(): McpServer;
  /** Takes back a server whose transport is closed and whose request is completely answered. */
  release(server: McpServer): void;
}

/** More idle servers than concurrent requests ever needed are dropped. */
const MAX_IDLE = 32;

export function createMcpServerPool(deps: McpDeps): McpServerPool {
  const idle: McpServer[] = [];
  return {
    acquire: () => idle.pop() ?? createMcpServer(deps),
    release(server) {
      if (server.isConnected()) throw new Error('an MCP server went back to the pool still connected');
      if (idle.length < MAX_IDLE) idle.push(server);
    },
  };
}
