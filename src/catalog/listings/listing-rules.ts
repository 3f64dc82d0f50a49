/**
 * The rules of a listing's life, as pure functions: no I/O, the clock passed in. The commands
 * (submissions.ts, maker-listings.ts, review.ts, badges.ts) load the state, ask these, and write
 * what they answer in one short transaction.
 *
 * States: draft (imported, not submitted), pending (in review), changes_requested (sent back to
 * the maker with feedback), live, rejected, hidden (by an admin, or for a missing badge).
 */
export type ListingStatus = 'draft' | 'pending' | 'changes_requested' | 'live' | 'rejected' | 'hidden';
export type HiddenReason = 'admin' | 'badge_missing';
export type Plan = 'free' | 'premium';

export interface ListingState {
  readonly status: ListingStatus;
  readonly hiddenReason: HiddenReason | null;
  readonly plan: Plan;
  readonly badgeVerified: boolean;
  readonly listedAt: Date | null;
}

/** A reason the automatic check held a listing for review, or a fact it recorded. */
export interface CheckReason {
  readonly code: string;
  readonly message: string;
}

// ---------------------------------------------------------------------------------------------
// Maker edits (update_listing and the edit page)

export type EditDecision = { allowed: true; nextStatus: ListingStatus; reviewRequested: boolean } | { allowed: false; message: string };

/**
 * A live listing stays live; a rejected one cannot be edited; any other goes (back) to review,
 * an admin-hidden one included: it comes back only through an admin's approval.
 */
export function decideMakerEdit(state: ListingState): EditDecision {
  switch (state.status) {
    case 'live':
      return { allowed: true, nextStatus: 'live', reviewRequested: false };
    case 'rejected':
      return { allowed: false, message: REJECTED_IS_FINAL };
    default:
      return { allowed: true, nextStatus: 'pending', reviewRequested: true };
  }
}

/** What a maker reads about a rejected listing, wherever it stops them. */
export const REJECTED_IS_FINAL =
  'This listing was rejected: it cannot be edited, and its site cannot be submitted again as a new listing. If you think the decision is wrong, contact the directory.';

// ---------------------------------------------------------------------------------------------
// A change of website (update_listing and the edit page)

export type WebsiteChangeDecision =
  | { readonly allowed: true; readonly nextStatus: ListingStatus; readonly reviewRequested: boolean; readonly acceptedNow: boolean }
  | { readonly allowed: false; readonly message: string };

/**
 * A new website (one of another website identity: src/sites/website-identity.ts) is an edit
 * under the rules above, and the new site passes what a submission's site passes, before
 * anything is written: the safe fetch and inspection, not already listed in the directory, not
 * already one of the maker's own listings (rejected ones included). The automatic check then runs
 * on the new site with the listing's fields as they will be, exactly as for submit_product, and
 * decides only for a live listing:
 * - the check passes: the change is accepted at once; the listing stays live with the new site,
 *   and the old site is free;
 * - it does not: the listing goes to review (pending, the check's reasons recorded for the
 *   reviewer), and the old site's identity stays reserved to this listing (nobody else can
 *   submit it; its maker's own submission of it answers already_submitted) until a reviewer
 *   accepts the change by approving the listing, which frees it.
 * A listing that is not live goes (back) to review as any edit sends it, whatever the check
 * says: a passing check never takes a listing past a reviewer's request for changes or an
 * admin's hiding. Its old site is reserved in the same way until the approval.
 * A rejected listing cannot be edited, its website included.
 *
 * What depends on the site is derived again with it: the badge counts as verified no more (it
 * was found on the old site: Verify looks on the new one), so a free listing's link to its site
 * is nofollow until then; a logo or cover taken from the old site is replaced by what the new
 * site offers (none when it offers none); one set by an import stays. An address of the same
 * identity (https for http, www added, a trailing slash) is a plain edit of the field: the same
 * site, nothing checked again.
 */
export function decideWebsiteChange(state: ListingState, checkPassed: boolean): WebsiteChangeDecision {
  const edit = decideMakerEdit(state);
  if (!edit.allowed) return edit;
  if (state.status === 'live' && checkPassed) return { allowed: true, nextStatus: 'live', reviewRequested: false, acceptedNow: true };
  return { allowed: true, nextStatus: 'pending', reviewRequested: true, acceptedNow: false };
}

// ---------------------------------------------------------------------------------------------
// The automatic check of a submission

export interface SiteFacts {
  /** The page could be fetched and is HTML. */
  readonly reachable: boolean;
  /** Why not, when it could not be. */
  readonly problem?: string;
  /** The site's identity after redirects differs from the one submitted (another site). */
  readonly redirectedElsewhere?: boolean;
  readonly hasCover: boolean;
  readonly hasIcon: boolean;
}

export interface CheckInput {
  readonly site: SiteFacts;
  readonly name: string | undefined;
  readonly punchline: string | undefined;
  readonly description: string | undefined;
  /** A category was given and exists (unknown categories are refused before the check). */
  readonly category: string | undefined;
  readonly blockedBy: string | undefined;
}

export type CheckOutcome = { readonly publish: true; readonly reasons: readonly CheckReason[] } | { readonly publish: false; readonly reasons: readonly CheckReason[] };

