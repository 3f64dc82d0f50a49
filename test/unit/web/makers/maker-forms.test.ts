import { describe, expect, it } from 'vitest';
import { parseListingForm, parseProfileForm, parseSubmissionForm, profileValuesFrom, submissionValuesFrom } from '../../../../src/web/makers/maker-forms.ts';

const categories = [{ slug: 'design', name: 'Design' }];

describe('the submission form', () => {
  const base = { website: 'https://example.com', name: 'N', punchline: 'P', description: 'D', category: 'design' };

  it('reads tags separated by commas or lines, and leaves empty optional fields out', () => {
    const parsed = parseSubmissionForm(submissionValuesFrom({ ...base, tags: ' AI, note taking\n\n,x ', social: '', pricing_model: '' }), categories);
    expect(parsed).toEqual({ ok: true, value: { website: 'https://example.com/', name: 'N', punchline: 'P', description: 'D', category: 'design', tags: ['ai', 'note-taking', 'x'], plan: 'free' } });
  });

  it('asks for what the automatic check needs, in the order of the form', () => {
    const parsed = parseSubmissionForm(submissionValuesFrom({ tags: 'ok' }), categories);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : Object.keys(parsed.errors)).toEqual(['website', 'name', 'punchline', 'description', 'category']);
  });

  it('reports every invalid field at once: an unknown category beside an invalid website', () => {
    const parsed = parseSubmissionForm(submissionValuesFrom({ ...base, website: 'javascript:alert(1)', category: 'no-such-cat' }), categories);
    expect(parsed.ok ? [] : Object.keys(parsed.errors)).toEqual(['website', 'category']);
    const edit = parseListingForm({ website: 'http://localhost/', name: '', punchline: 'P', description: 'D', category: 'nope', pricing_model: '', social: '' }, categories);
    expect(edit.ok ? [] : Object.keys(edit.errors)).toEqual(['website', 'name', 'category']);
  });

  it('takes the first value of a field sent twice', () => {
    expect(submissionValuesFrom({ name: ['first', 'second'] }).name).toBe('first');
  });
});

describe('the edit form', () => {
  it('removes an emptied social handle and leaves an empty pricing model as it is', () => {
    const parsed = parseListingForm({ website: 'example.com', name: 'N', punchline: 'P', description: 'D', category: 'design', pricing_model: '', social: ' ' }, categories);
    expect(parsed).toEqual({ ok: true, value: { website: 'https://example.com/', name: 'N', punchline: 'P', description: 'D', category: 'design', social: null } });
  });

  it('asks for a website, which it reads as the submission form does', () => {
    const parsed = parseListingForm({ website: ' ', name: 'N', punchline: 'P', description: 'D', category: 'design', pricing_model: '', social: '' }, categories);
    expect(parsed).toEqual({ ok: false, errors: { website: "Enter the product's website, such as https://example.com" } });
  });
});

describe('the premium profile form', () => {
  it('reads lines, skips empty question rows and an empty promo', () => {
    const values = profileValuesFrom({ highlights: 'a\r\n\r\n b \rc', ideal_for: '', faq_question: ['', 'Q?'], faq_answer: ['', 'A.'], promo_code: '', promo_discount: '', promo_url: '', promo_expires_at: '' });
    expect(parseProfileForm(values)).toEqual({ ok: true, value: { highlights: ['a', 'b', 'c'], idealFor: [], faq: [{ question: 'Q?', answer: 'A.' }], promo: null } });
  });

  it('puts a question row error next to the row of the form it came from', () => {
    const values = profileValuesFrom({ faq_question: ['', '', 'Lonely?'], faq_answer: ['', '', ''] });
    expect(parseProfileForm(values)).toEqual({ ok: false, errors: { 'faq_answer-2': 'Answer 3 must not be empty' } });
  });

  it('reads no more rows than the limit and a few, so a flood of rows is reported, not stored', () => {
    const many = Array.from({ length: 500 }, (_, i) => `Q${i}`);
    const values = profileValuesFrom({ faq_question: many, faq_answer: many });
    expect(values.faq).toHaveLength(33);
    expect(parseProfileForm(values)).toEqual({ ok: false, errors: { faq: 'FAQ must have at most 30 questions' } });
  });
});

describe('the premium profile form', () => {
  it('reports a past last day of a promo together with the other problems', () => {
    const values = profileValuesFrom({ highlights: '', ideal_for: '', promo_code: 'SAVE', promo_discount: '10 %', promo_url: 'javascript:alert(1)', promo_expires_at: '2020-01-01' });
    const parsed = parseProfileForm(values, new Date('2026-11-23T12:00:00Z'));
    expect(parsed.ok ? [] : Object.keys(parsed.errors)).toEqual(['promo_url', 'promo_expires_at']);
    const alone = parseProfileForm({ ...values, promo_url: '' }, new Date('2026-11-23T12:00:00Z'));
    expect(alone).toEqual({ ok: false, errors: { promo_expires_at: expect.stringMatching(/^Promo expiry date must be today \(2026-11-23, UTC\) or later/) } });
  });
});
