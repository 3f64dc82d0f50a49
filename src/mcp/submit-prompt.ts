import { ProtocolError, type McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { badRequest, CatalogError } from '../contract/errors.ts';
import { categoryListSchema, pricingModelSchema, productTypeSchema, type Category } from '../contract/schemas.ts';
import { callerOf, spendBudget, type McpDeps } from './call-context.ts';
import { resultMeta } from './protocol.ts';

/**
 * The submit_to_directory prompt: turns a product website into a listing draft the maker
 * approves before anything is saved. It lists the live category slugs so the draft names a
 * category the directory really has.
 */

/** JSON-RPC error codes: invalid params (standard), and a refusal in the server-defined range. */
const INVALID_PARAMS = -32602;
const RATE_LIMITED = -32000;

/**
 * A prompts/get refusal as a JSON-RPC error: the SDK answers with the error's code, message
 * and data. The data is the REST error object, so the same code and issues reach the client.
 */
function promptRefused(code: number, message: string, error: CatalogError): ProtocolError {
  return new ProtocolError(code, message, error.toBody());
}

const WEBSITE_RULE = "'website' must be the product's public http(s) address, e.g. https://example.com";
const websiteSchema = z.httpUrl({ error: WEBSITE_RULE });

/**
 * The website is checked here rather than by the SDK, so the refusal is one clear sentence
 * with the REST-shaped issues as data, instead of a raw schema message.
 */
function parseWebsite(value: unknown): string {
  const parsed = websiteSchema.safeParse(typeof value === 'string' ? value.trim() : value);
  if (parsed.success) return parsed.data;
  throw promptRefused(
    INVALID_PARAMS,
    `Invalid arguments for prompt submit_to_directory: ${WEBSITE_RULE}.`,
    badRequest([{ path: ['website'], message: WEBSITE_RULE }]),
  );
}

function categoryLines(categories: readonly Category[]): string {
  return categories.map((c) => `- ${c.slug}: ${c.name} (${c.noun})`).join('\n');
}

function submitPromptText(website: string, categories: readonly Category[]): string {
  return [
    `Help me list my product, whose website is ${website}, in the directory.`,
    '',
    `1. Read ${website} (its home page, and its pricing and about pages if there are any) to learn what the product does, who it is for and how it is priced.`,
    '2. Draft the listing from what the site says, without inventing anything:',
    '   - name: the product name as the site writes it.',
    '   - punchline: one line, at most about 80 characters, saying what it does for whom; no hype words.',
    '   - description: two or three short paragraphs in plain words: what it does, its main features, who it is for.',
    '   - category: exactly one of these category slugs:',
    categoryLines(categories)
      .split('\n')
      .map((line) => `     ${line}`)
      .join('\n'),
    `   - pricing_model: one of ${pricingModelSchema.options.join(', ')}.`,
    `   - product_type: ${productTypeSchema.options.join(' or ')}.`,
    "   - social: the maker's social network handle if the site shows one, without the leading @; otherwise leave it empty.",
    '3. Show me the complete draft and ask me to approve or correct it. Change what I ask for and show it again.',
    `4. Only after I have approved the draft, save it with the submit_product tool: website ${website} and the approved fields (ask me whether I want the free or the premium plan; free unless I say premium). Do not call submit_product before my approval.`,
    '5. Tell me what submit_product answered in plain words (published, waiting for review, saved as a draft, already listed or already submitted), and give me any link it returns (a claim link to finish the submission, or a payment link for the premium plan) so I can open it in my browser. Never try to pay or open those links yourself.',
  ].join('\n');
}

export function registerSubmitPrompt(server: McpServer, deps: McpDeps): void {
  server.registerPrompt(
    'submit_to_directory',
    {
      title: 'Submit a product to the directory',
      description:
        "Draft a directory listing from a product's website, have the maker approve it, then save it with submit_product.",
      // Any value reaches the callback, which validates it; the argument is still listed as required.
      argsSchema: { website: z.string({ error: WEBSITE_RULE }).describe("the product's website, an http(s) URL such as https://example.com") },
    },
    async (args, ctx) => {
      const caller = callerOf(ctx);
      try {
        await spendBudget(deps.budgets, caller, 'other');
      } catch (err) {
        if (err instanceof CatalogError) throw promptRefused(RATE_LIMITED, err.message, err);
        throw err;
      }
      const website = parseWebsite(args.website);
      const { categories } = categoryListSchema.parse(JSON.parse(deps.read.categories().body));
      return {
        description: `Listing draft for ${website}`,
        messages: [{ role: 'user', content: { type: 'text', text: submitPromptText(website, categories) } }],
        ...resultMeta(caller.era),
      };
    },
  );
}
