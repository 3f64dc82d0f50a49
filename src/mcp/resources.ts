import { ProtocolError, ResourceTemplate, type McpServer, type ReadResourceResult, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { badRequest, CatalogError, internalError } from '../contract/errors.ts';
import { ErrorCode, type Category } from '../contract/schemas.ts';
import { parseProductSlug } from '../read/params.ts';
import { callerOf, spendBudget, type McpCaller, type McpDeps } from './call-context.ts';
import { resultMeta } from './protocol.ts';

/**
 * Resources: a product and a category, each under a URI an assistant can keep and read again
 * (docs/mcp.md, "Resources"):
 *
 *   catalog://products/{slug}     the Product, the very JSON GET /api/v1/products/{slug} answers
 *   catalog://categories/{slug}   the Category, as GET /api/v1/categories lists it
 *
 * Both are templates; `resources/list` lists the categories (a handful), not the products (the
 * whole catalog: search_products finds them, and every hit carries a link to its resource).
 * `completion/complete` completes each template's `slug` from the live catalog.
 *
 * Reads and completions spend the budget get_product spends ("other"); a refusal is a JSON-RPC
 * error whose data is the REST error object: -32602 for a slug REST would refuse (400) or that
 * names no live listing (404), RATE_LIMITED when the budget is spent.
 */
const PRODUCT_TEMPLATE = 'catalog://products/{slug}';
const CATEGORY_TEMPLATE = 'catalog://categories/{slug}';
const PRODUCT_PREFIX = 'catalog://products/';
const CATEGORY_PREFIX = 'catalog://categories/';
const JSON_TYPE = 'application/json';

export function productUri(slug: string): string {
  return `${PRODUCT_PREFIX}${slug}`;
}

function categoryUri(slug: string): string {
  return `${CATEGORY_PREFIX}${slug}`;
}

/** JSON-RPC codes of the refusals: invalid params (standard), and a budget spent (server-defined range). */
const INVALID_PARAMS = -32602;
const RATE_LIMITED = -32000;
/** At most this many values in one completion (the protocol's limit). */
const MAX_COMPLETIONS = 100;

/** A CatalogError as the JSON-RPC error of a resource read or a completion. */
export function protocolErrorOf(err: CatalogError): ProtocolError {
  const code = err.code === ErrorCode.TOO_MANY_REQUESTS || err.code === ErrorCode.SERVICE_UNAVAILABLE ? RATE_LIMITED : err.status >= 500 ? -32603 : INVALID_PARAMS;
  return new ProtocolError(code, err.message, err.toBody());
}

/** What a resource URI names: a product or a category by slug, or undefined (another URI). */
export function resourceOf(uri: string): { kind: 'product' | 'category'; slug: string } | undefined {
  const kind = uri.startsWith(PRODUCT_PREFIX) ? 'product' : uri.startsWith(CATEGORY_PREFIX) ? 'category' : undefined;
  if (!kind) return undefined;
  const raw = uri.slice(kind === 'product' ? PRODUCT_PREFIX.length : CATEGORY_PREFIX.length);
  if (raw.includes('/') || raw.includes('?') || raw.includes('#')) return undefined;
  let slug: string;
  try {
    slug = decodeURIComponent(raw);
  } catch {
    slug = raw;
  }
  return { kind, slug };
}

/** The live category with this slug, from the read service's category list. */
function categoryOf(deps: McpDeps, slug: string): Category {
  const { categories } = JSON.parse(deps.read.categories().body) as { categories: Category[] };
  const found = categories.find((c) => c.slug === slug);
  if (!found) throw new CatalogError(ErrorCode.NOT_FOUND, 404, `No category has the slug '${slug.length > 200 ? `${slug.slice(0, 200)}…` : slug}'.`);
  return found;
}

const categorySlugSchema = z.strictObject({ slug: z.string().min(1, { error: 'must be 1 to 200 characters' }).max(200, { error: 'must be 1 to 200 characters' }) });

/**
 * The contents of a resource, and its result as the request's era has it: in the modern era
 * with `resultType`, the cache fields and the server's identity, so the SDK sends it as it is
 * (the direct path serializes the same object). Throws the CatalogError REST would answer.
 */
export function readResourceNow(deps: McpDeps, caller: McpCaller, uri: string, target: { kind: 'product' | 'category'; slug: string }): ReadResourceResult {
  let text: string;
  if (target.kind === 'product') {
    text = deps.read.product(parseProductSlug({ slug: target.slug })).body;
  } else {
    const parsed = categorySlugSchema.safeParse({ slug: target.slug });
    if (!parsed.success) throw badRequest([{ path: ['slug'], message: 'must be 1 to 200 characters' }]);
    text = JSON.stringify(categoryOf(deps, parsed.data.slug));
  }
  return resourceResult(deps, caller, uri, text);
}

function resourceResult(deps: McpDeps, caller: McpCaller, uri: string, text: string): ReadResourceResult {
  const contents = [{ uri, mimeType: JSON_TYPE, text }];
  if (caller.era === 'legacy') return { contents };
  return { contents, resultType: 'complete', ttlMs: deps.readTtlMs, cacheScope: cacheScopeOf(caller), ...resultMeta('modern') } as ReadResourceResult;
}

/** A shared cache may keep what anyone may read; an answer to a key or a signed-in maker stays with its client. */
export function cacheScopeOf(caller: McpCaller): 'public' | 'private' {
  return caller.owner === undefined && caller.auth.kind === 'anonymous' ? 'public' : 'private';
}

async function readResource(deps: McpDeps, uri: URL, ctx: ServerContext): Promise<ReadResourceResult> {
  const caller = callerOf(ctx);
  const href = uri.href;
  const target = resourceOf(href);
  if (!target) throw new ProtocolError(INVALID_PARAMS, `Resource not found: ${href.length > 200 ? `${href.slice(0, 200)}…` : href}`);
  try {
    await spendBudget(deps.budgets, caller, 'other');
    return readResourceNow(deps, caller, href, target);
  } catch (err) {
    if (err instanceof CatalogError) throw protocolErrorOf(err);
    caller.log.error({ err }, 'MCP resource read failed');
    throw protocolErrorOf(internalError(err));
  }
}

export function registerResources(server: McpServer, deps: McpDeps): void {
  server.registerResource(
    'product',
    new ResourceTemplate(PRODUCT_TEMPLATE, { list: undefined }),
    {
      title: 'Product',
      description: 'A live listing by slug: the Product JSON of GET /api/v1/products/{slug}. search_products links each hit here.',
      mimeType: JSON_TYPE,
    },
    (uri, _variables, ctx) => readResource(deps, uri, ctx),
  );
  server.registerResource(
    'category',
    new ResourceTemplate(CATEGORY_TEMPLATE, {
      // The categories, each as a resource: a client can offer them to pick from.
      list: async (ctx) => {
        const caller = callerOf(ctx);
        try {
          await spendBudget(deps.budgets, caller, 'other');
        } catch (err) {
          if (err instanceof CatalogError) throw protocolErrorOf(err);
          throw err;
        }
        const { categories } = JSON.parse(deps.read.categories().body) as { categories: Category[] };
        return {
          resources: categories.map((c) => ({ uri: categoryUri(c.slug), name: c.slug, title: c.name, description: `${c.count} live ${c.noun}`, mimeType: JSON_TYPE })),
        };
      },
    }),
    {
      title: 'Category',
      description: 'A category by slug: the Category JSON (slug, name, noun, url, live count) of GET /api/v1/categories.',
      mimeType: JSON_TYPE,
    },
    (uri, _variables, ctx) => readResource(deps, uri, ctx),
  );
  registerCompletions(server, deps);
}

const completeParamsSchema = z.object({
  ref: z.object({ type: z.string(), uri: z.string().optional(), name: z.string().optional() }),
  argument: z.object({ name: z.string(), value: z.string() }),
});

/**
 * `completion/complete` for the templates' `slug` variable: live product slugs, or category
 * slugs, that start with what was typed, at most MAX_COMPLETIONS with the total and whether
 * there are more. The prompt's one argument (a website) has nothing to complete.
 */
function registerCompletions(server: McpServer, deps: McpDeps): void {
  server.server.registerCapabilities({ completions: {} });
  server.server.setRequestHandler('completion/complete', async (request, ctx) => {
    const caller = callerOf(ctx);
    const parsed = completeParamsSchema.safeParse(request.params);
    if (!parsed.success) throw new ProtocolError(INVALID_PARAMS, 'Invalid params: completion/complete needs ref and argument {name, value}.');
    const { ref, argument } = parsed.data;
    try {
      await spendBudget(deps.budgets, caller, 'other');
    } catch (err) {
      if (err instanceof CatalogError) throw protocolErrorOf(err);
      throw err;
    }
    let values: string[];
    let total: number;
    if (ref.type === 'ref/resource' && (ref.uri === PRODUCT_TEMPLATE || ref.uri === CATEGORY_TEMPLATE)) {
      if (argument.name !== 'slug') throw new ProtocolError(INVALID_PARAMS, `Invalid params: ${ref.uri} has one variable, slug, not '${argument.name.slice(0, 100)}'.`);
      const prefix = argument.value;
      if (ref.uri === PRODUCT_TEMPLATE) {
        ({ values, total } = deps.read.slugsStartingWith(prefix, MAX_COMPLETIONS));
      } else {
        const { categories } = JSON.parse(deps.read.categories().body) as { categories: Category[] };
        const matching = categories.map((c) => c.slug).filter((slug) => slug.startsWith(prefix));
        values = matching.slice(0, MAX_COMPLETIONS);
        total = matching.length;
      }
    } else if (ref.type === 'ref/prompt' && ref.name === 'submit_to_directory') {
      if (argument.name !== 'website') throw new ProtocolError(INVALID_PARAMS, `Invalid params: submit_to_directory has one argument, website, not '${argument.name.slice(0, 100)}'.`);
      values = [];
      total = 0;
    } else {
      const named = ref.type === 'ref/resource' ? (ref.uri ?? '') : (ref.name ?? '');
      throw new ProtocolError(
        INVALID_PARAMS,
        `Invalid params: nothing to complete for ${ref.type} '${named.slice(0, 200)}'. Completable: ref/resource ${PRODUCT_TEMPLATE} and ${CATEGORY_TEMPLATE} (slug), ref/prompt submit_to_directory (website).`,
      );
    }
    return { completion: { values, total, hasMore: total > values.length }, ...(caller.era === 'modern' && { resultType: 'complete' as const }), ...resultMeta(caller.era) };
  });
}
