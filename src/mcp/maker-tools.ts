import type { CallToolResult, McpServer, ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { checkScopes } from '../auth/caller.ts';
import type { Scope } from '../auth/scopes.ts';
import { CatalogError, badRequest, internalError, serviceUnavailable } from '../contract/errors.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { ErrorCode } from '../contract/schemas.ts';
import { checkBadge } from '../catalog/badges/badges.ts';
import { listingChangesSchema, listingChangesShape, makerIssues, submissionSchema, submissionShape } from '../catalog/listings/maker-input.ts';
import { editListing, getMakerListing, listMakerListings, type EditResult, type MakerListing } from '../catalog/listings/maker-listings.ts';
import { formatPrice, minorUnitOf } from '../money/money.ts';
import type { PaymentLink } from '../catalog/payments/payment-port.ts';
import { submitProduct, type SubmitOutcome } from '../catalog/submissions/submissions.ts';
import { requestUpgrade } from '../catalog/payments/upgrades.ts';
import { callerOf, spendBudget, type McpCaller, type McpDeps } from './call-context.ts';
import { MAKER_TOOL_SCOPES } from './maker-tool-scopes.ts';
import { argumentsSchema } from './tool-schemas.ts';
import { errorResult, jsonResult } from './tool-result.ts';

/**
 * The five maker tools. They call the catalog's commands (src/catalog), the
 * same ones the maker pages call; they never write a table themselves. Each answers a JSON
 * object (structuredContent, and the same JSON as text; no output schema is advertised, to keep
 * `tools/list` small: docs/decisions.md);
 * a refusal is a tool error carrying the error object {code, message, data?}:
 * BAD_REQUEST (with data.issues naming each rejected argument), NOT_FOUND (not one of your
 * listings), CONFLICT (the listing's state does not allow it), TOO_MANY_REQUESTS (draft limit).
 *
 * The scopes each tool needs are checked at the HTTP layer first (mcp-auth.ts: 401/403 with a
 * challenge the client's OAuth layer acts on) and again here.
 */

const listingStatus = z.enum(['draft', 'pending', 'changes_requested', 'live', 'rejected', 'hidden']);

const listingOutput = z.object({
  slug: z.string(),
  name: z.string(),
  punchline: z.string(),
  status: listingStatus.describe('live; pending (in review); changes_requested (see feedback, then edit); rejected; hidden; draft'),
  hidden_reason: z.enum(['admin', 'badge_missing']).nullable(),
  plan: z.enum(['free', 'premium']),
  badge: z.enum(['verified', 'not_verified', 'not_needed']).describe('the directory badge on your site (premium listings need none)'),
  feedback: z.string().nullable().describe("the reviewer's latest feedback"),
  website: z.string(),
  previous_website: z.string().nullable().describe('the site the listing had before a change of website that waits for review: reserved to it until a reviewer approves'),
  category: z.string().nullable(),
  url: z.string().describe('the public listing page (answers while the listing is live)'),
  edit_url: z.string().describe('the page where you edit the listing in the browser'),
  created_at: z.string(),
  listed_at: z.string().nullable(),
});

const paymentOutput = z.object({
  url: z.string().describe('open in a browser to pay; nothing is charged before'),
  price: z.string().describe('the price as shown: the amount with its currency\'s decimals and the ISO 4217 code, e.g. "29.00 USD", "1500 JPY", "5.250 KWD"'),
  amount_minor: z.number().int().describe("the amount in the currency's minor unit (ISO 4217): 2900 for 29.00 USD, 1500 for 1500 JPY, 5250 for 5.250 KWD"),
  minor_unit: z.number().int().describe("the decimals of the currency's minor unit: 2 for USD, 0 for JPY, 3 for KWD"),
  currency: z.string().describe('ISO 4217 code, lowercase'),
});

function listingJson(l: MakerListing): z.infer<typeof listingOutput> {
  return {
    slug: l.slug,
    name: l.name,
    punchline: l.punchline,
    status: l.status,
    hidden_reason: l.hiddenReason,
    plan: l.plan,
    badge: l.badge,
    feedback: l.feedback,
    website: l.website,
    previous_website: l.previousWebsite,
    category: l.category,
    url: l.url,
    edit_url: l.editUrl,
    created_at: l.createdAt.toISOString(),
    listed_at: l.listedAt?.toISOString() ?? null,
  };
}

function paymentJson(p: PaymentLink): z.infer<typeof paymentOutput> {
  return { url: p.url, price: formatPrice(p.price), amount_minor: p.price.amountMinor, minor_unit: minorUnitOf(p.price.currency) ?? 0, currency: p.price.currency };
}

/**
 * Runs a tool: a CatalogError is answered as the tool error it is; anything else is logged.
 * A database that cannot be reached is a tool error too (SERVICE_UNAVAILABLE, retry shortly),
 * not an HTTP failure: the model reads the result and can wait and retry, where a failed POST
 * would look to the host like a broken connection.
 */
async function answer<T extends Record<string, unknown>>(caller: McpCaller, output: z.ZodType<T>, run: (caller: McpCaller) => Promise<T>): Promise<CallToolResult> {
  if (caller.auth.kind === 'maker' && caller.auth.grantUnchecked) return errorResult(serviceUnavailable(), caller.era);
  try {
    const body = await run(caller);
    // The answer's shape, checked as a client would: docs/mcp.md describes it field by field.
    const checked = output.safeParse(body);
    if (!checked.success) {
      caller.log.error({ err: checked.error }, 'a maker tool\'s answer does not have its shape');
      return errorResult(internalError(checked.error), caller.era);
    }
    return jsonResult(body, caller.era);
  } catch (err) {
    if (err instanceof CatalogError) return errorResult(err, caller.era);
    if (isDatabaseUnavailable(err)) {
      caller.log.warn({ err }, 'MCP tool refused: the database cannot be reached');
      return errorResult(serviceUnavailable(err), caller.era);
    }
    caller.log.error({ err }, 'MCP tool failed');
    return errorResult(internalError(err), caller.era);
  }
}

/** The signed-in maker, with the scopes the tool needs (checked once more here). */
function requireMaker(caller: McpCaller, tool: string): string {
  const needed = MAKER_TOOL_SCOPES[tool] ?? ([] as readonly Scope[]);
  const check = checkScopes(caller.auth, needed);
  if (check.ok) return check.makerId;
  throw new CatalogError(check.status === 401 ? ErrorCode.UNAUTHORIZED : ErrorCode.FORBIDDEN, check.status, check.description);
}

/** The one argument of check_badge and upgrade_listing: one of the caller's listings. */
const slugArgument = z.strictObject({ slug: z.string({ error: 'slug is required' }).trim().min(1, { error: 'slug is required' }).max(200, { error: 'slug must be at most 200 characters' }) });

function parseArgs<T>(schema: z.ZodType<T>, args: unknown): T {
  const parsed = schema.safeParse(args ?? {});
  if (!parsed.success) throw badRequest(makerIssues(parsed.error));
  return parsed.data;
}

function annotations(title: string, readOnly: boolean): ToolAnnotations {
  return { title, readOnlyHint: readOnly, destructiveHint: false, idempotentHint: readOnly, openWorldHint: true };
}

/**
 * The answers' shapes, checked before an answer leaves (docs/mcp.md lists every tool's answer;
 * the maker tools advertise no output schema: docs/decisions.md, "The MCP tool list").
 */
const submitOutput = z.strictObject({
  outcome: z.enum(['published', 'pending_review', 'draft_saved', 'already_listed', 'already_submitted']),
  message: z.string(),
  listing: listingOutput.nullable().describe('your listing (published, pending_review, already_submitted: its status and feedback say why, a rejected one included)'),
  live_listing: z.object({ slug: z.string(), name: z.string(), url: z.string() }).nullable().describe('the listing that holds this site in the directory (already_listed)'),
  claim_link: z.object({ url: z.string(), expires_at: z.string() }).nullable().describe('open in a browser to finish a draft (draft_saved)'),
  payment: paymentOutput.nullable().describe('for plan: premium'),
  review_reasons: z.array(z.string()).describe('why a listing waits for review (pending_review)'),
});
const myListingsOutput = z.strictObject({ listings: z.array(listingOutput) });
const updateOutput = z.strictObject({
  outcome: z.enum(['updated_live', 'sent_to_review']),
  message: z.string(),
  listing: listingOutput,
  review_reasons: z.array(z.string()).describe('what the automatic check found on a new website that sent the listing to review'),
});
const badgeOutput = z.strictObject({
  status: z.enum(['found', 'missing', 'inconclusive']),
  reason: z.string().nullable(),
  message: z.string(),
  markup: z.string().describe('the HTML to put on the site'),
  badge_image_url: z.string(),
  listing_url: z.string(),
  edit_url: z.string(),
});
const upgradeOutput = z.strictObject({ message: z.string(), payment: paymentOutput, listing: listingOutput });

function submitAnswer(result: SubmitOutcome): z.infer<typeof submitOutput> {
  const base = { listing: null, live_listing: null, claim_link: null, payment: null, review_reasons: [] as string[] };
  switch (result.outcome) {
    case 'published':
    case 'pending_review': {
      const paid = result.payment ? ` To move it to the premium plan, the maker opens the payment link (${formatPrice(result.payment.price)}) in a browser and pays there; nothing has been charged.` : '';
      const message =
        result.outcome === 'published'
          ? `Published: ${result.listing.name} is live at ${result.listing.url}.${paid}`
          : `Submitted: ${result.listing.name} waits for review by the directory (the maker can follow it with my_listings).${paid}`;
      return { ...base, outcome: result.outcome, message, listing: listingJson(result.listing), payment: result.payment ? paymentJson(result.payment) : null, review_reasons: result.reasons.map((r) => r.message) };
    }
    case 'draft_saved': {
      const why = {
        signed_out: 'Nothing was published: without sign-in, submissions are saved as private drafts.',
        no_write_scope: 'Nothing was published: this app may not submit to the account (it lacks listings:write), so the submission was saved as a private draft.',
        no_usable_image: 'Nothing was published: the site offers no usable cover image or icon, so the submission was saved as a private draft.',
      }[result.reason];
      return {
        ...base,
        outcome: 'draft_saved',
        message: `${why} The maker opens the claim link in a browser, signs in and submits it through the form (the link works once, until ${result.expiresAt.toISOString()}).`,
        claim_link: { url: result.claimUrl, expires_at: result.expiresAt.toISOString() },
      };
    }
    case 'already_listed':
      return { ...base, outcome: 'already_listed', message: `This site is already listed in the directory as ${result.live.name}: ${result.live.url}.`, live_listing: result.live };
    case 'already_submitted': {
      const l = result.listing;
      const message =
        l.status === 'rejected'
          ? `You already submitted this site: the directory rejected ${l.name}${l.feedback ? `, saying: "${l.feedback}"` : ''}. A rejected listing cannot be edited, and its site cannot be submitted again as a new listing; if you think the decision is wrong, contact the directory. The listing and its feedback: ${l.editUrl}.`
          : `You already have a listing for this site: ${l.name} (${l.status}). Edit it with update_listing or at ${l.editUrl}.`;
      return { ...base, outcome: 'already_submitted', message, listing: listingJson(l) };
    }
  }
}

function updateMessage(result: EditResult): string {
  const { listing, websiteChange: change } = result;
  const badge = change && listing.plan === 'free' ? ` The badge was verified on the old site only: put it on ${listing.website} and press Verify on ${listing.editUrl} to make the listing's link followed again.` : '';
  if (change?.accepted) {
    return `Saved: the live listing now links ${listing.website} (the automatic check passed), within seconds at ${listing.url}; ${change.from} is free for others to list.${badge}`;
  }
  if (change) {
    return `Saved: with its new website the listing went to review, and shows publicly once a reviewer approves it; ${listing.previousWebsite ?? change.from} stays reserved to it until then.${badge}`;
  }
  return result.outcome === 'updated_live'
    ? `Saved: the live listing shows the change within seconds at ${listing.url}.`
    : 'Saved: the listing went to review; it shows publicly once a reviewer approves it.';
}

export function registerMakerTools(server: McpServer, deps: McpDeps): void {
  const { maker } = deps;

  server.registerTool(
    'submit_product',
    {
      title: 'Submit a product',
      description: [
        'Submit a product to the directory. Only `website` is required; give name, punchline, description (Markdown or plain text), category (a slug from list_categories), pricing_model, product_type, social (handle without @) and tags when you know them. Use the submit_to_directory prompt to draft them, and submit only after the maker approved the draft.',
        'Signed in with listings:write, the listing goes to the maker\'s account: an automatic check publishes it at once or holds it for review. Otherwise (or when the site offers no usable image), a private draft is saved and a claim link returned: the maker opens it in a browser, signs in and submits. Without sign-in an address may save 5 drafts in 24 hours.',
        '`plan: "premium"` also returns a payment link with its price; nothing is ever charged here, the maker pays in the browser.',
        'Outcomes: published, pending_review, draft_saved, already_listed (the site is live in the directory, or reserved to a listing whose change of website waits for review), already_submitted (you already have a listing for it, whatever its state: a rejected one comes with its feedback and cannot be submitted again).',
      ].join('\n'),
      inputSchema: argumentsSchema(submissionShape, ['website']),
      annotations: annotations('Submit a product', false),
    },
    (args, ctx) =>
      answer(callerOf(ctx), submitOutput, async (caller) => {
        await spendBudget(deps.budgets, caller, 'other');
        const submission = parseArgs(submissionSchema, args);
        const auth = caller.auth;
        const result = await submitProduct(
          maker,
          { makerId: auth.kind === 'maker' ? auth.makerId : null, canWrite: auth.kind === 'maker' && auth.scopes.has('listings:write'), clientIp: caller.network },
          submission,
        );
        return submitAnswer(result);
      })
  );

  server.registerTool(
    'my_listings',
    {
      title: 'My listings',
      description:
        "The signed-in maker's listings, newest first: status, plan, badge, the reviewer's feedback and the page to open for each. Give `slug` for one listing. Needs listings:read.",
      inputSchema: argumentsSchema({ slug: z.string().min(1).max(200).describe('one of your listings; omit for all') }),
      annotations: annotations('My listings', true),
    },
    (args, ctx) =>
      answer(callerOf(ctx), myListingsOutput, async (caller) => {
        await spendBudget(deps.budgets, caller, 'other');
        const makerId = requireMaker(caller, 'my_listings');
        const { slug } = parseArgs(z.strictObject({ slug: z.string().trim().min(1, { error: 'slug must not be empty' }).max(200).optional() }), args);
        const listings = slug ? [await getMakerListing(maker.pool, maker.urls, makerId, slug)] : await listMakerListings(maker.pool, maker.urls, makerId);
        return { listings: listings.map(listingJson) };
      })
  );

  const updateShape = {
    slug: z.string().min(1).max(200).describe('the listing to edit (from my_listings)'),
    website: submissionShape.website.optional().describe("the product's new site: read and checked as a submission's site is"),
    name: listingChangesShape.name.optional(),
    punchline: listingChangesShape.punchline.optional(),
    description: listingChangesShape.description.optional().describe('Markdown or plain text'),
    category: listingChangesShape.category.optional(),
    pricing_model: listingChangesShape.pricing_model.optional(),
    social: listingChangesShape.social.optional().describe('handle without @, or null to remove it'),
  };

  server.registerTool(
    'update_listing',
    {
      title: 'Update a listing',
      description: [
        'Edit one of your listings: website, name, punchline, description (Markdown or plain text), category, pricing_model or social. A live listing stays live and changes at once; a listing that is not live goes (back) to review; a rejected listing cannot be edited. Needs listings:read and listings:write.',
        'A new website is read and checked as submit_product checks a site: refused when it is already in the directory or one of your listings; the automatic check runs on it, and a live listing stays live with it when the check passes, or goes to review (review_reasons say why) while its old site stays reserved to it until a reviewer approves. The badge must then be verified again on the new site.',
      ].join('\n'),
      inputSchema: argumentsSchema(updateShape, ['slug']),
      annotations: annotations('Update a listing', false),
    },
    (args, ctx) =>
      answer(callerOf(ctx), updateOutput, async (caller) => {
        await spendBudget(deps.budgets, caller, 'other');
        const makerId = requireMaker(caller, 'update_listing');
        const { slug, ...rest } = (args ?? {}) as Record<string, unknown>;
        if (typeof slug !== 'string' || slug.trim() === '') throw badRequest([{ path: ['slug'], message: 'slug is required: one of your listings (see my_listings)' }]);
        const changes = parseArgs(listingChangesSchema, rest);
        const result = await editListing(maker, makerId, slug.trim(), changes, maker.now?.() ?? new Date());
        return {
          outcome: result.outcome,
          message: updateMessage(result),
          listing: listingJson(result.listing),
          review_reasons: result.websiteChange && !result.websiteChange.accepted ? result.websiteChange.reasons.map((r) => r.message) : [],
        };
      })
  );

  server.registerTool(
    'check_badge',
    {
      title: 'Check the badge',
      description:
        "Looks now for the directory badge on the site of one of your free listings: found, missing or inconclusive (the site could not be read), with the exact markup to add. Records nothing: the maker presses Verify on the listing's edit page to make the link to the site followed. Needs listings:read.",
      inputSchema: argumentsSchema({ slug: z.string().min(1).max(200).describe('one of your free listings') }, ['slug']),
      annotations: annotations('Check the badge', true),
    },
    (args, ctx) =>
      answer(callerOf(ctx), badgeOutput, async (caller) => {
        await spendBudget(deps.budgets, caller, 'other');
        const makerId = requireMaker(caller, 'check_badge');
        const { slug } = parseArgs(slugArgument, args);
        const answer = await checkBadge(maker, makerId, slug);
        const message = {
          found: `The badge links to the listing from ${answer.listing.website}. Press Verify on ${answer.listing.editUrl} to record it.`,
          missing: 'The badge was not found on the site. Add the markup to the home page, then check again.',
          inconclusive: 'The site could not be read, so the badge could not be checked. Try again later.',
        }[answer.check.status];
        return {
          status: answer.check.status,
          reason: answer.check.status === 'found' ? null : answer.check.reason,
          message,
          markup: answer.markup,
          badge_image_url: answer.badgeImageUrl,
          listing_url: answer.listing.url,
          edit_url: answer.listing.editUrl,
        };
      })
  );

  server.registerTool(
    'upgrade_listing',
    {
      title: 'Upgrade to premium',
      description:
        'A payment link, with its price, for moving one of your live free listings to the premium plan (highlights, ideal-for, FAQ and a followed link). Nothing is charged: the maker opens the link in a browser and pays there. Needs listings:read and listings:write.',
      inputSchema: argumentsSchema({ slug: z.string().min(1).max(200).describe('one of your live free listings') }, ['slug']),
      annotations: annotations('Upgrade to premium', false),
    },
    (args, ctx) =>
      answer(callerOf(ctx), upgradeOutput, async (caller) => {
        await spendBudget(deps.budgets, caller, 'other');
        const makerId = requireMaker(caller, 'upgrade_listing');
        const { slug } = parseArgs(slugArgument, args);
        const { listing, payment } = await requestUpgrade(maker.pool, maker.urls, maker.payments, makerId, slug);
        return {
          message: `Open ${payment.url} in a browser to pay ${formatPrice(payment.price)}; the listing moves to the premium plan once the payment is confirmed. Nothing has been charged.`,
          payment: paymentJson(payment),
          listing: listingJson(listing),
        };
      })
  );
}
