import { describe, expect, it } from 'vitest';
import {
  automaticCheck,
  blocklistEntryFor,
  claimState,
  decideMakerEdit,
  decideUpgrade,
  decideWebsiteChange,
  REJECTED_IS_FINAL,
  draftAllowance,
  websiteFollowed,
  type ListingState,
  type ListingStatus,
} from '../../../../src/catalog/listings/listing-rules.ts';

const state = (status: ListingStatus, extra: Partial<ListingState> = {}): ListingState => ({
  status,
  hiddenReason: null,
  plan: 'free',
  badgeVerified: false,
  listedAt: null,
  ...extra,
});

describe('maker edits', () => {
  it('keep a live listing live, refuse a rejected one, and send every other state to review', () => {
    expect(decideMakerEdit(state('live'))).toEqual({ allowed: true, nextStatus: 'live', reviewRequested: false });
    expect(decideMakerEdit(state('rejected')).allowed).toBe(false);
    for (const s of ['draft', 'pending', 'changes_requested', 'hidden'] as const) {
      expect(decideMakerEdit(state(s)), s).toEqual({ allowed: true, nextStatus: 'pending', reviewRequested: true });
    }
    expect(decideMakerEdit(state('hidden', { hiddenReason: 'admin' }))).toMatchObject({ nextStatus: 'pending' });
  });
});

describe('a change of website', () => {
  it('is accepted at once only for a live listing whose new site passes the check', () => {
    expect(decideWebsiteChange(state('live'), true)).toEqual({ allowed: true, nextStatus: 'live', reviewRequested: false, acceptedNow: true });
    expect(decideWebsiteChange(state('live'), false)).toEqual({ allowed: true, nextStatus: 'pending', reviewRequested: true, acceptedNow: false });
  });

  it('sends every other listing to review, passing or not: a check never takes a listing past a reviewer or an admin', () => {
    for (const s of ['draft', 'pending', 'changes_requested', 'hidden'] as const) {
      for (const passed of [true, false]) {
        expect(decideWebsiteChange(state(s, { hiddenReason: s === 'hidden' ? 'admin' : null }), passed), `${s} ${passed}`).toEqual({ allowed: true, nextStatus: 'pending', reviewRequested: true, acceptedNow: false });
      }
    }
  });

  it('is refused for a rejected listing', () => {
    expect(decideWebsiteChange(state('rejected'), true)).toEqual({ allowed: false, message: REJECTED_IS_FINAL });
  });
});

describe('the automatic check', () => {
  const site = { reachable: true, hasCover: true, hasIcon: true };
  const complete = { site, name: 'A', punchline: 'B', description: 'C', category: 'design', blockedBy: undefined };

  it('publishes a complete submission of a readable site', () => {
    expect(automaticCheck(complete)).toEqual({ publish: true, reasons: [] });
  });

  it('holds for review with every reason recorded', () => {
    const outcome = automaticCheck({ ...complete, site: { ...site, reachable: false, problem: 'timed out', redirectedElsewhere: true }, name: undefined, punchline: undefined, description: undefined, category: undefined, blockedBy: 'spam.example' });
    expect(outcome.publish).toBe(false);
    expect(outcome.reasons.map((r) => r.code)).toEqual(['site_unreachable', 'site_redirects', 'missing_name', 'missing_punchline', 'missing_description', 'missing_category', 'blocked_site']);
    expect(outcome.reasons[0]!.message).toContain('timed out');
  });

  it('matches the blocklist by host and subdomain, not by suffix of a word', () => {
    expect(blocklistEntryFor('spam.example', ['spam.example'])).toBe('spam.example');
    expect(blocklistEntryFor('www.shop.spam.example', ['spam.example'])).toBe('spam.example');
    expect(blocklistEntryFor('notspam.example', ['spam.example'])).toBeUndefined();
  });
});

describe('draft limits', () => {
  const now = new Date('2026-11-23T12:00:00Z');
  const hoursAgo = (h: number) => new Date(now.getTime() - h * 3600_000);

  it('allow up to 5 per address and the overall cap, and name when the next is accepted', () => {
    expect(draftAllowance({ byIp: 4, oldestByIp: hoursAgo(3), total: 9, oldestTotal: hoursAgo(20) }, 10, now)).toEqual({ allowed: true });
    const perIp = draftAllowance({ byIp: 5, oldestByIp: hoursAgo(3), total: 5, oldestTotal: hoursAgo(3) }, 10, now);
    expect(perIp).toMatchObject({ allowed: false, retryAt: new Date('2026-11-24T09:00:00Z') });
    const cap = draftAllowance({ byIp: 0, oldestByIp: null, total: 10, oldestTotal: hoursAgo(20) }, 10, now);
    expect(cap).toMatchObject({ allowed: false, retryAt: new Date('2026-11-23T16:00:00Z') });
    if (!cap.allowed) expect(cap.message).toContain('2026-11-23T16:00:00.000Z');
  });
});

describe('claim links', () => {
  const now = new Date('2026-11-23T12:00:00Z');
  it('work once and until their expiry', () => {
    expect(claimState({ claimedAt: null, expiresAt: new Date('2026-11-23T12:00:01Z') }, now)).toBe('open');
    expect(claimState({ claimedAt: null, expiresAt: now }, now)).toBe('expired');
    expect(claimState({ claimedAt: new Date('2026-11-22T00:00:00Z'), expiresAt: new Date('2026-11-30T00:00:00Z') }, now)).toBe('used');
  });
});

describe('upgrades and the followed link', () => {
  it('upgrade only live free listings', () => {
    expect(decideUpgrade(state('live'))).toEqual({ allowed: true });
    expect(decideUpgrade(state('pending')).allowed).toBe(false);
    expect(decideUpgrade(state('live', { plan: 'premium' })).allowed).toBe(false);
  });

  it('follow the maker\'s site for premium listings and verified badges only', () => {
    expect(websiteFollowed('free', false)).toBe(false);
    expect(websiteFollowed('free', true)).toBe(true);
    expect(websiteFollowed('premium', false)).toBe(true);
  });
});
