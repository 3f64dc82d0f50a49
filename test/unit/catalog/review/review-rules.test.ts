import { describe, expect, it } from 'vitest';
import type { ListingStatus } from '../../../../src/catalog/listings/listing-rules.ts';
import { decisionMail } from '../../../../src/catalog/review/review-mails.ts';
import {
  BADGE_MISSING_FEEDBACK,
  FEEDBACK_MAX,
  REVIEW_ACTIONS,
  allowedActions,
  decideBadgeRecheck,
  decideReview,
  nextBadgeCheckAt,
  parseFeedback,
  type ReviewAction,
  type ReviewState,
} from '../../../../src/catalog/review/review-rules.ts';

const NOW = new Date('2026-03-01T12:00:00Z');
const EARLIER = new Date('2025-12-24T08:00:00Z');

const state = (status: ListingStatus, extra: Partial<ReviewState> = {}): ReviewState => ({
  status,
  hiddenReason: status === 'hidden' ? 'admin' : null,
  featured: false,
  listedAt: null,
  name: 'Pixel Forge',
  punchline: 'Images from prompts',
  statusBeforeHide: null,
  ...extra,
});

const feedbackFor = (action: ReviewAction) => (action === 'reject' || action === 'request_changes' ? 'Please add pricing.' : null);

describe('which state each action moves a listing from and to', () => {
  const expected: Record<ReviewAction, Partial<Record<ListingStatus, ListingStatus>>> = {
    approve: { pending: 'live', changes_requested: 'live', hidden: 'live' },
    reject: { pending: 'rejected', changes_requested: 'rejected', live: 'rejected', hidden: 'rejected' },
    request_changes: { pending: 'changes_requested', changes_requested: 'changes_requested', live: 'changes_requested', hidden: 'changes_requested' },
    hide: { pending: 'hidden', changes_requested: 'hidden', live: 'hidden' },
    restore: { hidden: 'live' },
    feature: { live: 'live' },
    unfeature: {},
  };
  const statuses: ListingStatus[] = ['draft', 'pending', 'changes_requested', 'live', 'rejected', 'hidden'];
  for (const action of REVIEW_ACTIONS) {
    for (const status of statuses) {
      const to = expected[action][status];
      it(`${action} from ${status}: ${to ?? 'refused'}`, () => {
        const decision = decideReview(action, state(status), feedbackFor(action), NOW);
        if (to === undefined) {
          expect(decision).toMatchObject({ allowed: false, problem: 'state' });
        } else {
          expect(decision).toMatchObject({ allowed: true, change: { action, from: status, to } });
        }
      });
    }
  }

  it('refuses anything on a rejected listing but unfeaturing: rejection is final', () => {
    expect(allowedActions(state('rejected'), NOW)).toEqual([]);
    expect(allowedActions(state('rejected', { featured: true }), NOW)).toEqual(['unfeature']);
  });
});

describe('approve', () => {
  it('sets listed_at on the first publication only', () => {
    const first = decideReview('approve', state('pending'), null, NOW);
    expect(first).toMatchObject({ allowed: true, change: { listedAt: NOW, hiddenReason: null } });
    const again = decideReview('approve', state('hidden', { listedAt: EARLIER }), null, NOW);
    expect(again).toMatchObject({ allowed: true, change: { listedAt: EARLIER } });
  });

  it('refuses a listing without a name or a punchline', () => {
    for (const extra of [{ name: '' }, { punchline: '' }, { punchline: '   ' }]) {
      const decision = decideReview('approve', state('pending', extra), null, NOW);
      expect(decision).toMatchObject({ allowed: false, problem: 'state' });
      if (!decision.allowed) expect(decision.message).toMatch(/name or no punchline/);
    }
  });

  it("replaces the maker's feedback with its own, or clears it", () => {
    expect(decideReview('approve', state('pending'), 'Welcome!', NOW)).toMatchObject({ change: { feedback: 'Welcome!', replacesMakerFeedback: true } });
    expect(decideReview('approve', state('changes_requested'), null, NOW)).toMatchObject({ change: { feedback: null, replacesMakerFeedback: true } });
  });
});

describe('reject and request changes', () => {
  it('require feedback', () => {
    for (const action of ['reject', 'request_changes'] as const) {
      expect(decideReview(action, state('pending'), null, NOW)).toMatchObject({ allowed: false, problem: 'feedback' });
      expect(decideReview(action, state('pending'), 'Add a description.', NOW)).toMatchObject({ allowed: true, change: { feedback: 'Add a description.' } });
    }
  });

  it('check the feedback before the state', () => {
    expect(decideReview('reject', state('rejected'), null, NOW)).toMatchObject({ allowed: false, problem: 'feedback' });
  });
});

