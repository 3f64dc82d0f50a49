import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { Bucket } from '../http/rate-limit.ts';
import { parseNoParams, parseProductSlug, parseSearchParams } from '../read/params.ts';
import type { ReadBody, ReadService } from '../read/read-service.ts';
import { CatalogError, internalError, tooManyRequests } from '../contract/errors.ts';
import { callerOf, spendBudget, type McpCaller, type McpDeps } from './call-context.ts';
import { bodyResult, errorResult } from './tool-result.ts';
import {
  categoryListOutput,
  getProductInput,
  listCategoriesInput,
  productOutput,
  searchProductsInput,
  searchResultOutput,
} from './tool-schemas.ts';

/**
 * The three read tools. Each mirrors a REST endpoint: same arguments, same validation
 * (read/params.ts), same rate-limit bucket, and the very same body from the read service.
 * They are described once, as data, for the two ways a call reaches them: registered on the
 * MCP servers (the SDK path), and answered directly by direct-read-calls.ts when a request is
 * a plain call of one of them (the fast path, which answers the same bytes).
 */

/** Reads of public data: safe to call again, changing nothing, and confined to the catalog. */
function readAnnotations(title: string): ToolAnnotations {
  return { title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
}

const LINK_RULE =
  'Whenever you show a listing, link its name to its `url` (the listing page in the directory): the catalog is public on that condition.';

const SEARCH_DESCRIPTION = [
  'Search the live product listings of the directory, newest first (most recently listed at the top).',
  'Every argument is optional and they combine: with none, the whole catalog is returned page by page.',
  '- q: words to look for in the name, tagline (punchline) and description; 2 to 100 characters.',
  '- category: a category slug from list_categories, e.g. "developer-tools".',
  '- label: a label slug, e.g. "new".',
  '- tag: a tag slug, e.g. "ai".',
  '- page: which page of results, 1 to 500 (default 1).',
  '- limit: listings per page, 1 to 50 (default 20).',
  'The result holds `products` (each with slug, name, punchline, description as HTML, website, pricing model, labels, tags and url), `total` (how many listings match across every page, not just this one), `page` and `limit`. To see more, ask for the next page while page × limit < total.',
  LINK_RULE,
].join('\n');

const CATEGORIES_DESCRIPTION = [
  'List every category of the directory, ordered by name, with the number of live listings in each (`count`).',
  'Takes no arguments. Use a category `slug` as the `category` argument of search_products; `noun` is what the directory calls listings in that category; `url` is the category page in the directory, to link when you show a category.',
].join('\n');

const PRODUCT_DESCRIPTION = [
  'Fetch one live listing by its slug, with its full profile: description (HTML), website, category, labels, tags, pricing model, product type, the maker\'s social handle, and for premium listings the highlights, ideal_for and faq, plus the maker\'s promo code when there is one.',
  '- slug: the listing\'s slug as search_products returns it, or the last segment of its url; 1 to 200 characters.',
  'A slug with no live listing (unknown, or not published) answers a NOT_FOUND error.',
  LINK_RULE,
].join('\n');

export interface ReadTool {
  readonly name: string;
  readonly config: {
    title: string;
    description: string;
    inputSchema: z.ZodObject;
    outputSchema: z.ZodObject;
    annotations: ToolAnnotations;
  };
  /** The per-IP budget a call spends from, before its arguments are looked at. */
  readonly bucket: Bucket;
  /** The REST body for these arguments; throws the CatalogError REST would answer. */
  answer(read: ReadService, args: Record<string, unknown>): ReadBody | Promise<ReadBody>;
}

export const READ_TOOLS: readonly ReadTool[] = [
  {
    name: 'search_products',
    config: {
      title: 'Search products',
      description: SEARCH_DESCRIPTION,
      inputSchema: searchProductsInput,
      outputSchema: searchResultOutput,
      annotations: readAnnotations('Search products'),
    },
    bucket: 'search',
    answer: (read, args) => {
      const query = parseSearchParams(args);
      // A search already in the response cache is answered at once (and counted as a hit).
      return read.cachedSearch(query) ?? read.search(query);
    },
  },
  {
    name: 'list_categories',
    config: {
      title: 'List categories',
      description: CATEGORIES_DESCRIPTION,
      inputSchema: listCategoriesInput,
      outputSchema: categoryListOutput,
      annotations: readAnnotations('List categories'),
    },
    bucket: 'other',
    answer: (read, args) => {
      parseNoParams(args);
      return read.categories();
    },
  },
  {
    name: 'get_product',
    config: {
      title: 'Get a product',
      description: PRODUCT_DESCRIPTION,
      inputSchema: getProductInput,
      outputSchema: productOutput,
      annotations: readAnnotations('Get a product'),
    },
    bucket: 'other',
    answer: (read, args) => read.product(parseProductSlug(args)),
  },
];

/**
 * One call of a read tool, as both paths run it: spend the budget, then answer from the read
 * service. Resolves to the REST body, or to the CatalogError to answer instead: a refusal or
 * rejected arguments as they are, any other failure logged and answered INTERNAL_SERVER_ERROR.
 */
export async function runReadTool(tool: ReadTool, deps: McpDeps, caller: McpCaller, args: Record<string, unknown>): Promise<ReadBody | CatalogError> {
  try {
    await spendBudget(deps.rateLimits, caller, tool.bucket);
    return await tool.answer(deps.read, args);
  } catch (err) {
    return failureOf(err, caller);
  }
}

function failureOf(err: unknown, caller: McpCaller): CatalogError {
  if (err instanceof CatalogError) return err;
  caller.log.error({ err }, 'MCP tool failed');
  return internalError(err);
}

/**
 * The same call with its budget decided at once, when it can be (kept in memory, or from this
 * process's lease of a Redis budget; see RateLimits.consumeNow): then its outcome at once when
 * the answer is at hand (a product, the categories, a search in the response cache), or a
 * promise of it (a search to compute). Undefined, with nothing spent, when runReadTool must run it.
 */
export function runReadToolNow(tool: ReadTool, deps: McpDeps, caller: McpCaller, args: Record<string, unknown>): ReadBody | CatalogError | Promise<ReadBody | CatalogError> | undefined {
  const decision = deps.rateLimits.consumeNow(tool.bucket, caller.ip, caller.budget?.owner);
  if (decision === undefined) return undefined;
  caller.onRateDecision(decision);
  if (!decision.allowed) return tooManyRequests(decision.resetSeconds, caller.budget?.holder ?? 'address');
  try {
    const answer = tool.answer(deps.read, args);
    return answer instanceof Promise ? answer.catch((err: unknown) => failureOf(err, caller)) : answer;
  } catch (err) {
    return failureOf(err, caller);
  }
}

export function registerReadTools(server: McpServer, deps: McpDeps): void {
  for (const tool of READ_TOOLS) {
    server.registerTool(tool.name, tool.config, async (args, extra) => {
      const outcome = await runReadTool(tool, deps, callerOf(extra), args);
      return outcome instanceof CatalogError ? errorResult(outcome) : bodyResult(outcome.body);
    });
  }
}
