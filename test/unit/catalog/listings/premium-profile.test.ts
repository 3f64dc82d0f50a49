import { describe, expect, it } from 'vitest';
import { decidePremiumProfileEdit, promoExpiryProblem, type ListingState } from '../../../../src/catalog/listings/listing-rules.ts';
import { premiumProfileSchema, profileIssues } from '../../../../src/catalog/listings/premium-profile.ts';

const state = (extra: Partial<ListingState>): ListingState => ({ status: 'live', hiddenReason: null, plan: 'premium', badgeVerified: false, listedAt: null, ...extra });

describe('the premium profile rules', () => {
  it('belong to premium listings only, under the rules of any edit', () => {
    expect(decidePremiumProfileEdit(state({ plan: 'free' }))).toEqual({ allowed: false, message: 'Only a listing on the premium plan has a premium profile.' });
    expect(decidePremiumProfileEdit(state({}))).toEqual({ allowed: true, nextStatus: 'live', reviewRequested: false });
    expect(decidePremiumProfileEdit(state({ status: 'changes_requested' }))).toEqual({ allowed: true, nextStatus: 'pending', reviewRequested: true });
    expect(decidePremiumProfileEdit(state({ status: 'rejected' })).allowed).toBe(false);
  });

  it('refuse a promo whose last day has passed, counting UTC days', () => {
    const now = new Date('2030-06-15T23:30:00Z');
    expect(promoExpiryProblem('2030-06-15', now)).toBeUndefined();
    expect(promoExpiryProblem('2031-01-01', now)).toBeUndefined();
    expect(promoExpiryProblem('2030-06-14', now)).toMatch(/^must be today \(2030-06-15, UTC\) or later/);
  });
});

describe('premiumProfileSchema', () => {
  const valid = { highlights: ['Fast'], ideal_for: [], faq: [{ question: 'Q?', answer: 'A.' }], promo: { code: 'X', discount: '10%', url: null, expires_at: null } };

  it('parses a profile into the shape the command writes', () => {
    expect(premiumProfileSchema.parse(valid)).toEqual({ highlights: ['Fast'], idealFor: [], faq: [{ question: 'Q?', answer: 'A.' }], promo: { code: 'X', discount: '10%', url: null, expiresAt: null } });
    expect(premiumProfileSchema.parse({ ...valid, promo: null }).promo).toBeNull();
  });

  it('names the value each problem is about', () => {
    const parsed = premiumProfileSchema.safeParse({
      highlights: ['ok', 'x'.repeat(301)],
      ideal_for: ['<b>bold</b>'],
      faq: [{ question: 'Q', answer: '' }],
      promo: { code: 'C', discount: 'D', url: 'javascript:alert(1)', expires_at: '2030-13-01' },
      extra: 1,
    });
    expect(parsed.success).toBe(false);
    const messages = profileIssues(parsed.error!).map((i) => i.message).sort();
    expect(messages).toEqual([
      'answer 1 must not be empty',
      'extra is not part of the premium profile',
      'highlight 2 must be at most 300 characters',
      'ideal for line 1 must be plain text, without HTML or scripts',
      'promo URL must be an http(s) address with a domain name, such as https://example.com/offer',
      'promo expiry date must be a date, yyyy-mm-dd',
    ]);
  });
});
