import { McpServer, type CacheHint } from '@modelcontextprotocol/server';
import { SERVICE_DESCRIPTION, SERVICE_NAME, SERVICE_TITLE, serviceIcons } from '../contract/service-identity.ts';
import { SERVICE_VERSION } from '../util/version.ts';
import type { McpDeps } from './call-context.ts';
import { registerMakerTools } from './maker-tools.ts';
import type { Era } from './protocol.ts';
import { registerReadTools } from './read-tools.ts';
import { registerResources } from './resources.ts';
import { registerSubmitPrompt } from './submit-prompt.ts';

/** What a client is told about this server when it connects. */
const MCP_INSTRUCTIONS = [
  'This server reads the live catalog of a product directory: listings of software and digital products, each in a category, with labels and tags.',
  'Tools: search_products (full-text search and filters by category, label and tag, paginated), list_categories (every category with its live-listing count), get_product (one listing by slug, with its full profile and promo code).',
  'Resources: catalog://products/{slug} and catalog://categories/{slug} (the REST objects); completion/complete completes their slugs.',
  'Results are newest first; `total` counts every match across all pages.',
  'Whenever you show a listing, link it to its page in the directory (its `url`).',
  'No sign-in is needed to read. Calls are limited per IP address (searches and other calls have separate per-minute budgets); a TOO_MANY_REQUESTS error means: slow down and retry shortly.',
  'Makers: submit_product submits a product (without sign-in it saves a private draft and returns a claim link for the maker to open in a browser). my_listings, check_badge, update_listing and upgrade_listing act on the signed-in maker\'s own listings; they need the maker to sign in through OAuth (the server answers 401 with where to sign in) and approve this app.',
  'Nothing is ever paid or published from here: payment links and claim links are for the maker to open in a browser.',
  'The submit_to_directory prompt drafts a listing from a product website for the maker to approve, then saves it with submit_product.',
].join('\n');

/** How long a client may keep the tool, prompt and template lists, and the discovery answer: they change only with a new version. */
const LIST_TTL_MS = 60 * 60 * 1000;

type CacheScope = 'public' | 'private';

/**
 * One MCP server with every tool, resource and prompt. Handlers are registered once, with the
 * process-wide services only: whatever depends on the request (the caller's IP, its era, the
 * budget headers, the logger, the signed-in maker) they take from their context with
 * callerOf(ctx) (call-context.ts), never from a closure. `scope` is the cache scope its lists
 * are answered with in the modern era (`public` for anonymous callers, `private` with a key or
 * a sign-in), which the SDK reads from the server's options.
 *
 * Registering another tool: call server.registerTool here (or in a register* function called
 * here), read the caller (its address, the signed-in maker and the scopes granted) inside the
 * handler with callerOf(ctx), spend a budget with spendBudget(deps.budgets, caller, bucket),
 * and shape the result for caller.era (tool-result.ts); tools/list then advertises it with its
 * input and output schemas. Only the three read tools and the resources also have the fast path
 * of direct-read-calls.ts; every other call is served by the SDK, unchanged.
 */
function createMcpServer(deps: McpDeps, scope: CacheScope): McpServer {
  const listHint: CacheHint = { ttlMs: LIST_TTL_MS, cacheScope: scope };
  const readHint: CacheHint = { ttlMs: deps.readTtlMs, cacheScope: scope };
  const server = new McpServer(
    {
      name: SERVICE_NAME,
      title: SERVICE_TITLE,
      version: SERVICE_VERSION,
      description: SERVICE_DESCRIPTION,
      websiteUrl: deps.publicUrl,
      icons: serviceIcons(deps.publicUrl),
    },
    {
      instructions: MCP_INSTRUCTIONS,
      // Nothing changes while a process runs: no list-change notifications to offer.
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false } },
      cacheHints: {
        'server/discover': listHint,
        'tools/list': listHint,
        'prompts/list': listHint,
        'resources/templates/list': listHint,
        'resources/list': readHint,
        'resources/read': readHint,
      },
    },
  );
  registerReadTools(server, deps);
  registerMakerTools(server, deps);
  registerResources(server, deps);
  registerSubmitPrompt(server, deps);
  return server;
}

/**
 * Servers ready for a request. Serving is stateless (one exchange per HTTP request) and an SDK
 * server serves one exchange at a time, so each request borrows a server and gives it back once
 * its exchange is closed. Building a server (its tools, resources, prompt and schemas) is then
 * paid once per concurrent request rather than per request. Servers are kept apart by era (the
 * SDK sets a server's negotiated revision per exchange) and by cache scope. A server keeps no
 * state of its own between exchanges that this service uses: the client identity an exchange
 * leaves behind is read by nothing here.
 */
export interface McpServerPool {
  acquire(era: Era, scope: CacheScope): McpServer;
  /** Takes back a server whose exchange is closed and whose request is completely answered. */
  release(server: McpServer): void;
}

/** More idle servers than concurrent requests ever needed are dropped. */
const MAX_IDLE = 16;

export function createMcpServerPool(deps: McpDeps): McpServerPool {
  const idle = new Map<string, McpServer[]>();
  const keys = new WeakMap<McpServer, string>();
  return {
    acquire(era, scope) {
      const key = `${era}:${scope}`;
      const server = idle.get(key)?.pop() ?? createMcpServer(deps, scope);
      keys.set(server, key);
      return server;
    },
    release(server) {
      if (server.isConnected()) throw new Error('an MCP server went back to the pool still connected');
      const key = keys.get(server);
      if (key === undefined) return;
      let list = idle.get(key);
      if (!list) idle.set(key, (list = []));
      if (list.length < MAX_IDLE) list.push(server);
    },
  };
}
