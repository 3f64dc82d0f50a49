import { describe, expect, it } from 'vitest';
import { LISTING_LIMITS } from '../../../../src/contract/listing-limits.ts';
import {
  Browser,
  fillAndPost,
  formEntries,
  notices,
  parsePage,
  post,
  shownErrors,
  shownValue,
  useMakerPages,
  type MakerBrowser,
} from '../../../helpers/maker-pages.ts';

/**
 * A listing's edit page over real HTTP: the review rules of an edit (live stays live, others go
 * to review, rejected is refused), every field's refusal, the premium profile from the form to
 * the REST API, Verify against makers' sites served on loopback (found, missing, inconclusive,
 * a hidden listing coming back), the upgrade's payment link, and another maker's listing.
 */
const pages = useMakerPages({ makerPrefix: 'editor', sitePrefix: 'edit' });
const { newMaker, freshSite } = pages;

const edit = (slug: string) => `/dashboard/listings/${slug}`;

/** A listing made through the submission form; live unless the site offers no image. */
async function createListing(browser: MakerBrowser, overrides: Record<string, string> = {}): Promise<string> {
  const res = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', {
    website: freshSite(),
    name: 'Edit Me',
    punchline: 'A listing to edit',
    description: 'First *version*.',
    category: 'design',
    pricing_model: 'paid',
    social: 'editme',
    ...overrides,
  });
  if (res.status !== 303) throw new Error(`submission answered ${res.status}: ${await res.text()}`);
  return /\/dashboard\/listings\/(.+)$/.exec(res.headers.get('location')!)![1]!;
}

async function row(slug: string) {
  const { rows } = await pages.stack.db.pool.query(
    `SELECT status::text AS status, plan::text AS plan, name, punchline, description, description_source, category, pricing_model::text AS pricing_model, social,
       hidden_reason, review_requested_at, badge_status, highlights, ideal_for, faq, promo_code, promo_discount, promo_url,
       to_char(promo_expires_at, 'YYYY-MM-DD') AS promo_expires_at, updated_at
     FROM catalog.listings WHERE slug = $1`,
    [slug],
  );
  return rows[0] as Record<string, unknown>;
}

async function setState(slug: string, sql: string): Promise<void> {
  await pages.stack.db.pool.query(`UPDATE catalog.listings SET ${sql} WHERE slug = $1`, [slug]);
}

