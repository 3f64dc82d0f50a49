import type { CallToolResult, ContentBlock, McpServer, ToolAnnotations } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import type { Bucket, Counted } from '../budgets/verdict.ts';
import { parseNoParams, parseProductSlug, parseSearchParams } from '../read/params.ts';
import type { ReadBody, ReadService } from '../read/read-service.ts';
import { CatalogError, internalError } from '../contract/errors.ts';
import type { Category, Product } from '../contract/schemas.ts';
import { callerOf, spendNow, type McpCaller, type McpDeps } from './call-context.ts';
import { categoriesText, productText, productTextBudget, searchText, type SearchEnvelope } from './model-text.ts';
import type { Era } from './protocol.ts';
import { productUri } from './resources.ts';
import { errorResult, structuredResult } from './tool-result.ts';
import {
  categoryListContract,
  categoryListOutput,
  getProductInput,
  listCategoriesInput,
  productContract,
  productOutput,
  searchProductsInput,
  searchResultContract,
  searchResultOutput,
  type ToolSchema,
} from './tool-schemas.ts';

/**
 * The three read tools. Each mirrors a REST endpoint: same arguments, same validation
 * (read/params.ts), same rate-limit bucket, and the very same body from the read service as
 * the structured result. They are described once, as data, for the two ways a call reaches
 * them: registered on the MCP servers (the SDK path), and answered directly by
 * direct-read-calls.ts when a request is a plain call of one of them (the fast path, which
 * answers the same bytes).
 */

/** Reads of public data: safe to call again, changing nothing, and confined to the catalog. */
function readAnnotations(title: string): ToolAnnotations {
  return { title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
}

const SEARCH_DESCRIPTION = [
  'Search the live listings of the directory, newest first. All arguments are optional and combine; with none, the whole catalog page by page.',
  'The text names each hit (slug, tagline, the description\'s opening, pricing, category, website) and the total; the structured result is the REST answer (products, total, page, limit); each hit links its resource catalog://products/{slug}. More: next page while page × limit < total.',
  'Link a listing\'s name to its page wherever you show it.',
].join('\n');

const CATEGORIES_DESCRIPTION =
  'Every category, by name, with its count of live listings. Use a slug as search_products\' category; link a category to its page.';

const PRODUCT_DESCRIPTION = [
  'One live listing by slug, in full: description, pricing, links, and for premium listings highlights, ideal_for, faq and a promo code. An unknown or unpublished slug answers NOT_FOUND.',
  'Link the listing\'s name to its page wherever you show it.',
].join('\n');

export interface ReadTool {
  readonly name: string;
  readonly config: {
    title: string;
    description: string;
    inputSchema: ToolSchema<Record<string, unknown>>;
    outputSchema: ToolSchema<unknown>;
    annotations: ToolAnnotations;
  };
  /** The per-IP budget a call spends from, before its arguments are looked at. */
  readonly bucket: Bucket;
  /** The REST body for these arguments; throws the CatalogError REST would answer. */
  answer(read: ReadService, args: Record<string, unknown>): ReadBody | Promise<ReadBody>;
  /** The contract the REST body must meet (checked before it is answered as structured content). */
  readonly contract: z.ZodType;
  /** What the model reads beside the structured result: text, and links. */
  content(structured: unknown, body: string): ContentBlock[];
}

function searchContent(structured: unknown): ContentBlock[] {
  const envelope = structured as SearchEnvelope;
  const links: ContentBlock[] = envelope.products.map((p) => ({ type: 'resource_link', uri: productUri(p.slug), name: p.slug, title: p.name, mimeType: 'application/json' }));
  return [{ type: 'text', text: searchText(envelope) }, ...links];
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
    contract: searchResultContract,
    content: searchContent,
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
    contract: categoryListContract,
    content: (structured) => [{ type: 'text', text: categoriesText((structured as { categories: Category[] }).categories) }],
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
    contract: productContract,
    content: (structured, body) => {
      const product = structured as Product;
      return [{ type: 'text', text: productText(product, productTextBudget(Buffer.byteLength(body)), productUri(product.slug)) }];
    },
  },
];

/**
 * The tool's result for a REST body, for the era: the body as structured content (checked
 * against the contract first; the projector already validated every product through it, so a
 * failure is a bug, answered as an internal error), and the content a model reads.
 */
export function successResult(tool: ReadTool, body: string, era: Era, log: McpCaller['log'] | undefined): CallToolResult {
  const structured = JSON.parse(body) as Record<string, unknown>;
  const checked = tool.contract.safeParse(structured);
  if (!checked.success) {
    log?.error({ err: checked.error, tool: tool.name }, 'a read tool\'s answer does not meet the contract');
    return errorResult(internalError(checked.error), era);
  }
  return structuredResult(structured, tool.content(structured, body), era);
}

/**
 * One call of a read tool, as both paths run it: spend the budget, then answer from the read
 * service. Resolves to the REST body, or to the CatalogError to answer instead: a refusal or
 * rejected arguments as they are, any other failure logged and answered INTERNAL_SERVER_ERROR.
 */
export async function runReadTool(tool: ReadTool, deps: McpDeps, caller: McpCaller, args: Record<string, unknown>): Promise<ReadBody | CatalogError> {
  try {
    return await runReadToolNow(tool, deps, caller, args);
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
 * The same call, at once when it can be: its budget decided at once (kept in memory, or from
 * this process's lease of a Redis budget) and the answer at hand (a product, the categories, a
 * search in the response cache); else a promise of its outcome.
 */
export function runReadToolNow(tool: ReadTool, deps: McpDeps, caller: McpCaller, args: Record<string, unknown>): ReadBody | CatalogError | Promise<ReadBody | CatalogError> {
  const verdict = spendNow(deps.budgets, caller, tool.bucket);
  if (verdict instanceof Promise) return verdict.then((decided) => answerUnder(tool, deps, caller, args, decided));
  return answerUnder(tool, deps, caller, args, verdict);
}

/** The outcome of a call whose budget is decided: its refusal, or the read service's answer. */
function answerUnder(tool: ReadTool, deps: McpDeps, caller: McpCaller, args: Record<string, unknown>, verdict: Counted | undefined): ReadBody | CatalogError | Promise<ReadBody | CatalogError> {
  if (verdict !== undefined && !verdict.allowed) return verdict.refusal;
  try {
    const answer = tool.answer(deps.read, args);
    return answer instanceof Promise ? answer.catch((err: unknown) => failureOf(err, caller)) : answer;
  } catch (err) {
    return failureOf(err, caller);
  }
}

export function registerReadTools(server: McpServer, deps: McpDeps): void {
  for (const tool of READ_TOOLS) {
    server.registerTool(tool.name, tool.config, async (args, ctx) => {
      const caller = callerOf(ctx);
      const outcome = await runReadTool(tool, deps, caller, args);
      return outcome instanceof CatalogError ? errorResult(outcome, caller.era) : successResult(tool, outcome.body, caller.era, caller.log);
    });
  }
}