describe('hide and restore', () => {
  it('hide a listing for an admin until restored; a listing hidden for its badge can be hidden by an admin instead', () => {
    expect(decideReview('hide', state('live', { featured: true }), null, NOW)).toMatchObject({
      allowed: true,
      change: { to: 'hidden', hiddenReason: 'admin', featured: true },
    });
    expect(decideReview('hide', state('hidden', { hiddenReason: 'badge_missing' }), null, NOW)).toMatchObject({ allowed: true, change: { hiddenReason: 'admin' } });
    expect(decideReview('hide', state('hidden', { hiddenReason: 'admin' }), null, NOW)).toMatchObject({ allowed: false, problem: 'state' });
    // an imported hidden listing has no recorded reason
    expect(decideReview('hide', state('hidden', { hiddenReason: null }), null, NOW)).toMatchObject({ allowed: false, problem: 'state' });
  });

  it('restore a listing where it was hidden from: live, or back to the queue', () => {
    expect(decideReview('restore', state('hidden', { statusBeforeHide: 'live', listedAt: EARLIER }), null, NOW)).toMatchObject({
      allowed: true,
      change: { to: 'live', listedAt: EARLIER, hiddenReason: null, entersQueue: false },
    });
    expect(decideReview('restore', state('hidden', { statusBeforeHide: 'pending' }), null, NOW)).toMatchObject({
      allowed: true,
      change: { to: 'pending', listedAt: null, entersQueue: true },
    });
    expect(decideReview('restore', state('hidden', { statusBeforeHide: 'changes_requested' }), null, NOW)).toMatchObject({ change: { to: 'changes_requested' } });
    // unknown (imported hidden) or a state it cannot return to: live
    expect(decideReview('restore', state('hidden', { statusBeforeHide: null }), null, NOW)).toMatchObject({ change: { to: 'live', listedAt: NOW } });
    expect(decideReview('restore', state('hidden', { statusBeforeHide: 'rejected' }), null, NOW)).toMatchObject({ change: { to: 'live' } });
  });

  it('restore to live needs a name and a punchline like approve', () => {
    expect(decideReview('restore', state('hidden', { statusBeforeHide: 'live', punchline: '' }), null, NOW)).toMatchObject({ allowed: false });
    expect(decideReview('restore', state('hidden', { statusBeforeHide: 'pending', punchline: '' }), null, NOW)).toMatchObject({ allowed: true });
  });
});

describe('feature and unfeature', () => {
  it('feature only a live listing not featured yet, and keep the feedback the maker sees', () => {
    expect(decideReview('feature', state('live'), null, NOW)).toMatchObject({ allowed: true, change: { featured: true, from: 'live', to: 'live', replacesMakerFeedback: false } });
    expect(decideReview('feature', state('live', { featured: true }), null, NOW)).toMatchObject({ allowed: false, problem: 'state' });
    expect(decideReview('feature', state('pending'), null, NOW)).toMatchObject({ allowed: false, problem: 'state' });
  });

  it('unfeature a featured listing in any state', () => {
    expect(decideReview('unfeature', state('hidden', { featured: true }), null, NOW)).toMatchObject({ allowed: true, change: { featured: false, to: 'hidden', hiddenReason: 'admin' } });
    expect(decideReview('unfeature', state('live'), null, NOW)).toMatchObject({ allowed: false });
  });

  it('carry no feedback', () => {
    expect(decideReview('feature', state('live'), 'Nice', NOW)).toMatchObject({ allowed: false, problem: 'feedback' });
  });

  it('are offered as the state allows', () => {
    expect(allowedActions(state('live'), NOW)).toEqual(['reject', 'request_changes', 'hide', 'feature']);
    expect(allowedActions(state('pending'), NOW)).toEqual(['approve', 'reject', 'request_changes', 'hide']);
    expect(allowedActions(state('hidden', { featured: true }), NOW)).toEqual(['approve', 'reject', 'request_changes', 'restore', 'unfeature']);
  });
});