async function restProduct(slug: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${pages.stack.baseUrl}/api/v1/products/${slug}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function openEdit(browser: MakerBrowser, slug: string) {
  const res = await browser.request(edit(slug));
  const html = await res.text();
  return { res, html, page: parsePage(html) };
}

const formActions = (html: string) => parsePage(html).all('form').map((f) => parsePage(html).attr(f, 'action'));

describe('the edit page', () => {
  it("shows the listing's fields, its Markdown as written, and what saving will do", async () => {
    const browser = await newMaker();
    const slug = await createListing(browser);
    const { res, html, page } = await openEdit(browser, slug);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(page.texts('h1')).toEqual(['Edit Me']);
    expect(Object.fromEntries(formEntries(html, edit(slug)))).toMatchObject({
      name: 'Edit Me',
      punchline: 'A listing to edit',
      description: 'First *version*.',
      category: 'design',
      pricing_model: 'paid',
      social: 'editme',
    });
    expect(page.text(page.all('p').find((p) => page.attr(p, 'class') === 'save-effect')!)).toContain('This listing is live: saved changes show in the directory within a few seconds, and it stays live.');
  });

  it('a live listing stays live and the change reaches REST', async () => {
    const browser = await newMaker();
    const slug = await createListing(browser);
    const res = await fillAndPost(browser, edit(slug), edit(slug), { name: 'Edited Name', description: 'Second **version** with [a link](https://example.com).', social: '' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(edit(slug));
    const after = await row(slug);
    expect(after).toMatchObject({ status: 'live', name: 'Edited Name', description_source: 'Second **version** with [a link](https://example.com).', social: null, review_requested_at: null });
    expect(notices((await openEdit(browser, slug)).page)).toEqual(['Saved: the live listing shows your changes within a few seconds.']);
    await pages.stack.settle();
    const { body } = await restProduct(slug);
    expect(body).toMatchObject({ name: 'Edited Name', social: null });
    expect(body.description).toContain('<strong>version</strong>');
  });

  it.each([
    ['pending', "status = 'pending'", 'waits for review'],
    ['changes_requested', "status = 'changes_requested', review_feedback = 'Shorter punchline please.'", 'sends the listing back to review'],
    ['hidden by the directory', "status = 'hidden', hidden_reason = 'admin'", 'The directory hid this listing'],
    ['hidden for a missing badge', "status = 'hidden', hidden_reason = 'badge_missing'", 'press Verify to bring it back'],
  ])('a %s listing goes to review when saved, and the page says so first', async (_label, sql, said) => {
    const browser = await newMaker();
    const slug = await createListing(browser);
    await setState(slug, sql);
    const { html } = await openEdit(browser, slug);
    expect(html).toContain(said);
    const res = await fillAndPost(browser, edit(slug), edit(slug), { punchline: 'Shorter' });
    expect(res.status).toBe(303);
    const after = await row(slug);
    expect(after).toMatchObject({ status: 'pending', punchline: 'Shorter', hidden_reason: null });
    expect(after.review_requested_at).not.toBeNull();
    expect(notices((await openEdit(browser, slug)).page)[0]).toContain('waiting for review');
  });

  it("shows the reviewer's feedback", async () => {
    const browser = await newMaker();
    const slug = await createListing(browser);
    await setState(slug, "status = 'changes_requested', review_feedback = 'Please <b>add</b> a logo.'");
    const { html, page } = await openEdit(browser, slug);
    expect(page.texts('h2')).toContain('Feedback from the reviewer');
    expect(page.texts('p')).toContain('Please <b>add</b> a logo.');
    expect(html).not.toContain('<b>add</b>');
  });

  it('a rejected listing shows its feedback and no form; every change is refused with 409', async () => {
    const browser = await newMaker();
    const slug = await createListing(browser);
    await setState(slug, "status = 'rejected', review_feedback = 'Not a software product.'");
    const { html, page } = await openEdit(browser, slug);
    expect(page.texts('p')).toContain('Not a software product.');
    expect(page.texts('h2')).toContain('This listing cannot be edited');
    expect(formActions(html).filter((a) => a !== '/signout' && a !== '/search')).toEqual([]);
    const before = await row(slug);
    const token = Browser.csrfOf(html);
    for (const action of [edit(slug), `${edit(slug)}/profile`, `${edit(slug)}/verify`, `${edit(slug)}/upgrade`]) {
      const res = await post(browser, action, [['_csrf', token], ['name', 'Changed'], ['punchline', 'x'], ['description', 'y'], ['category', 'design']]);
      expect(res.status, action).toBe(409);
      expect(parsePage(await res.text()).texts('h1')).toEqual(['Nothing was changed']);
    }
    expect(await row(slug)).toEqual(before);
  });

  it("another maker's listing is not found, exactly like a listing that does not exist, and nothing changes", async () => {
    const owner = await newMaker();
    const slug = await createListing(owner);
    const before = await row(slug);
    const intruder = await newMaker();
    const missing = await openEdit(intruder, 'no-such-listing-here');
    const theirs = await openEdit(intruder, slug);
    expect(theirs.res.status).toBe(404);
    expect(missing.res.status).toBe(404);
    expect(theirs.page.texts('main')).toEqual(missing.page.texts('main'));
    expect(theirs.html).not.toContain('Edit Me');
    const token = Browser.csrfOf(theirs.html);
    for (const action of [edit(slug), `${edit(slug)}/profile`, `${edit(slug)}/verify`, `${edit(slug)}/upgrade`]) {
      const res = await post(intruder, action, [['_csrf', token], ['name', 'Hijacked'], ['punchline', 'x'], ['description', 'y'], ['category', 'design']]);
      expect(res.status, action).toBe(404);
      expect(await res.text()).not.toContain('Edit Me');
    }
    expect(await row(slug)).toEqual(before);
    for (const bad of ['Not-A-Slug', 'a'.repeat(201), 'x--y']) expect((await intruder.request(edit(bad))).status, bad).toBe(404);
  });

  it('refuses an edit posted without its CSRF token', async () => {
    const browser = await newMaker();
    const slug = await createListing(browser);
    const entries = formEntries((await openEdit(browser, slug)).html, edit(slug)).filter(([n]) => n !== '_csrf');
    const res = await post(browser, edit(slug), entries.map(([n, v]) => [n, n === 'name' ? 'No token' : v]));
    expect(res.status).toBe(403);
    expect((await row(slug)).name).toBe('Edit Me');
  });

  const refusals: { field: string; value: string; message: RegExp }[] = [
    { field: 'name', value: '', message: /^Enter the product's name/ },
    { field: 'name', value: '<script>alert(1)</script>', message: /^Name must be plain text, without HTML or scripts/ },
    { field: 'name', value: 'n'.repeat(201), message: /^Name must be at most 200 characters/ },
    { field: 'punchline', value: 'go to javascript:alert(1)', message: /^Punchline must be plain text/ },
    { field: 'punchline', value: 'p'.repeat(301), message: /^Punchline must be at most 300 characters/ },
    { field: 'punchline', value: 'tab\u0007bell', message: /^Punchline must not contain control characters/ },
    { field: 'description', value: '', message: /^Enter a description/ },
    { field: 'description', value: '<iframe src="https://evil.example"></iframe>', message: /^Description must not contain <iframe>/ },
    { field: 'description', value: '<a href="javascript:alert(1)">x</a>', message: /^Description links must be http\(s\) or mailto addresses/ },
    { field: 'description', value: '<script>alert(1)</script>', message: /^Description must not contain <script>/ },
    { field: 'description', value: 'd'.repeat(20_001), message: /^Description must be at most 20000 characters/ },
    { field: 'category', value: 'no-such-category', message: /^Choose a category from the list/ },
    { field: 'pricing_model', value: 'free-ish', message: /^Pricing model must be one of/ },
    { field: 'social', value: 'my handle', message: /^Social handle must be a handle/ },
    { field: 'social', value: 'javascript:alert(1)', message: /^Social handle must be a handle/ },
  ];

  it.each(refusals)('refuses $field = $value.0…, keeping what was typed, changing nothing', async ({ field, value, message }) => {
    const browser = await newMaker();
    const slug = await createListing(browser);
    const before = await row(slug);
    const res = await fillAndPost(browser, edit(slug), edit(slug), { [field]: value, name: field === 'name' ? value : 'Typed Name' });
    expect(res.status).toBe(400);
    const html = await res.text();
    const errors = shownErrors(html);
    expect(errors.fields[field]).toMatch(message);
    expect(Object.keys(errors.fields)).toEqual([field]);
    expect(errors.summary).toEqual([{ text: errors.fields[field], href: `#field-${field}` }]);
    if (field !== 'name') expect(shownValue(html, 'field-name')).toBe('Typed Name');
    if (field !== 'category' && field !== 'pricing_model') expect(shownValue(html, `field-${field}`)).toBe(value);
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(await row(slug)).toEqual(before);
  });

  it('accepts each field at its limit', async () => {
    const browser = await newMaker();
    const slug = await createListing(browser);
    const res = await fillAndPost(browser, edit(slug), edit(slug), { name: 'n'.repeat(200), punchline: 'p'.repeat(300), description: 'd'.repeat(20_000), social: `@${'s'.repeat(100)}`, category: 'empty-shelf', pricing_model: 'open_source' });
    expect(res.status).toBe(303);
    expect(await row(slug)).toMatchObject({ name: 'n'.repeat(200), punchline: 'p'.repeat(300), social: 's'.repeat(100), category: 'empty-shelf', pricing_model: 'open_source' });
  });
});

describe('the premium profile', () => {
  /** A live listing submitted on the premium plan and paid through its payment link (the built-in checkout: no money moves). */
  async function premiumListing(browser: MakerBrowser): Promise<string> {
    const slug = await createListing(browser, { plan: 'premium' });
    const { page } = await openEdit(browser, slug);
    const pay = new URL(page.attr(page.all('a', page.byId('payment')).find((a) => page.text(a) === 'Pay 29.00 USD')!, 'href')!).pathname;
    const paid = await fillAndPost(browser, pay, pay);
    expect(paid.status).toBe(303);
    expect((await row(slug)).plan).toBe('premium');
    return slug;
  }

  const profileAction = (slug: string) => `${edit(slug)}/profile`;

  it('is only on premium listings; a free one refuses it', async () => {
    const browser = await newMaker();
    const slug = await createListing(browser);
    const { html } = await openEdit(browser, slug);
    expect(formActions(html)).not.toContain(profileAction(slug));
    const token = Browser.csrfOf(html);
    const res = await post(browser, profileAction(slug), [['_csrf', token], ['highlights', 'Fast']]);
    expect(res.status).toBe(409);
    expect(await res.text()).toContain('Only a listing on the premium plan has a premium profile.');
    expect((await row(slug)).highlights).toEqual([]);
  });

  it('round trip: saved from the form, shown in REST and on the listing page, and in the form again', async () => {
    const browser = await newMaker();
    const slug = await premiumListing(browser);
    const { html } = await openEdit(browser, slug);
    // Three empty question rows to start with, no badge to verify (premium needs none).
    expect(formEntries(html, profileAction(slug)).filter(([n]) => n === 'faq_question')).toHaveLength(3);
    expect(formActions(html)).not.toContain(`${edit(slug)}/verify`);
    const res = await fillAndPost(browser, edit(slug), profileAction(slug), {
      highlights: 'Sketch to vector\n\n  Exports SVG  \r\nWorks offline',
      ideal_for: 'Illustrators\nSmall studios',
      faq_question: ['Is there a free trial?', '', 'Does it work offline?'],
      faq_answer: ['Yes, 14 days.', '', 'Yes.'],
      promo_code: 'LAUNCH20',
      promo_discount: '20% off the first year',
      promo_url: 'https://good.example/offer',
      promo_expires_at: '2099-12-31',
    });
    expect(res.status).toBe(303);
    expect(notices((await openEdit(browser, slug)).page)).toEqual(['Premium profile saved: the live listing shows it within a few seconds.']);
    expect(await row(slug)).toMatchObject({
      status: 'live',
      highlights: ['Sketch to vector', 'Exports SVG', 'Works offline'],
      ideal_for: ['Illustrators', 'Small studios'],
      faq: [
        { question: 'Is there a free trial?', answer: 'Yes, 14 days.' },
        { question: 'Does it work offline?', answer: 'Yes.' },
      ],
      promo_code: 'LAUNCH20',
      promo_discount: '20% off the first year',
      promo_url: 'https://good.example/offer',
      promo_expires_at: '2099-12-31',
    });
    await pages.stack.settle();
    const { body } = await restProduct(slug);
    expect(body).toMatchObject({
      highlights: ['Sketch to vector', 'Exports SVG', 'Works offline'],
      ideal_for: ['Illustrators', 'Small studios'],
      faq: [
        { question: 'Is there a free trial?', answer: 'Yes, 14 days.' },
        { question: 'Does it work offline?', answer: 'Yes.' },
      ],
      promo: { code: 'LAUNCH20', discount: '20% off the first year', url: 'https://good.example/offer', expires_at: '2099-12-31' },
    });
    const listingPage = await (await fetch(`${pages.stack.baseUrl}/products/${slug}`)).text();
    expect(listingPage).toContain('LAUNCH20');
    expect(listingPage).toContain('Does it work offline?');

    // The form shows the profile again, with empty rows after the two questions.
    const again = await openEdit(browser, slug);
    const entries = formEntries(again.html, profileAction(slug));
    expect(entries.filter(([n]) => n === 'faq_question').map(([, v]) => v)).toEqual(['Is there a free trial?', 'Does it work offline?', '', '', '']);
    expect(shownValue(again.html, 'field-highlights')).toBe('Sketch to vector\nExports SVG\nWorks offline');
    expect(shownValue(again.html, 'field-promo_expires_at')).toBe('2099-12-31');

    // Emptying a row removes its question; emptying every promo field removes the promo.
    const cleared = await fillAndPost(browser, edit(slug), profileAction(slug), {
      faq_question: ['Is there a free trial?', '', '', '', ''],
      faq_answer: ['Yes, 14 days.', '', '', '', ''],
      promo_code: '',
      promo_discount: '',
      promo_url: '',
      promo_expires_at: '',
    });
    expect(cleared.status).toBe(303);
    await pages.stack.settle();
    expect((await restProduct(slug)).body).toMatchObject({ faq: [{ question: 'Is there a free trial?', answer: 'Yes, 14 days.' }], promo: null });
  });

  it('a premium listing that is not live goes to review when its profile is saved', async () => {
    const browser = await newMaker();
    const slug = await premiumListing(browser);
    await setState(slug, "status = 'changes_requested'");
    const res = await fillAndPost(browser, edit(slug), profileAction(slug), { highlights: 'New fact' });
    expect(res.status).toBe(303);
    expect(await row(slug)).toMatchObject({ status: 'pending', highlights: ['New fact'] });
    expect(notices((await openEdit(browser, slug)).page)[0]).toContain('waiting for review');
  });

  const lines = (n: number, length = 10) => Array.from({ length: n }, (_, i) => `${i}`.padEnd(length, 'x')).join('\n');
  const rows = (n: number, q = 'Question?', a = 'Answer.') => ({ faq_question: Array.from({ length: n }, (_, i) => `${q} ${i}`), faq_answer: Array.from({ length: n }, (_, i) => `${a} ${i}`) });
  const today = new Date().toISOString().slice(0, 10);

  it('accepts every limit exactly', async () => {
    const browser = await newMaker();
    const slug = await premiumListing(browser);
    const res = await fillAndPost(browser, edit(slug), profileAction(slug), {
      highlights: lines(LISTING_LIMITS.profileItemsMax, LISTING_LIMITS.profileItemMax),
      ideal_for: lines(LISTING_LIMITS.profileItemsMax, LISTING_LIMITS.profileItemMax),
      faq_question: Array.from({ length: LISTING_LIMITS.faqMax }, () => 'q'.repeat(LISTING_LIMITS.faqQuestionMax)),
      faq_answer: Array.from({ length: LISTING_LIMITS.faqMax }, () => 'a'.repeat(LISTING_LIMITS.faqAnswerMax)),
      promo_code: 'c'.repeat(LISTING_LIMITS.promoCodeMax),
      promo_discount: 'd'.repeat(LISTING_LIMITS.promoDiscountMax),
      promo_url: '',
      promo_expires_at: today,
    });
    expect(res.status).toBe(303);
    const after = await row(slug);
    expect((after.highlights as string[]).length).toBe(20);
    expect((after.faq as unknown[]).length).toBe(30);
    expect(after.promo_expires_at).toBe(today);
    // With 30 questions the form offers no empty row.
    expect(formEntries((await openEdit(browser, slug)).html, profileAction(slug)).filter(([n]) => n === 'faq_question')).toHaveLength(30);
  });

  const refusals: { case: string; changes: Record<string, string | string[]>; field: string; message: RegExp }[] = [
    { case: '21 highlights', changes: { highlights: lines(21) }, field: 'highlights', message: /^Highlights must have at most 20 lines/ },
    { case: 'a highlight of 301 characters', changes: { highlights: `ok\n${'h'.repeat(301)}` }, field: 'highlights', message: /^Highlight 2 must be at most 300 characters/ },
    { case: 'HTML in a highlight', changes: { highlights: '<script>alert(1)</script>' }, field: 'highlights', message: /^Highlight 1 must be plain text, without HTML or scripts/ },
    { case: '21 ideal-for lines', changes: { ideal_for: lines(21) }, field: 'ideal_for', message: /^Ideal for must have at most 20 lines/ },
    { case: 'an ideal-for line of 301 characters', changes: { ideal_for: 'i'.repeat(301) }, field: 'ideal_for', message: /^Ideal for line 1 must be at most 300 characters/ },
    { case: 'a javascript: URL in ideal for', changes: { ideal_for: 'javascript:alert(1)' }, field: 'ideal_for', message: /plain text/ },
    { case: '31 questions', changes: rows(31), field: 'faq', message: /^FAQ must have at most 30 questions/ },
    { case: 'a question of 301 characters', changes: { faq_question: ['q'.repeat(301)], faq_answer: ['a'] }, field: 'faq_question-0', message: /^Question 1 must be at most 300 characters/ },
    { case: 'an answer of 5001 characters', changes: { faq_question: ['q', 'q2'], faq_answer: ['a', 'a'.repeat(5001)] }, field: 'faq_answer-1', message: /^Answer 2 must be at most 5000 characters/ },
    { case: 'a question without its answer', changes: { faq_question: ['', '', 'Lonely?'], faq_answer: ['', '', ''] }, field: 'faq_answer-2', message: /^Answer 3 must not be empty/ },
    { case: 'HTML in an answer', changes: { faq_question: ['Q'], faq_answer: ['<img src=x onerror=alert(1)>'] }, field: 'faq_answer-0', message: /^Answer 1 must be plain text/ },
    { case: 'a promo without a discount', changes: { promo_code: 'CODE' }, field: 'promo_discount', message: /^Promo discount must not be empty/ },
    { case: 'a promo code of 51 characters', changes: { promo_code: 'c'.repeat(51), promo_discount: 'd' }, field: 'promo_code', message: /^Promo code must be at most 50 characters/ },
    { case: 'a discount of 201 characters', changes: { promo_code: 'C', promo_discount: 'd'.repeat(201) }, field: 'promo_discount', message: /^Promo discount must be at most 200 characters/ },
    { case: 'HTML in a promo code', changes: { promo_code: '<b>X</b>', promo_discount: 'd' }, field: 'promo_code', message: /^Promo code must be plain text/ },
    { case: 'a javascript: promo URL', changes: { promo_code: 'C', promo_discount: 'd', promo_url: 'javascript:alert(1)' }, field: 'promo_url', message: /^Promo URL must be an http\(s\) address/ },
    { case: 'a promo URL on an IP address', changes: { promo_code: 'C', promo_discount: 'd', promo_url: 'http://10.0.0.1/x' }, field: 'promo_url', message: /^Promo URL must be an http\(s\) address with a domain name/ },
    { case: 'a promo URL of 2049 characters', changes: { promo_code: 'C', promo_discount: 'd', promo_url: `https://good.example/${'u'.repeat(2028)}` }, field: 'promo_url', message: /^Promo URL must be at most 2048 characters/ },
    { case: 'a promo date that is not a date', changes: { promo_code: 'C', promo_discount: 'd', promo_expires_at: '2099-02-30' }, field: 'promo_expires_at', message: /^Promo expiry date must be a date, yyyy-mm-dd/ },
    { case: 'a promo date already past', changes: { promo_code: 'C', promo_discount: 'd', promo_expires_at: '2001-01-01' }, field: 'promo_expires_at', message: /^Promo expiry date must be today .* or later/ },
  ];

  it.each(refusals)('refuses $case, keeping what was typed, changing nothing', async ({ changes, field, message }) => {
    const browser = await newMaker();
    const slug = await premiumListing(browser);
    const before = await row(slug);
    const res = await fillAndPost(browser, edit(slug), profileAction(slug), { highlights: 'Kept highlight', ...changes });
    expect(res.status).toBe(400);
    const html = await res.text();
    const errors = shownErrors(html);
    expect(errors.fields[field]).toMatch(message);
    expect(Object.keys(errors.fields)).toEqual([field]);
    expect(errors.summary).toEqual([{ text: errors.fields[field], href: `#field-${field}` }]);
    expect(parsePage(html).byId(`field-${field}`)).toBeDefined();
    if (!('highlights' in changes)) expect(shownValue(html, 'field-highlights')).toBe('Kept highlight');
    for (const [name, value] of Object.entries(changes)) {
      if (name === 'faq_question' || name === 'faq_answer') {
        const shown = formEntries(html, profileAction(slug)).filter(([n]) => n === name).map(([, v]) => v);
        expect(shown.slice(0, (value as string[]).length)).toEqual(value);
      } else if (name !== 'highlights' && name !== 'ideal_for') {
        expect(shownValue(html, `field-${name}`), name).toBe(value);
      }
    }
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).not.toMatch(/<img src=x/);
    expect(await row(slug)).toEqual(before);
  });
});

describe('Verify', () => {
  const verifyAction = (slug: string) => `${edit(slug)}/verify`;

  /** A free live listing on badge.example, and the markup its edit page gives to copy. */
  async function badgeListing(browser: MakerBrowser): Promise<{ slug: string; website: string; markup: string; html: string }> {
    const website = freshSite('badge.example', 'verify');
    const slug = await createListing(browser, { website });
    const { html, page } = await openEdit(browser, slug);
    const markup = page.text(page.byId('badge-markup')!).replace(/^\n/, '');
    return { slug, website, markup, html };
  }

  const sitePath = (website: string) => {
    const u = new URL(website);
    return `${u.hostname}${u.pathname}`;
  };

  it('gives the exact markup to copy and previews the badge image', async () => {
    const browser = await newMaker();
    const { slug, markup, html } = await badgeListing(browser);
    expect(markup).toBe(
      `<a href="https://directory.test/products/${slug}"><img src="${pages.stack.baseUrl}/badge/${slug}.svg" alt="Listed on Product directory" width="200" height="54"/></a>`,
    );
    const page = parsePage(html);
    expect(page.attr(page.byId('badge-markup')!, 'readonly')).toBeDefined();
    const preview = page.all('img').find((i) => page.attr(i, 'src') === `/badge/${slug}.svg`);
    expect(preview).toBeDefined();
    expect(formActions(html)).toContain(verifyAction(slug));
  });

  it('found: the link from the listing page to the site becomes followed', async () => {
    const browser = await newMaker();
    const { slug, website, markup, html } = await badgeListing(browser);
    await pages.stack.settle();
    const linkRel = async () => {
      const page = parsePage(await (await fetch(`${pages.stack.baseUrl}/products/${slug}`)).text());
      return page.attr(page.all('a').find((a) => page.text(a).startsWith('Visit '))!, 'rel');
    };
    expect(await linkRel()).toBe('nofollow noopener');
    pages.sites.pages.set(sitePath(website), `<!doctype html><html><body><footer>${markup}</footer></body></html>`);
    const res = await post(browser, verifyAction(slug), formEntries(html, verifyAction(slug)));
    expect(res.status).toBe(200);
    const page = parsePage(await res.text());
    expect(notices(page)).toEqual(["Badge found on your site: the listing page's link to your site is now followed."]);
    expect(await row(slug)).toMatchObject({ badge_status: 'verified', status: 'live' });
    expect(page.text(page.all('dl')[0]!)).toContain('Verified');
    await pages.stack.settle();
    expect(await linkRel()).toBe('noopener');
  });

  it('missing: says what to do and changes nothing', async () => {
    const browser = await newMaker();
    const { slug, html } = await badgeListing(browser);
    const before = await row(slug);
    const res = await post(browser, verifyAction(slug), formEntries(html, verifyAction(slug)));
    expect(res.status).toBe(200);
    const [notice] = notices(parsePage(await res.text()));
    expect(notice).toMatch(/^The badge was not found\. No link to your listing was found on http:\/\/badge\.example:\d+\/verify-\d+\. Add the badge markup to that page\. Then press Verify again\. Nothing was changed\.$/);
    expect(await row(slug)).toEqual(before);
  });

  it('missing: a nofollow link does not count, and the page says why', async () => {
    const browser = await newMaker();
    const { slug, website, markup, html } = await badgeListing(browser);
    pages.sites.pages.set(sitePath(website), `<html><body>${markup.replace('<a ', '<a rel="nofollow" ')}</body></html>`);
    const res = await post(browser, verifyAction(slug), formEntries(html, verifyAction(slug)));
    expect(notices(parsePage(await res.text()))[0]).toContain('is marked nofollow, sponsored or ugc');
    expect((await row(slug)).badge_status).toBe('none');
  });

  it('inconclusive: the site could not be read; nothing changes', async () => {
    const browser = await newMaker();
    const { slug, website, html } = await badgeListing(browser);
    pages.sites.failing.add(sitePath(website));
    const before = await row(slug);
    const res = await post(browser, verifyAction(slug), formEntries(html, verifyAction(slug)));
    expect(res.status).toBe(200);
    const [notice] = notices(parsePage(await res.text()));
    expect(notice).toMatch(/^Your site could not be read, so the badge could not be checked\. .*HTTP status 500.* Nothing was changed: try again later\.$/);
    expect(await row(slug)).toEqual(before);
  });

  it('a listing hidden for a missing badge comes back live when the badge is found, and the page says so', async () => {
    const browser = await newMaker();
    const { slug, website, markup } = await badgeListing(browser);
    await setState(slug, "status = 'hidden', hidden_reason = 'badge_missing', review_feedback = 'The badge is gone.'");
    await pages.stack.settle();
    expect((await restProduct(slug)).status).toBe(404);
    const { html } = await openEdit(browser, slug);
    expect(parsePage(html).text(parsePage(html).byId('badge')!)).toContain('hidden for a missing badge, is live again');
    pages.sites.pages.set(sitePath(website), `<html><body>${markup}</body></html>`);
    const res = await post(browser, verifyAction(slug), formEntries(html, verifyAction(slug)));
    expect(notices(parsePage(await res.text()))).toEqual([
      "Badge found on your site: the listing page's link to your site is now followed. The listing was hidden because the badge was missing: it is live again.",
    ]);
    expect(await row(slug)).toMatchObject({ status: 'live', hidden_reason: null, badge_status: 'verified' });
    await pages.stack.settle();
    expect((await restProduct(slug)).status).toBe(200);
  });

  it('a listing hidden by the directory does not come back through Verify', async () => {
    const browser = await newMaker();
    const { slug, website, markup, html } = await badgeListing(browser);
    await setState(slug, "status = 'hidden', hidden_reason = 'admin'");
    pages.sites.pages.set(sitePath(website), `<html><body>${markup}</body></html>`);
    const res = await post(browser, verifyAction(slug), formEntries(html, verifyAction(slug)));
    expect(notices(parsePage(await res.text()))).toEqual(["Badge found on your site: the listing page's link to your site is now followed."]);
    expect(await row(slug)).toMatchObject({ status: 'hidden', hidden_reason: 'admin', badge_status: 'verified' });
  });

  it('premium listings have nothing to verify', async () => {
    const browser = await newMaker();
    const { slug, html } = await badgeListing(browser);
    await setState(slug, "plan = 'premium'");
    expect(formActions((await openEdit(browser, slug)).html)).not.toContain(verifyAction(slug));
    const res = await post(browser, verifyAction(slug), formEntries(html, verifyAction(slug)));
    expect(res.status).toBe(409);
    expect(await res.text()).toContain('premium plan');
  });
});

describe('the upgrade to premium', () => {
  it('a live free listing gets a payment link with its price; nothing is charged', async () => {
    const browser = await newMaker();
    const slug = await createListing(browser);
    const { html } = await openEdit(browser, slug);
    const action = `${edit(slug)}/upgrade`;
    expect(parsePage(html).text(parsePage(html).byId('premium')!)).toContain('29.00 USD');
    const res = await post(browser, action, formEntries(html, action));
    expect(res.status).toBe(303);
    const page = parsePage(await (await browser.request(edit(slug))).text());
    expect(page.text(page.byId('payment')!)).toContain('Nothing is charged until you pay.');
    expect(page.attr(page.all('a', page.byId('payment')).find((a) => page.text(a) === 'Pay 29.00 USD')!, 'href')).toMatch(/\/pay\/[0-9a-f-]{36}$/);
    expect((await row(slug)).plan).toBe('free');
  });

  it('is not offered to a listing that is not live, and refused if asked', async () => {
    const browser = await newMaker();
    const slug = await createListing(browser, { website: freshSite('bare.example') });
    const { html } = await openEdit(browser, slug);
    expect(parsePage(html).byId('premium')).toBeUndefined();
    const token = Browser.csrfOf(html);
    const res = await post(browser, `${edit(slug)}/upgrade`, [['_csrf', token]]);
    expect(res.status).toBe(409);
    expect(await res.text()).toContain('Only a live listing can be upgraded');
  });
});

describe('the badge image', () => {
  it('is an SVG badge of 200×54 for any slug, cacheable for a day, shown to any site, with no script or style', async () => {
    const bodies = new Set<string>();
    for (const slug of ['pixel-forge', 'not-listed-yet', 'a', 'x'.repeat(200)]) {
      const res = await fetch(`${pages.stack.baseUrl}/badge/${slug}.svg`);
      expect(res.status, slug).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('public, max-age=86400');
      expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('set-cookie')).toBeNull();
      bodies.add(await res.text());
    }
    expect(bodies.size).toBe(1);
    const svg = [...bodies][0]!;
    const page = parsePage(svg);
    const root = page.all('svg')[0]!;
    expect([page.attr(root, 'width'), page.attr(root, 'height'), page.attr(root, 'xmlns')]).toEqual(['200', '54', 'http://www.w3.org/2000/svg']);
    expect(page.texts('title')).toEqual(['Listed on Product directory']);
    expect(page.texts('text').map((t) => t.trim())).toEqual(['LISTED ON', 'Product directory']);
    expect(page.all('script')).toHaveLength(0);
    expect(page.all('style')).toHaveLength(0);
    expect(page.all('foreignObject')).toHaveLength(0);
    expect(svg).not.toMatch(/\son[a-z]+=|style=|href=|javascript:/i);
  });

  it('answers a current copy with 304', async () => {
    const first = await fetch(`${pages.stack.baseUrl}/badge/pixel-forge.svg`);
    const etag = first.headers.get('etag')!;
    const again = await fetch(`${pages.stack.baseUrl}/badge/another-slug.svg`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  it.each(['Pixel-Forge.svg', 'a--b.svg', '-a.svg', `${'x'.repeat(201)}.svg`, 'pixel-forge.png', 'pixel-forge', '.svg', 'pixel_forge.svg'])('is a 404 for /badge/%s', async (file) => {
    const res = await fetch(`${pages.stack.baseUrl}/badge/${file}`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('text/html');
  });
});
