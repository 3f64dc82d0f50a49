import { CatalogError, badRequest, conflict } from '../contract/errors.ts';
import { ErrorCode } from '../contract/schemas.ts';
import type { Pool } from '../db/pool.ts';
import { withTransaction } from '../db/pool.ts';
import { inspectSite, type SiteInspection } from '../sites/inspect-site.ts';
import type { SiteFetcher } from '../sites/safe-fetch.ts';
import { SiteFetchError } from '../sites/site-fetch-error.ts';
import { websiteIdentity } from '../sites/website-identity.ts';
import { claimSpent, saveDraft, spendClaim, type DraftFields, type DraftReason } from './drafts.ts';
import { automaticCheck, blocklistEntryFor, type CheckReason, type SiteFacts } from './listing-rules.ts';
import { renderDescription, type Submission } from './maker-input.ts';
import { assertCategoryExists, getMakerListing, type ListingUrls, type MakerListing } from './maker-listings.ts';
import type { PaymentLink, PaymentLinks } from './payment-port.ts';
import { freeSlug, slugFromName } from './slugs.ts';

/**
 * Submitting a product (spec section 3): through submit_product, or through the submission form
 * a maker reaches from a claim link or the dashboard.
 *
 * - Without listings:write (or without sign-in), submit_product saves a private draft and
 *   returns a claim link; nothing is published or charged.
 * - With listings:write: already_listed when the site is live in the directory (whoever listed
 *   it), already_submitted when this maker has a listing for it; otherwise the site is inspected
 *   (outside any transaction), a site without any usable cover image or icon becomes a draft with
 *   a claim link, and the automatic check publishes the listing or holds it for review.
 * - A premium plan adds a payment link; the plan changes only once the maker has paid.
 *
 * Duplicates are found by website identity (src/sites/website-identity.ts).
 */
