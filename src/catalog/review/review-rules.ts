import type { HiddenReason, ListingStatus, Plan } from '../listings/listing-rules.ts';

/**
 * The rules of review and moderation, as pure functions: what an admin's decision does to a
 * listing, and what a scheduled badge re-check does. The commands (review.ts, badge-rechecks.ts)
 * load the state, ask these, and write what they answer in one short transaction.
 *
 * | action          | from                                       | to                 | feedback  |
 * |-----------------|--------------------------------------------|--------------------|-----------|
 * | approve         | pending, changes_requested, hidden         | live               | optional  |
 * | reject          | pending, changes_requested, live, hidden   | rejected           | required  |
 * | request_changes | pending, changes_requested, live, hidden   | changes_requested  | required  |
 * | hide            | pending, changes_requested, live, hidden for a missing badge | hidden (admin) | optional |
 * | restore         | hidden                                     | the state it was hidden from (live when unknown) | optional |
 * | feature         | live, not featured                         | featured           | none      |
 * | unfeature       | featured                                   | not featured       | none      |
 *
 * - A listing goes live only with a name and a punchline; `listed_at` is set the first time it
 *   goes live and kept afterwards (a listing hidden and restored keeps its place).
 * - A rejected listing is final: nothing moves it, its maker cannot edit it, and its site is not
 *   submitted again by its maker as a new listing (already_submitted, with the feedback).
 * - Only a live listing can be featured; it keeps the flag through hide and restore, and the flag
 *   shows publicly only while the listing is live.
 * - Restore brings a listing back to where it was hidden from: a hidden live listing comes back
 *   live, one hidden while it waited for review goes back to the queue.
 * - Each decision but feature/unfeature replaces the feedback the maker sees with its own (none
 *   clears it): the maker always reads the latest word on the listing.
 */
export const REVIEW_ACTIONS = ['approve', 'reject', 'request_changes', 'hide', 'restore', 'feature', 'unfeature'] as const;
export type ReviewAction = (typeof REVIEW_ACTIONS)[number];

export function isReviewAction(value: unknown): value is ReviewAction {
  return typeof value === 'string' && (REVIEW_ACTIONS as readonly string[]).includes(value);
}

/** The words for each action, as the pages and the command line print them. */
export const ACTION_PAST: Readonly<Record<ReviewAction | 'badge_hide' | 'badge_restore', string>> = {
  approve: 'approved',
  reject: 'rejected',
  request_changes: 'sent back for changes',
  hide: 'hidden',
  restore: 'restored',
  feature: 'featured',
  unfeature: 'no longer featured',
  badge_hide: 'hidden for a missing badge',
  badge_restore: 'back after its badge was found',
};

/** Feedback to the maker: at most this many characters. */
export const FEEDBACK_MAX = 2000;

export type FeedbackResult = { ok: true; feedback: string | null } | { ok: false; message: string };

/**
 * Feedback as typed by the admin: trimmed, empty meaning none. Line breaks and tabs are kept;
 * other control characters (which PostgreSQL's text refuses, or a mail would carry) are refused.
 */
export function parseFeedback(input: unknown): FeedbackResult {
  if (input === undefined || input === null) return { ok: true, feedback: null };
  if (typeof input !== 'string') return { ok: false, message: 'Feedback must be text.' };
  const text = input.replace(/\r\n?/g, '\n').trim();
  if (text === '') return { ok: true, feedback: null };
  if ([...text].length > FEEDBACK_MAX) return { ok: false, message: `Feedback must be at most ${FEEDBACK_MAX} characters (it has ${[...text].length}).` };
  if ([...text].some((c) => { const n = c.charCodeAt(0); return (n < 32 && n !== 9 && n !== 10) || n === 127; })) {
    return { ok: false, message: 'Feedback must not contain control characters.' };
  }
  return { ok: true, feedback: text };
}

export interface ReviewState {
  readonly status: ListingStatus;
  readonly hiddenReason: HiddenReason | null;
  readonly featured: boolean;
  readonly listedAt: Date | null;
  readonly name: string;
  readonly punchline: string;
  /** The status the listing had when it was last hidden (from its recorded decisions), or null. */
  readonly statusBeforeHide: ListingStatus | null;
}

