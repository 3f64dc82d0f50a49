import type { Mailer } from '../../auth/mailer.ts';
import { CatalogError, badRequest, conflict } from '../../contract/errors.ts';
import { ErrorCode } from '../../contract/schemas.ts';
import type { Pool } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import type { HiddenReason, ListingStatus } from '../listings/listing-rules.ts';
import type { ListingUrls } from '../listings/listing-urls.ts';
import { decisionMail, isMailedDecision } from './review-mails.ts';
import { decideReview, parseFeedback, reviewStateOf, type ReviewAction } from './review-rules.ts';

/**
 * An admin's decision about a listing (the review queue, the admin's listing page, and
 * `catalog review`): the rules of review-rules.ts applied in one short transaction that locks
 * the listing, changes it and records the decision (who, when, from which state to which, the
 * feedback). The outbox trigger carries what the public sees to REST and MCP; the maker reads
 * the feedback in my_listings and on the dashboard, and is e-mailed after the commit (mail is
 * network I/O, and a mail that fails leaves the decision made).
 */
export interface ReviewDeps {
  readonly pool: Pool;
  readonly urls: ListingUrls;
  readonly mailer: Mailer;
  /** Told when a maker's e-mail could not be handed on; the decision stands. */
  readonly onMailError?: (err: unknown) => void;
  /** The clock; tests may move it. */
  readonly now?: () => Date;
}

export interface DecisionRequest {
  readonly action: ReviewAction;
  /** As typed: trimmed, empty meaning none (review-rules.ts parseFeedback). */
  readonly feedback?: unknown;
  /** The admin deciding, or null for the directory itself (`catalog review` without --as). */
  readonly decidedBy: string | null;
}

export interface RecordedDecision {
  readonly id: number;
  readonly listing: { readonly id: string; readonly slug: string; readonly name: string };
  readonly action: ReviewAction;
  readonly from: ListingStatus;
  readonly to: ListingStatus;
  readonly featured: boolean;
  readonly feedback: string | null;
  readonly decidedAt: Date;
  /** Settles once the maker's e-mail was handed on (true), or failed or was not due (false); never rejects. */
  readonly notified: Promise<boolean>;
}

function noSuchListing(slug: string): CatalogError {
  return new CatalogError(ErrorCode.NOT_FOUND, 404, `No listing has the slug '${slug.slice(0, 200)}'.`);
}

interface LockedRow {
  id: string;
  slug: string;
  name: string;
  punchline: string;
  status: ListingStatus;
  hidden_reason: HiddenReason | null;
  featured: boolean;
  listed_at: Date | null;
  maker_email: string | null;
  status_before_hide: ListingStatus | null;
}

export async function decideListing(deps: ReviewDeps, slug: string, request: DecisionRequest): Promise<RecordedDecision> {
  const parsed = parseFeedback(request.feedback);
  if (!parsed.ok) throw badRequest([{ path: ['feedback'], message: parsed.message }]);
  const now = deps.now?.() ?? new Date();

  const recorded = await withTransaction(deps.pool, async (client) => {
    if (request.decidedBy !== null) {
      const { rows } = await client.query<{ is_admin: boolean }>('SELECT is_admin FROM catalog.makers WHERE id = $1', [request.decidedBy]);
      if (!rows[0]?.is_admin) throw new CatalogError(ErrorCode.FORBIDDEN, 403, 'Only an admin may decide about listings.');
    }
    const { rows } = await client.query<LockedRow>(
      `SELECT l.id, l.slug, l.name, l.punchline, l.status::text AS status, l.hidden_reason, l.featured, l.listed_at, m.email AS maker_email,
              (SELECT d.from_status::text FROM catalog.review_decisions d
                WHERE d.listing_id = l.id AND d.action IN ('hide', 'badge_hide')
                ORDER BY d.created_at DESC, d.id DESC LIMIT 1) AS status_before_hide
         FROM catalog.listings l LEFT JOIN catalog.makers m ON m.id = l.maker_id
        WHERE l.slug = $1
          FOR UPDATE OF l`,
      [slug],
    );
    const row = rows[0];
    if (!row) throw noSuchListing(slug);
    const decision = decideReview(
      request.action,
      reviewStateOf(row),
      parsed.feedback,
      now,
    );
    if (!decision.allowed) {
      throw decision.problem === 'feedback' ? badRequest([{ path: ['feedback'], message: decision.message }]) : conflict(decision.message);
    }
    const change = decision.change;
    await client.query(
      `UPDATE catalog.listings
          SET status = $2, hidden_reason = $3, featured = $4, listed_at = $5,
              review_feedback = CASE WHEN $6 THEN $7 ELSE review_feedback END,
              review_requested_at = CASE WHEN $8 THEN COALESCE(review_requested_at, $9) ELSE review_requested_at END,
              -- a listing going live by a decision has its change of website accepted: the site
              -- it kept reserved meanwhile is free (listing-rules.ts, decideWebsiteChange)
              previous_website = CASE WHEN $10 THEN NULL ELSE previous_website END,
              previous_website_key = CASE WHEN $10 THEN NULL ELSE previous_website_key END,
              updated_at = $9
        WHERE id = $1`,
      [row.id, change.to, change.hiddenReason, change.featured, change.listedAt, change.replacesMakerFeedback, change.feedback, change.entersQueue, now, change.to === 'live'],
    );
    const inserted = await client.query<{ id: number }>(
      `INSERT INTO catalog.review_decisions (listing_id, decided_by, action, from_status, to_status, feedback, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
      [row.id, request.decidedBy, change.action, change.from, change.to, change.feedback, now],
    );
    return { row, change, id: inserted.rows[0]!.id };
  });

  const { row, change } = recorded;
  const listing = { id: row.id, slug: row.slug, name: row.name };
  let notified: Promise<boolean> = Promise.resolve(false);
  if (row.maker_email && isMailedDecision(change.action)) {
    const mail = decisionMail(change.action, { to: row.maker_email, listing, feedback: change.feedback, urls: deps.urls });
    notified = deps.mailer.send(mail).then(
      () => true,
      (err: unknown) => {
        deps.onMailError?.(err);
        return false;
      },
    );
  }
  return {
    id: recorded.id,
    listing,
    action: change.action,
    from: change.from,
    to: change.to,
    featured: change.featured,
    feedback: change.feedback,
    decidedAt: now,
    notified,
  };
}