export interface SubmissionDeps {
  pool: Pool;
  fetcher: SiteFetcher;
  hostRefusal: (hostname: string) => Promise<string | null>;
  urls: ListingUrls;
  payments: PaymentLinks;
  draftCapPerDay: number;
  /** Hosts whose sites are held for review (SITE_BLOCKLIST). */
  blocklist: readonly string[];
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
  | { readonly outcome: 'already_listed'; readonly live: { readonly slug: string; readonly name: string; readonly url: string } }
  | { readonly outcome: 'already_submitted'; readonly listing: MakerListing };

interface Inspected {
  facts: SiteFacts;
  inspection: SiteInspection | undefined;
}

async function inspectForSubmission(fetcher: SiteFetcher, website: string): Promise<Inspected> {
  try {
    const inspection = await inspectSite(website, fetcher);
    const redirectedElsewhere = hostKey(inspection.url) !== hostKey(website);
    return {
      inspection,
      facts: { reachable: true, redirectedElsewhere, hasCover: inspection.cover !== null, hasIcon: inspection.icons.length > 0 },
    };
  } catch (err) {
    if (!(err instanceof SiteFetchError)) throw err;
    return { inspection: undefined, facts: { reachable: false, problem: err.message, hasCover: false, hasIcon: false } };
  }
}

function hostKey(url: string): string {
  return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
}

/** The icon a listing shows as its logo: an apple-touch-icon, else the largest declared, else any. */
function bestIcon(inspection: SiteInspection | undefined): string | null {
  const icons = inspection?.icons ?? [];
  const size = (s: string | null) => Math.max(0, ...(s ?? '').split(/\s+/).map((d) => Number(d.split('x')[0]) || 0));
  const touch = icons.find((i) => i.rel.startsWith('apple-touch-icon'));
  if (touch) return touch.url;
  const sorted = [...icons].sort((a, b) => size(b.sizes) - size(a.sizes));
  return sorted[0]?.url ?? null;
}

function draftFields(submission: Submission): DraftFields {
  const { website: _website, ...fields } = submission;
  return fields;
}

async function liveDuplicate(pool: Pool, urls: ListingUrls, websiteKey: string) {
  const { rows } = await pool.query<{ slug: string; name: string }>(
    `SELECT slug, name FROM catalog.listings WHERE website_key = $1 AND status = 'live' ORDER BY listed_at LIMIT 1`,
    [websiteKey],
  );
  return rows[0] ? { slug: rows[0].slug, name: rows[0].name, url: `${urls.siteUrl}/products/${rows[0].slug}` } : undefined;
}

/** already_listed or already_submitted when the site has a listing that rules a new one out. */
async function duplicateOutcome(deps: SubmissionDeps, makerId: string, websiteKey: string): Promise<SubmitOutcome | undefined> {
  const live = await liveDuplicate(deps.pool, deps.urls, websiteKey);
  if (live) return { outcome: 'already_listed', live };
  const own = await ownDuplicate(deps.pool, deps.urls, makerId, websiteKey);
  if (own) return { outcome: 'already_submitted', listing: own };
  return undefined;
}

/**
 * Submissions of one website are made one at a time, in every process (a transaction-level
 * advisory lock on its identity), and the duplicate rules are asked again under the lock: two
 * submissions of the same site at once (two apps, or a client retrying on another process
 * while its first request is still being answered) make one listing, never two.
 */
const WEBSITE_LOCK_CLASS = 7_430_030;

/** The maker's own listing of the site; a rejected one does not count (it may be submitted anew). */
async function ownDuplicate(pool: Pool, urls: ListingUrls, makerId: string, websiteKey: string): Promise<MakerListing | undefined> {
  const { rows } = await pool.query<{ slug: string }>(
    `SELECT slug FROM catalog.listings WHERE maker_id = $1 AND website_key = $2 AND status <> 'rejected' ORDER BY created_at DESC LIMIT 1`,
    [
      makerId,
      websiteKey,
    ],
  );
  return rows[0] ? getMakerListing(pool, urls, makerId, rows[0].slug) : undefined;
}

/**
 * What is refused outright, before anything is saved: an unknown category, and a website whose
 * name leads to an address the service never connects to (private, loopback, metadata…).
 */
async function assertAcceptable(deps: SubmissionDeps, submission: Submission): Promise<void> {
  if (submission.category !== undefined) await assertCategoryExists(deps.pool, submission.category);
  const refusal = await deps.hostRefusal(new URL(submission.website).hostname);
  if (refusal) throw badRequest([{ path: ['website'], message: `The website is not reachable from the internet: ${refusal}.` }]);
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

  const duplicate = await duplicateOutcome(deps, makerId, websiteKey);
  if (duplicate) return duplicate;

  const inspected = await inspectForSubmission(deps.fetcher, submission.website);
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
  const duplicate = await duplicateOutcome(deps, makerId, websiteKey);
  if (duplicate) return duplicate;
  const inspected = await inspectForSubmission(deps.fetcher, submission.website);
  return createListing(deps, makerId, submission, websiteKey, inspected, now, draftId);
}

async function createListing(
  deps: SubmissionDeps,
  makerId: string,
  submission: Submission,
  websiteKey: string,
  { facts, inspection }: Inspected,
  now: Date,
  draftId: string | undefined,
): Promise<SubmitOutcome> {
  const blockedBy = blocklistEntryFor(new URL(submission.website).hostname, deps.blocklist);
  const check = automaticCheck({
    site: facts,
    name: submission.name,
    punchline: submission.punchline,
    description: submission.description,
    category: submission.category,
    blockedBy,
  });
  const reasons = [...check.reasons];
  if (!facts.hasCover && !facts.hasIcon && facts.reachable) reasons.push({ code: 'no_image', message: 'The site offers no usable cover image or icon.' });
  const publish = check.publish && reasons.length === 0;
  const host = new URL(submission.website).hostname.replace(/^www\./, '');
  // A listing needs a name and a punchline to exist; when the maker gave none, the site's own
  // words stand in and the listing waits for review (the reasons say so).
  const name = submission.name ?? inspection?.title?.slice(0, 200) ?? host;
  const punchline = submission.punchline ?? inspection?.description?.slice(0, 300) ?? '';
  const descriptionSource = submission.description ?? '';
  const siteSnapshot = inspection
    ? { url: inspection.url, title: inspection.title, description: inspection.description, cover: inspection.cover, icon: bestIcon(inspection), faq: inspection.faq.length }
    : { problem: facts.problem ?? null };

  const slug = await withTransaction(deps.pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [WEBSITE_LOCK_CLASS, websiteKey]);
    const { rowCount: taken } = await client.query(
      `SELECT 1 FROM catalog.listings WHERE website_key = $1 AND (status = 'live' OR (maker_id = $2 AND status <> 'rejected')) LIMIT 1`,
      [websiteKey, makerId],
    );
    if (taken) {
      // A claim link's second submit finds the first one's listing: the link is what it spent.
      if (draftId !== undefined && (await claimSpent(client, draftId))) throw conflict('This claim link has already been used or has expired.');
      return undefined;
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
        JSON.stringify(siteSnapshot),
        publish ? null : now,
        now,
      ],
    );
    if (draftId !== undefined && !(await spendClaim(client, draftId, makerId, rows[0]!.id, now))) {
      throw conflict('This claim link has already been used or has expired.');
    }
    return slug;
  });
  if (slug === undefined) {
    const duplicate = await duplicateOutcome(deps, makerId, websiteKey);
    if (duplicate) return duplicate;
    throw conflict('This website was submitted at the same moment by another request; ask my_listings for it.');
  }
  const listing = await getMakerListing(deps.pool, deps.urls, makerId, slug);
  const payment = submission.plan === 'premium' ? await deps.payments.linkFor({ id: listing.id, makerId }) : null;
  return { outcome: publish ? 'published' : 'pending_review', listing, payment, reasons };
}