/** A listing row's review state, as the queue and the decision command read it. */
export function reviewStateOf(row: {
  status: ListingStatus;
  hidden_reason: HiddenReason | null;
  featured: boolean;
  listed_at: Date | null;
  name: string;
  punchline: string;
  status_before_hide: ListingStatus | null;
}): ReviewState {
  return {
    status: row.status,
    hiddenReason: row.hidden_reason,
    featured: row.featured,
    listedAt: row.listed_at,
    name: row.name,
    punchline: row.punchline,
    statusBeforeHide: row.status_before_hide,
  };
}

interface ReviewChange {
  readonly action: ReviewAction;
  readonly from: ListingStatus;
  readonly to: ListingStatus;
  readonly hiddenReason: HiddenReason | null;
  readonly featured: boolean;
  readonly listedAt: Date | null;
  /** Recorded with the decision. */
  readonly feedback: string | null;
  /** Whether the maker's feedback becomes `feedback` (false: it stays as it was). */
  readonly replacesMakerFeedback: boolean;
  /** The listing (re-)enters the review queue. */
  readonly entersQueue: boolean;
}

export type ReviewDecision =
  | { readonly allowed: true; readonly change: ReviewChange }
  /** feedback: the feedback is missing or unusable; state: the listing's state does not allow the action. */
  | { readonly allowed: false; readonly problem: 'feedback' | 'state'; readonly message: string };

const STATE_WORDS: Readonly<Record<ListingStatus, string>> = {
  draft: 'a draft that was never submitted',
  pending: 'waiting for review',
  changes_requested: 'waiting for the maker\'s changes',
  live: 'live',
  rejected: 'rejected, which is final',
  hidden: 'hidden',
};

const FEEDBACK_REQUIRED: ReadonlySet<ReviewAction> = new Set(['reject', 'request_changes']);
const FROM: Readonly<Record<ReviewAction, ReadonlySet<ListingStatus>>> = {
  approve: new Set(['pending', 'changes_requested', 'hidden']),
  reject: new Set(['pending', 'changes_requested', 'live', 'hidden']),
  request_changes: new Set(['pending', 'changes_requested', 'live', 'hidden']),
  hide: new Set(['pending', 'changes_requested', 'live', 'hidden']),
  restore: new Set(['hidden']),
  feature: new Set(['live']),
  unfeature: new Set(['draft', 'pending', 'changes_requested', 'live', 'rejected', 'hidden']),
};

function refuse(problem: 'feedback' | 'state', message: string): ReviewDecision {
  return { allowed: false, problem, message };
}

/** Where a restored listing goes: back where it was hidden from, or live when that is unknown. */
function restoreTarget(state: ReviewState): ListingStatus {
  const before = state.statusBeforeHide;
  return before === 'pending' || before === 'changes_requested' || before === 'live' ? before : 'live';
}

/** What an admin's decision does to a listing in this state, or why it cannot be made. */
export function decideReview(action: ReviewAction, state: ReviewState, feedback: string | null, now: Date): ReviewDecision {
  if (FEEDBACK_REQUIRED.has(action) && !feedback) {
    return refuse('feedback', action === 'reject' ? 'Say why the listing is rejected: the maker reads this feedback.' : 'Say what the maker should change: the maker reads this feedback.');
  }
  if ((action === 'feature' || action === 'unfeature') && feedback) return refuse('feedback', 'Featuring carries no feedback: the maker is not asked to do anything.');
  if (!FROM[action].has(state.status)) return refuse('state', `This listing cannot be ${ACTION_PAST[action]}: it is ${STATE_WORDS[state.status]}.`);
  if (action === 'hide' && state.status === 'hidden' && state.hiddenReason !== 'badge_missing') return refuse('state', 'This listing is hidden already; restore it to bring it back.');
  if (action === 'feature' && state.featured) return refuse('state', 'This listing is featured already.');
  if (action === 'unfeature' && !state.featured) return refuse('state', 'This listing is not featured.');

  const to: ListingStatus = {
    approve: 'live',
    reject: 'rejected',
    request_changes: 'changes_requested',
    hide: 'hidden',
    restore: restoreTarget(state),
    feature: state.status,
    unfeature: state.status,
  }[action] as ListingStatus;
  if (to === 'live' && state.status !== 'live' && (state.name.trim() === '' || state.punchline.trim() === '')) {
    return refuse('state', 'This listing has no name or no punchline: a listing goes live only with both. Request changes instead.');
  }
  const featuring = action === 'feature' || action === 'unfeature';
  return {
    allowed: true,
    change: {
      action,
      from: state.status,
      to,
      hiddenReason: to === 'hidden' ? 'admin' : null,
      featured: action === 'feature' ? true : action === 'unfeature' ? false : state.featured,
      listedAt: to === 'live' ? (state.listedAt ?? now) : state.listedAt,
      feedback: featuring ? null : feedback,
      replacesMakerFeedback: !featuring,
      entersQueue: to === 'pending' && state.status !== 'pending',
    },
  };
}