describe('feedback as typed', () => {
  it('is trimmed, empty meaning none, line breaks kept', () => {
    expect(parseFeedback(undefined)).toEqual({ ok: true, feedback: null });
    expect(parseFeedback('   \n ')).toEqual({ ok: true, feedback: null });
    expect(parseFeedback('  Line one\r\nLine two\t(tab) ')).toEqual({ ok: true, feedback: 'Line one\nLine two\t(tab)' });
  });

  it(`holds at most ${FEEDBACK_MAX} characters, counted as characters rather than UTF-16 units`, () => {
    expect(parseFeedback('x'.repeat(FEEDBACK_MAX))).toEqual({ ok: true, feedback: 'x'.repeat(FEEDBACK_MAX) });
    expect(parseFeedback('😀'.repeat(FEEDBACK_MAX))).toMatchObject({ ok: true });
    const over = parseFeedback('x'.repeat(FEEDBACK_MAX + 1));
    expect(over).toMatchObject({ ok: false });
    if (!over.ok) expect(over.message).toBe(`Feedback must be at most ${FEEDBACK_MAX} characters (it has ${FEEDBACK_MAX + 1}).`);
  });

  it('refuses control characters and what is not text', () => {
    expect(parseFeedback('a\u0000b')).toMatchObject({ ok: false });
    expect(parseFeedback('a\u001bb')).toMatchObject({ ok: false });
    expect(parseFeedback(['a'])).toMatchObject({ ok: false });
  });
});

describe('scheduled badge re-checks', () => {
  const live = { status: 'live' as const, plan: 'free' as const, badgeVerified: true, misses: 0 };
  const next = new Date(NOW.getTime() + 86_400_000);

  it('found: the misses start again from 0', () => {
    expect(decideBadgeRecheck({ ...live, misses: 1 }, 'found', NOW, next)).toEqual({ apply: true, misses: 0, checkedAt: NOW, nextCheckAt: next, hide: false });
  });

  it('missing once counts one miss; twice in a row hides the listing and stops the schedule', () => {
    expect(decideBadgeRecheck(live, 'missing', NOW, next)).toEqual({ apply: true, misses: 1, checkedAt: NOW, nextCheckAt: next, hide: false });
    expect(decideBadgeRecheck({ ...live, misses: 1 }, 'missing', NOW, next)).toEqual({ apply: true, misses: 2, checkedAt: NOW, nextCheckAt: null, hide: true });
  });

  it('inconclusive changes nothing but the next check, whatever the misses', () => {
    expect(decideBadgeRecheck({ ...live, misses: 1 }, 'inconclusive', NOW, next)).toEqual({ apply: true, misses: 1, checkedAt: null, nextCheckAt: next, hide: false });
  });

  it('leaves alone a listing that is no longer live, free and verified', () => {
    expect(decideBadgeRecheck({ ...live, status: 'hidden' }, 'missing', NOW, next)).toEqual({ apply: false });
    expect(decideBadgeRecheck({ ...live, plan: 'premium' }, 'missing', NOW, next)).toEqual({ apply: false });
    expect(decideBadgeRecheck({ ...live, badgeVerified: false }, 'missing', NOW, next)).toEqual({ apply: false });
  });

  it('schedules the next check an interval later, moved by at most the jitter, never sooner than a minute', () => {
    const day = 86_400_000;
    const hours2 = 7_200_000;
    expect(nextBadgeCheckAt(NOW, day, hours2, () => 0).getTime()).toBe(NOW.getTime() + day - hours2);
    expect(nextBadgeCheckAt(NOW, day, hours2, () => 0.5).getTime()).toBe(NOW.getTime() + day);
    expect(nextBadgeCheckAt(NOW, day, hours2, () => 0.999999).getTime()).toBeLessThanOrEqual(NOW.getTime() + day + hours2);
    expect(nextBadgeCheckAt(NOW, 1000, 0, () => 0.5).getTime()).toBe(NOW.getTime() + 60_000);
  });
});

describe('e-mails to makers', () => {
  const urls = { siteUrl: 'https://directory.test', publicUrl: 'https://catalog.test' };
  const listing = { slug: 'pixel-forge', name: 'Pixel Forge' };

  it('link the public page on approval and the edit page otherwise, naming the listing', () => {
    const approved = decisionMail('approve', { to: 'm@example.com', listing, feedback: null, urls });
    expect(approved.subject).toContain('Pixel Forge');
    expect(approved.text).toContain('https://directory.test/products/pixel-forge');
    for (const kind of ['reject', 'request_changes', 'badge_hide'] as const) {
      const mail = decisionMail(kind, { to: 'm@example.com', listing, feedback: 'Add pricing.', urls });
      expect(mail.to).toBe('m@example.com');
      expect(mail.subject, kind).toContain('Pixel Forge');
      expect(mail.text, kind).toContain('https://catalog.test/dashboard/listings/pixel-forge');
      expect(mail.text, kind).not.toContain('/products/');
    }
    expect(decisionMail('reject', { to: 'm@example.com', listing, feedback: 'Spam.', urls }).text).toContain('Spam.');
    expect(decisionMail('badge_hide', { to: 'm@example.com', listing, feedback: null, urls }).text).toContain(BADGE_MISSING_FEEDBACK);
  });
});