/**
 * Publishes a submission only when every rule holds; otherwise it waits in the review queue with
 * every reason recorded for the admin. The rules (also in docs/makers.md):
 * 1. the site answered with an HTML page;
 * 2. it did not redirect to another site;
 * 3. the listing has a name and a punchline;
 * 4. it has a description;
 * 5. it has a category;
 * 6. the site is not on the blocklist (SITE_BLOCKLIST).
 * A site without any usable cover image or icon never reaches this check: it becomes a draft.
 */
export function automaticCheck(input: CheckInput): CheckOutcome {
  const reasons: CheckReason[] = [];
  if (!input.site.reachable) reasons.push({ code: 'site_unreachable', message: `The site could not be read: ${input.site.problem ?? 'no answer'}.` });
  if (input.site.redirectedElsewhere) reasons.push({ code: 'site_redirects', message: 'The site redirects to another site.' });
  if (!input.name) reasons.push({ code: 'missing_name', message: 'The listing has no name.' });
  if (!input.punchline) reasons.push({ code: 'missing_punchline', message: 'The listing has no punchline.' });
  if (!input.description) reasons.push({ code: 'missing_description', message: 'The listing has no description.' });
  if (!input.category) reasons.push({ code: 'missing_category', message: 'The listing has no category.' });
  if (input.blockedBy) reasons.push({ code: 'blocked_site', message: `The site is on the blocklist (${input.blockedBy}).` });
  return reasons.length === 0 ? { publish: true, reasons } : { publish: false, reasons };
}

/** Whether a host is on the blocklist: the entry itself or any subdomain of it. */
export function blocklistEntryFor(host: string, blocklist: readonly string[]): string | undefined {
  const h = host.toLowerCase().replace(/^www\./, '');
  return blocklist.find((entry) => h === entry || h.endsWith(`.${entry}`));
}

// ---------------------------------------------------------------------------------------------
// Draft limits: at most DRAFTS_PER_IP drafts per client address in DRAFT_WINDOW_MS

export const DRAFT_WINDOW_MS = 24 * 60 * 60 * 1000;
const DRAFTS_PER_IP = 5;

export interface DraftCounts {
  /** Drafts from this IP in the last 24 hours, and when the oldest of them was made. */
  readonly byIp: number;
  readonly oldestByIp: Date | null;
  /** Drafts from everyone in the last 24 hours, and the oldest. */
  readonly total: number;
  readonly oldestTotal: Date | null;
}

export type DraftAllowance = { allowed: true } | { allowed: false; retryAt: Date; message: string };

/**
 * At most DRAFTS_PER_IP drafts per IP in any 24 hours (rolling), and at most `cap` in all; a
 * refusal names the moment the oldest counted draft leaves the window.
 */
export function draftAllowance(counts: DraftCounts, cap: number, now: Date): DraftAllowance {
  const retryAfter = (oldest: Date | null) => new Date((oldest ?? now).getTime() + DRAFT_WINDOW_MS);
  if (counts.byIp >= DRAFTS_PER_IP) {
    const retryAt = retryAfter(counts.oldestByIp);
    return { allowed: false, retryAt, message: `This address has saved ${DRAFTS_PER_IP} drafts in the last 24 hours, the most allowed. The next draft will be accepted from ${retryAt.toISOString()}.` };
  }
  if (counts.total >= cap) {
    const retryAt = retryAfter(counts.oldestTotal);
    return { allowed: false, retryAt, message: `The directory has received as many drafts as it accepts in 24 hours. The next draft will be accepted from ${retryAt.toISOString()}.` };
  }
  return { allowed: true };
}

/** A claim link works once and for 7 days from its draft's creation. */
export const CLAIM_LINK_MS = 7 * 24 * 60 * 60 * 1000;

export type ClaimState = 'open' | 'used' | 'expired';

export function claimState(draft: { claimedAt: Date | null; expiresAt: Date }, now: Date): ClaimState {
  if (draft.claimedAt) return 'used';
  if (draft.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'open';
}

// ---------------------------------------------------------------------------------------------
// Payments (the premium plan)

export type UpgradeDecision = { allowed: true } | { allowed: false; message: string };

/** Only a live listing on the free plan can be upgraded. */
export function decideUpgrade(state: ListingState): UpgradeDecision {
  if (state.plan === 'premium') return { allowed: false, message: 'This listing is already on the premium plan.' };
  if (state.status !== 'live') return { allowed: false, message: 'Only a live listing can be upgraded to the premium plan; this one is not live.' };
  return { allowed: true };
}

/** The link from the listing page to the maker's site is followed for premium listings and verified badges. */
export function websiteFollowed(plan: Plan, badgeVerified: boolean): boolean {
  return plan === 'premium' || badgeVerified;
}

// ---------------------------------------------------------------------------------------------
// The premium profile (highlights, ideal for, FAQ, promo)

/** Only a premium listing has a profile; editing it follows the rules of any other edit. */
export function decidePremiumProfileEdit(state: ListingState): EditDecision {
  if (state.plan !== 'premium') return { allowed: false, message: 'Only a listing on the premium plan has a premium profile.' };
  return decideMakerEdit(state);
}

/**
 * A promo's last valid day (yyyy-mm-dd, as the Promo shows it) may not be already past: the
 * promo would never show. Days are UTC days, as the projection counts them.
 */
export function promoExpiryProblem(expiresAt: string, now: Date): string | undefined {
  const today = now.toISOString().slice(0, 10);
  return expiresAt < today ? `must be today (${today}, UTC) or later: a promo past its last day is never shown` : undefined;
}