/** Every action the state allows (feedback assumed given where it is required). */
export function allowedActions(state: ReviewState, now: Date): ReviewAction[] {
  return REVIEW_ACTIONS.filter((action) => decideReview(action, state, FEEDBACK_REQUIRED.has(action) ? 'feedback' : null, now).allowed);
}

export function feedbackRequired(action: ReviewAction): boolean {
  return FEEDBACK_REQUIRED.has(action);
}

// ---------------------------------------------------------------------------------------------
// Scheduled badge re-checks

/** Scheduled re-checks in a row that found the badge missing before the listing is hidden. */
const BADGE_MISSES_TO_HIDE = 2;

/** What the maker reads on a listing hidden for a missing badge. */
export const BADGE_MISSING_FEEDBACK =
  `The directory badge was missing from your site on ${BADGE_MISSES_TO_HIDE} checks in a row, a day apart, so the listing was hidden. ` +
  'To bring it back, put the badge on your site again and press Verify on this listing\'s edit page: the listing is live again as soon as the badge is found.';

export interface BadgeRecheckState {
  readonly status: ListingStatus;
  readonly plan: Plan;
  readonly badgeVerified: boolean;
  readonly misses: number;
}

export type BadgeRecheckOutcome = 'found' | 'missing' | 'inconclusive';

export type BadgeRecheckDecision =
  /** The listing is no longer a live free listing with a verified badge: nothing to do. */
  | { readonly apply: false }
  | {
      readonly apply: true;
      readonly misses: number;
      /** When the check saw the site (null: it could not, keep the last time). */
      readonly checkedAt: Date | null;
      /** The next scheduled check; null once the listing is hidden (Verify schedules again). */
      readonly nextCheckAt: Date | null;
      /** Hide the listing for a missing badge (and the badge stops counting as verified). */
      readonly hide: boolean;
    };

/**
 * A scheduled re-check of a verified badge: found resets the count of misses; missing counts
 * one more and hides the listing at BADGE_MISSES_TO_HIDE in a row; inconclusive (the site could
 * not be read) changes nothing but the time of the next check.
 */
export function decideBadgeRecheck(state: BadgeRecheckState, outcome: BadgeRecheckOutcome, now: Date, nextCheckAt: Date): BadgeRecheckDecision {
  if (state.status !== 'live' || state.plan !== 'free' || !state.badgeVerified) return { apply: false };
  switch (outcome) {
    case 'found':
      return { apply: true, misses: 0, checkedAt: now, nextCheckAt, hide: false };
    case 'inconclusive':
      return { apply: true, misses: state.misses, checkedAt: null, nextCheckAt, hide: false };
    case 'missing': {
      const misses = state.misses + 1;
      const hide = misses >= BADGE_MISSES_TO_HIDE;
      return { apply: true, misses, checkedAt: now, nextCheckAt: hide ? null : nextCheckAt, hide };
    }
  }
}

/**
 * When a badge is checked next: `intervalMs` after this check, moved by up to `jitterMs` either
 * way (random() in [0, 1)), so checks that fell together drift apart over the day rather than
 * hitting the fetcher at once. Never earlier than a minute from now.
 */
/** A verified badge is looked at again a day after each check, moved up to 2 hours either way. */
export const BADGE_RECHECK_SCHEDULE = { intervalMs: 24 * 60 * 60 * 1000, jitterMs: 2 * 60 * 60 * 1000 } as const;

export function nextBadgeCheckAt(now: Date, intervalMs: number, jitterMs: number, random: () => number): Date {
  const offset = Math.round((random() * 2 - 1) * jitterMs);
  return new Date(now.getTime() + Math.max(60_000, intervalMs + offset));
}
