import { CatalogError, conflict } from '../../contract/errors.ts';
import { ErrorCode } from '../../contract/schemas.ts';
import type { Pool } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import { websiteIdentity } from '../../sites/website-identity.ts';
import { claimSpent, saveDraft, spendClaim, type DraftFields, type DraftReason } from './drafts.ts';
import type { CheckReason } from '../listings/listing-rules.ts';
import { renderDescription, type Submission } from '../listings/maker-input.ts';
import { assertCategoryExists, getMakerListing, type MakerListing } from '../listings/maker-listings.ts';
import type { ListingUrls } from '../listings/listing-urls.ts';
import type { PaymentLink, PaymentLinks } from '../payments/payment-port.ts';
import { assertReachableHost, bestIcon, checkListingSite, inspectListingSite, listedSite, lockWebsite, siteSnapshot, type InspectedSite, type ListedSite, type SiteCheckDeps } from '../listings/site-check.ts';
import type { Queryable } from '../../db/pool.ts';
import { makersListingOfSite } from '../listings/maker-listings.ts';
import { freeSlug, slugFromName } from '../listings/slugs.ts';

/**
 * Submitting a product: through submit_product, or through the submission form
 * a maker reaches from a claim link or the dashboard.
 *
 * - Without listings:write (or without sign-in), submit_product saves a private draft and
 *   returns a claim link; nothing is published or charged.
 * - With listings:write: already_listed when the site is live in the directory (whoever listed
 *   it) or reserved to another maker's listing whose change of website waits for review,
 *   already_submitted when this maker has a listing for it, whatever its state (a rejected one
 *   included: its site is not submitted again as a new listing); otherwise the site is inspected
 *   (outside any transaction), a site without any usable cover image or icon becomes a draft with
 *   a claim link, and the automatic check publishes the listing or holds it for review.
 * - A premium plan adds a payment link; the plan changes only once the maker has paid.
 *
 * Duplicates are found by website identity (src/sites/website-identity.ts).
 */
export interface SubmissionDeps extends SiteCheckDeps {
  pool: Pool;
  urls: ListingUrls;
  payments: PaymentLinks;
  draftCapPerDay: number;
  now?: () => Date;
}

export interface Submitter {
  /** The signed-in maker, or null. */
  readonly makerId: string | null;
  /** Whether the caller may submit to the account (listings:write). */
  readonly canWrite: boolean;
  /** The caller's address, for the draft limits. */
  readonly clientIp: string;
}

export type SubmitOutcome =
  | { readonly outcome: 'published' | 'pending_review'; readonly listing: MakerListing; readonly payment: PaymentLink | null; readonly reasons: readonly CheckReason[] }
  | { readonly outcome: 'draft_saved'; readonly claimUrl: string; readonly expiresAt: Date; readonly reason: DraftReason }
  | { readonly outcome: 'already_listed'; readonly live: ListedSite }
  | { readonly outcome: 'already_submitted'; readonly listing: MakerListing };

/** What is refused outright, before anything is saved: an unknown category, and a website that leads to an address the service never connects to. */
async function assertAcceptable(deps: SubmissionDeps, submission: Submission): Promise<void> {
  if (submission.category !== undefined) await assertCategoryExists(deps.pool, submission.category);
  await assertReachableHost(deps, submission.website);
}

function draftFields(submission: Submission): DraftFields {
  const { website: _website, ...fields } = submission;
  return fields;
}

const CLAIM_SPENT = 'This claim link has already been used or has expired.';

/**
 * The site is already another listing's (listed), or already one of this maker's (submitted).
 * Asked before the site is read, and again inside the transaction that creates the listing,
 * under the website's lock (lockWebsite): two submissions of one site at once, in any
 * processes, make one listing.
 */
async function duplicateOf(db: Queryable, urls: ListingUrls, makerId: string, websiteKey: string): Promise<SubmitOutcome | undefined> {
  const live = await listedSite(db, urls, websiteKey, { makerId });
  if (live) return { outcome: 'already_listed', live };
  const own = await makersListingOfSite(db, urls, makerId, websiteKey);
  if (own) return { outcome: 'already_submitted', listing: own };
  return undefined;
}

