import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { badRequest } from '../contract/errors.ts';
import { parseProductSlug, parseSearchParams } from '../read/params.ts';
import { spendBudget, type McpCallContext } from './call-context.ts';
import { asToolResult, bodyResult } from './tool-result.ts';
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

export function registerReadTools(server: McpServer, ctx: McpCallContext): void {
  const onFailure = ctx.onFailure ?? (() => undefined);

  server.registerTool(
    'search_products',
    {
      title: 'Search products',
      description: SEARCH_DESCRIPTION,
      inputSchema: searchProductsInput,
      outputSchema: searchResultOutput,
      annotations: readAnnotations('Search products'),
    },
    (args) =>
      asToolResult(async () => {
        await spendBudget(ctx, 'search');
        const query = parseSearchParams(args);
        return bodyResult((await ctx.read.search(query)).body);
      }, onFailure),
  );

  server.registerTool(
    'list_categories',
    {
      title: 'List categories',
      description: CATEGORIES_DESCRIPTION,
      inputSchema: listCategoriesInput,
      outputSchema: categoryListOutput,
      annotations: readAnnotations('List categories'),
    },
    (args) =>
      asToolResult(async () => {
        await spendBudget(ctx, 'other');
        const unknown = Object.keys(args);
        if (unknown.length > 0) throw badRequest(unknown.map((key) => ({ path: [key], message: 'is not a known parameter' })));
        return bodyResult(ctx.read.categories().body);
      }, onFailure),
  );

  server.registerTool(
    'get_product',
    {
      title: 'Get a product',
      description: PRODUCT_DESCRIPTION,
      inputSchema: getProductInput,
      outputSchema: productOutput,
      annotations: readAnnotations('Get a product'),
    },
    (args) =>
      asToolResult(async () => {
        await spendBudget(ctx, 'other');
        const slug = parseProductSlug(args);
        return bodyResult(ctx.read.product(slug).body);
      }, onFailure),
  );
}