export async function submitProduct(deps: SubmissionDeps, submitter: Submitter, submission: Submission): Promise<SubmitOutcome> {
  const now = deps.now?.() ?? new Date();
  await assertAcceptable(deps, submission);
  const websiteKey = websiteIdentity(submission.website);

  const draft = async (reason: DraftReason): Promise<SubmitOutcome> => {
    const saved = await saveDraft(
      deps.pool,
      { publicUrl: deps.urls.publicUrl, capPerDay: deps.draftCapPerDay, now },
      { website: submission.website, websiteKey, fields: draftFields(submission), reason, makerId: submitter.makerId, clientIp: submitter.clientIp },
    );
    if (!saved.saved) {
      const retryAfterSeconds = Math.max(1, Math.ceil((saved.retryAt.getTime() - now.getTime()) / 1000));
      throw new CatalogError(ErrorCode.TOO_MANY_REQUESTS, 429, saved.message, { retryAfterSeconds });
    }
    return { outcome: 'draft_saved', claimUrl: saved.claimUrl, expiresAt: saved.draft.expiresAt, reason };
  };

  if (!submitter.canWrite || submitter.makerId === null) return draft(submitter.makerId === null ? 'signed_out' : 'no_write_scope');
  const makerId = submitter.makerId;

  const duplicate = await duplicateOf(deps.pool, deps.urls, makerId, websiteKey);
  if (duplicate) return duplicate;

  const inspected = await inspectListingSite(deps.fetcher, submission.website);
  // A site read and found without any usable image becomes a draft; a site that could not be
  // read goes through the automatic check, which holds it for review with the reason.
  if (inspected.facts.reachable && !inspected.facts.hasCover && !inspected.facts.hasIcon) return draft('no_usable_image');
  return createListing(deps, makerId, submission, websiteKey, inspected, now, undefined);
}

/**
 * The submission form (a claim link's draft, or a new listing from the dashboard): always a
 * listing, through the same duplicate rules and automatic check; a site without any usable image
 * is held for review rather than made a draft again.
 */
export async function submitFromForm(deps: SubmissionDeps, makerId: string, submission: Submission, draftId: string | undefined): Promise<SubmitOutcome> {
  const now = deps.now?.() ?? new Date();
  await assertAcceptable(deps, submission);
  const websiteKey = websiteIdentity(submission.website);
  const duplicate = await duplicateOf(deps.pool, deps.urls, makerId, websiteKey);
  if (duplicate) {
    // A claim link submitted twice at once: the second finds the listing the first one made,
    // and is told the link is spent rather than that the site is submitted already.
    if (draftId !== undefined && (await claimSpent(deps.pool, draftId))) throw conflict(CLAIM_SPENT);
    return duplicate;
  }
  const inspected = await inspectListingSite(deps.fetcher, submission.website);
  return createListing(deps, makerId, submission, websiteKey, inspected, now, draftId);
}

async function createListing(
  deps: SubmissionDeps,
  makerId: string,
  submission: Submission,
  websiteKey: string,
  site: InspectedSite,
  now: Date,
  draftId: string | undefined,
): Promise<SubmitOutcome> {
  const { publish, reasons } = checkListingSite(deps, submission.website, site, submission);
  const { inspection } = site;
  const host = new URL(submission.website).hostname.replace(/^www\./, '');
  // A listing needs a name and a punchline to exist; when the maker gave none, the site's own
  // words stand in and the listing waits for review (the reasons say so).
  const name = submission.name ?? inspection?.title?.slice(0, 200) ?? host;
  const punchline = submission.punchline ?? inspection?.description?.slice(0, 300) ?? '';
  const descriptionSource = submission.description ?? '';

  const created = await withTransaction(deps.pool, async (client): Promise<{ slug: string } | { duplicate: SubmitOutcome }> => {
    await lockWebsite(client, websiteKey);
    const duplicate = await duplicateOf(client, deps.urls, makerId, websiteKey);
    if (duplicate) {
      // A claim link's second submit finds the first one's listing: the link is what it spent.
      if (draftId !== undefined && (await claimSpent(client, draftId))) throw conflict(CLAIM_SPENT);
      return { duplicate };
    }
    const slug = await freeSlug(client, slugFromName(name, slugFromName(host, 'listing')));
    if (submission.tags?.length) await client.query('INSERT INTO catalog.tags (slug) SELECT unnest($1::text[]) ON CONFLICT (slug) DO NOTHING', [submission.tags]);
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO catalog.listings (slug, name, punchline, description, description_source, website, website_key, logo, cover,
         category, tags, product_type, pricing_model, social, status, plan, listed_at, maker_id, check_reasons, site_snapshot,
         review_requested_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, 'free', $16, $17, $18, $19, $20, $21, $21)
       RETURNING id`,
      [
        slug,
        name,
        punchline,
        renderDescription(descriptionSource),
        descriptionSource,
        submission.website,
        websiteKey,
        bestIcon(inspection),
        inspection?.cover ?? null,
        submission.category ?? null,
        submission.tags ?? [],
        submission.product_type ?? null,
        submission.pricing_model ?? null,
        submission.social ?? null,
        publish ? 'live' : 'pending',
        publish ? now : null,
        makerId,
        JSON.stringify(reasons),
        JSON.stringify(siteSnapshot(site)),
        publish ? null : now,
        now,
      ],
    );
    if (draftId !== undefined && !(await spendClaim(client, draftId, makerId, rows[0]!.id, now))) {
      throw conflict(CLAIM_SPENT);
    }
    return { slug };
  });
  if ('duplicate' in created) return created.duplicate;
  const { slug } = created;
  const listing = await getMakerListing(deps.pool, deps.urls, makerId, slug);
  const payment = submission.plan === 'premium' ? await deps.payments.linkFor({ id: listing.id, makerId }) : null;
  return { outcome: publish ? 'published' : 'pending_review', listing, payment, reasons };
}
