import { describe, expect, it } from 'vitest';
import { signIn } from '../../../helpers/oauth.ts';
import {
  Browser,
  draftClaimPath,
  fillAndPost,
  formEntries,
  MakerBrowser,
  notices,
  parsePage,
  post,
  shownErrors,
  shownValue,
  useMakerPages,
  typed,
} from '../../../helpers/maker-pages.ts';

/**
 * Submitting through the maker pages over real HTTP: the dashboard, the submission form with
 * every outcome and every field's refusal, and the claim link of a draft (sign in, the form
 * filled from the draft, single use, expiry). Makers' sites are served on loopback.
 */
const pages = useMakerPages({ makerPrefix: 'maker', sitePrefix: 'app' });
const { newMaker, freshSite } = pages;

const complete = (website: string) => ({
  website,
  name: 'Lantern Notes',
  punchline: 'Notes that light the way',
  description: 'A **note** app.\n\n- fast\n- private',
  category: 'productivity',
  pricing_model: 'freemium',
  product_type: 'software',
  social: '@lantern',
  tags: 'notes, ai',
});

async function listingCount(): Promise<number> {
  return (await pages.stack.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog.listings')).rows[0]!.n;
}

async function listingBySlug(slug: string) {
  const { rows } = await pages.stack.db.pool.query('SELECT * FROM catalog.listings WHERE slug = $1', [slug]);
  return rows[0] as Record<string, unknown> | undefined;
}

function slugOf(location: string | null): string {
  const m = /^\/dashboard\/listings\/([a-z0-9-]+)$/.exec(location ?? '');
  if (!m) throw new Error(`not an edit page: ${location}`);
  return m[1]!;
}

describe('the dashboard', () => {
  it('asks a signed-out visitor to sign in, and comes back after', async () => {
    const visitor = new MakerBrowser(pages.stack.baseUrl);
    for (const path of ['/dashboard', '/dashboard/new', '/dashboard/listings/pixel-forge']) {
      const res = await visitor.request(path);
      expect(res.status, path).toBe(303);
      expect(res.headers.get('location')).toBe(`/signin?return_to=${encodeURIComponent(path)}`);
    }
    const signInPage = `/signin?return_to=${encodeURIComponent('/dashboard/new')}`;
    const email = `return-${Date.now()}@example.com`;
    expect((await fillAndPost(visitor, signInPage, '/signin', { email })).status).toBe(200);
    const link = /https?:\/\/\S+\/signin\/link\/\S+/.exec(pages.stack.mails.findLast((m) => m.to === email)!.text)![0];
    const linkPath = new URL(link).pathname;
    const done = await fillAndPost(visitor, linkPath, linkPath);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/dashboard/new');
    const form = await visitor.request('/dashboard/new');
    expect(form.status).toBe(200);
    expect(parsePage(await form.text()).texts('h1')).toEqual(['Submit a product']);
  });

  it('shows an empty state with the way to submit', async () => {
    const browser = await newMaker();
    const res = await browser.request('/dashboard');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const page = parsePage(await res.text());
    expect(page.texts('h1')).toEqual(['Your listings']);
    expect(page.texts('h2')).toContain('No listings yet');
    expect(page.all('table')).toHaveLength(0);
    const links = page.all('a').map((a) => [page.text(a).trim(), page.attr(a, 'href')]);
    expect(links).toContainEqual(['Submit a product', '/dashboard/new']);
    expect(links).toContainEqual(['Submit your first product', '/dashboard/new']);
  });

  it("lists the maker's listings newest first with status, plan, badge, feedback and the public page of live ones", async () => {
    const browser = await newMaker();
    const first = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', complete(freshSite()));
    const live = slugOf(first.headers.get('location'));
    const second = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', { ...complete(freshSite('bare.example')), name: 'Bare Tool' });
    const pending = slugOf(second.headers.get('location'));
    await pages.stack.db.pool.query("UPDATE catalog.listings SET status = 'changes_requested', review_feedback = 'Please add a logo.' WHERE slug = $1", [pending]);
    const html = await (await browser.request('/dashboard')).text();
    const page = parsePage(html);
    const rows = page.all('tr', page.all('tbody')[0]).map((tr) => page.all('td', tr).map((td) => page.text(td).replace(/\s+/g, ' ').trim()));
    expect(rows).toHaveLength(2);
    expect(rows[0]![0]).toContain('Bare Tool');
    expect(rows[0]!.slice(1)).toEqual(['Changes requested', 'Free', 'Not verified', 'Please add a logo.', 'Not live']);
    expect(rows[1]![0]).toContain('Lantern Notes');
    expect(rows[1]!.slice(1)).toEqual(['Live', 'Free', 'Not verified', 'None', 'View']);
    const hrefs = page.all('a', page.all('tbody')[0]).map((a) => page.attr(a, 'href'));
    expect(hrefs).toEqual([`/dashboard/listings/${pending}`, `/dashboard/listings/${live}`, `https://directory.test/products/${live}`]);
    // Another maker sees none of them.
    const other = await newMaker();
    const theirs = await (await other.request('/dashboard')).text();
    expect(theirs).not.toContain('Lantern Notes');
    expect(theirs).not.toContain(live);
  });
});

describe('the submission form', () => {
  it('offers every field, with the categories of the write model and the premium price', async () => {
    const browser = await newMaker();
    const html = await (await browser.request('/dashboard/new')).text();
    const names = formEntries(html, '/dashboard/new').map(([n]) => n);
    expect(names).toEqual(['_csrf', 'website', 'name', 'punchline', 'description', 'category', 'pricing_model', 'product_type', 'social', 'tags', 'plan']);
    const page = parsePage(html);
    const options = (id: string) => page.all('option', page.byId(id)).map((o) => page.attr(o, 'value'));
    expect(options('field-category')).toEqual(['', 'design', 'developer-tools', 'empty-shelf', 'productivity']);
    expect(options('field-plan')).toEqual(['free', 'premium']);
    expect(page.text(page.byId('field-plan')!)).toContain('Premium: 29.00 USD');
    expect(page.text(page.byId('field-plan-hint')!)).toContain('nothing is charged until you pay');
  });

  it('publishes a complete submission of a readable site and opens its edit page with a notice', async () => {
    const browser = await newMaker();
    const website = freshSite();
    const res = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', complete(website));
    expect(res.status).toBe(303);
    const slug = slugOf(res.headers.get('location'));
    expect(slug).toMatch(/^lantern-notes/);
    const row = await listingBySlug(slug);
    expect(row).toMatchObject({ status: 'live', plan: 'free', website, category: 'productivity', social: 'lantern', tags: ['notes', 'ai'], pricing_model: 'freemium', product_type: 'software' });
    const page = parsePage(await (await browser.request(res.headers.get('location')!)).text());
    expect(notices(page)[0]).toContain('Published: Lantern Notes is live in the directory');
    // The notice shows once.
    expect(notices(parsePage(await (await browser.request(res.headers.get('location')!)).text()))).toEqual([]);
    await pages.stack.settle();
    const product = (await (await fetch(`${pages.stack.baseUrl}/api/v1/products/${slug}`)).json()) as { name: string; description: string };
    expect(product.name).toBe('Lantern Notes');
    expect(product.description).toContain('<strong>note</strong>');
  });

  it('holds a listing for review and says so, without the reasons the reviewer sees', async () => {
    const browser = await newMaker();
    const res = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', complete(freshSite('bare.example')));
    expect(res.status).toBe(303);
    const slug = slugOf(res.headers.get('location'));
    const row = await listingBySlug(slug);
    expect(row?.status).toBe('pending');
    expect(JSON.stringify(row?.check_reasons)).toContain('no_image');
    const html = await (await browser.request(res.headers.get('location')!)).text();
    const [notice] = notices(parsePage(html));
    expect(notice).toContain('waiting for review');
    expect(html).not.toContain('no_image');
    expect(html).not.toContain('usable cover image');
  });

  it('premium: shows the payment link with its price, charging nothing', async () => {
    const browser = await newMaker();
    const res = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', { ...complete(freshSite()), plan: 'premium' });
    const slug = slugOf(res.headers.get('location'));
    const html = await (await browser.request(res.headers.get('location')!)).text();
    const page = parsePage(html);
    const card = page.byId('payment')!;
    expect(page.text(card)).toContain('29.00 USD');
    expect(page.text(card)).toContain('Nothing is charged until you pay.');
    const pay = page.all('a', card).find((a) => page.text(a).includes('Pay 29.00 USD'))!;
    expect(page.attr(pay, 'href')).toMatch(new RegExp(`^${pages.stack.baseUrl}/pay/[0-9a-f-]{36}$`));
    const listing = await listingBySlug(slug);
    expect(listing?.plan).toBe('free');
    const { rows } = await pages.stack.db.pool.query('SELECT status, amount_minor FROM catalog.payments WHERE listing_id = $1', [listing?.id]);
    expect(rows).toEqual([{ status: 'open', amount_minor: 2900 }]);
    // The payment link is not in any address: it came in the flash cookie, shown once.
    expect(res.headers.get('location')).toBe(`/dashboard/listings/${slug}`);
    expect(parsePage(await (await browser.request(`/dashboard/listings/${slug}`)).text()).byId('payment')).toBeUndefined();
  });

  it('already_listed: the site is live in the directory, whoever listed it', async () => {
    const first = await newMaker();
    const website = freshSite();
    const created = await fillAndPost(first, '/dashboard/new', '/dashboard/new', complete(website));
    const slug = slugOf(created.headers.get('location'));
    const before = await listingCount();
    const second = await newMaker();
    // The same site written another way is the same website.
    const res = await fillAndPost(second, '/dashboard/new', '/dashboard/new', { ...complete(website.replace('http://', 'HTTP://WWW.') + '/?utm_source=x'), name: 'Copy' });
    expect(res.status).toBe(200);
    const page = parsePage(await res.text());
    expect(page.texts('h1')).toEqual(['Already in the directory']);
    expect(page.all('a').map((a) => page.attr(a, 'href'))).toContain(`https://directory.test/products/${slug}`);
    expect(await listingCount()).toBe(before);
  });

  it("already_submitted: links the maker's own listing", async () => {
    const browser = await newMaker();
    const website = freshSite('bare.example');
    const created = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', complete(website));
    const slug = slugOf(created.headers.get('location'));
    const before = await listingCount();
    const res = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', { ...complete(website), name: 'Again' });
    expect(res.status).toBe(200);
    const page = parsePage(await res.text());
    expect(page.texts('h1')).toEqual(['You already submitted this site']);
    expect(page.all('a').map((a) => page.attr(a, 'href'))).toContain(`/dashboard/listings/${slug}`);
    expect(await listingCount()).toBe(before);
  });

  const refusals: { field: string; value: string; message: RegExp }[] = [
    { field: 'website', value: '', message: /Enter the product's website/ },
    { field: 'website', value: 'javascript:alert(1)', message: /^Only web addresses starting with http:\/\/ or https:\/\/ are accepted, not javascript:\.$/ },
    { field: 'website', value: 'http://127.0.0.1:8080/', message: /^Give your website's domain name, not an IP address\.$/ },
    { field: 'website', value: 'http://localhost/', message: /^The address needs a full domain name, such as example\.com\.$/ },
    { field: 'website', value: `https://example.com/${'a'.repeat(2100)}`, message: /^The address is too long: at most 2048 characters\.$/ },
    { field: 'name', value: '', message: /Enter the product's name/ },
    { field: 'name', value: '<script>alert(1)</script>', message: /Name must be plain text, without HTML or scripts/ },
    { field: 'name', value: '<b>Bold</b>', message: /Name must be plain text/ },
    { field: 'name', value: 'x'.repeat(201), message: /Name must be at most 200 characters/ },
    { field: 'punchline', value: '', message: /Enter a punchline/ },
    { field: 'punchline', value: 'Click <a href="javascript:alert(1)">here</a>', message: /Punchline must be plain text/ },
    { field: 'punchline', value: 'see javascript:alert(1)', message: /Punchline must be plain text/ },
    { field: 'punchline', value: 'p'.repeat(301), message: /Punchline must be at most 300 characters/ },
    { field: 'description', value: '', message: /Enter a description/ },
    { field: 'description', value: 'Hi <script>alert(1)</script>', message: /Description must not contain <script>/ },
    { field: 'description', value: '[click](javascript:alert(1))', message: /Description links must be http\(s\) or mailto addresses/ },
    { field: 'description', value: '<p onclick="alert(1)">x</p>', message: /Description must not carry HTML attributes/ },
    { field: 'description', value: '![img](https://example.com/x.png)', message: /Description must not contain images/ },
    { field: 'description', value: 'd'.repeat(20_001), message: /Description must be at most 20000 characters/ },
    { field: 'category', value: '', message: /Choose a category/ },
    { field: 'category', value: 'no-such-category', message: /Choose a category from the list: "no-such-category" is not one/ },
    { field: 'category', value: '<script>', message: /^Category must be a category slug/ },
    { field: 'pricing_model', value: 'gratis', message: /^Pricing model must be one of free, freemium, paid, open_source/ },
    { field: 'product_type', value: 'hardware', message: /^Product type must be software or digital_product/ },
    { field: 'social', value: 'https://social.example/@me', message: /^Social handle must be a handle/ },
    { field: 'social', value: '<img src=x onerror=alert(1)>', message: /^Social handle must be a handle/ },
    { field: 'social', value: 's'.repeat(101), message: /^Social handle must be at most 100 characters/ },
    { field: 'tags', value: 'ok, <script>', message: /^Tags must be words of lowercase letters/ },
    { field: 'tags', value: Array.from({ length: 11 }, (_, i) => `t${i}`).join(','), message: /^At most 10 tags/ },
    { field: 'tags', value: 't'.repeat(51), message: /^A tag must be at most 50 characters/ },
    { field: 'plan', value: 'gold', message: /^Plan must be free or premium/ },
  ];

  it.each(refusals)('refuses $field = $value.0…: the form comes back as typed, the message at the top and by the field', async ({ field, value, message }) => {
    const browser = await newMaker();
    const before = await listingCount();
    const values = { ...complete(freshSite()), [field]: value };
    const res = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', values);
    expect(res.status).toBe(400);
    const html = await res.text();
    const errors = shownErrors(html);
    expect(errors.fields[field]).toMatch(message);
    expect(errors.summary).toContainEqual({ text: errors.fields[field], href: `#field-${field}` });
    // Only this field is refused, and every value is shown as it was typed.
    expect(Object.keys(errors.fields)).toEqual([field]);
    for (const [name, typedValue] of Object.entries(values)) if (name !== 'category' && name !== 'pricing_model' && name !== 'product_type' && name !== 'plan') expect(shownValue(html, `field-${name}`), name).toBe(typedValue);
    expect(parsePage(html).attr(parsePage(html).byId(`field-${field}`)!, 'aria-invalid')).toBe('true');
    // Markup typed into a field is shown as text, never as markup.
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).not.toMatch(/<img src=x/);
    expect(await listingCount()).toBe(before);
  });

  it('accepts every text at its limit', async () => {
    const browser = await newMaker();
    const res = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', {
      ...complete(freshSite()),
      name: 'N'.repeat(200),
      punchline: 'P'.repeat(300),
      description: 'D'.repeat(20_000),
      social: 's'.repeat(100),
      tags: Array.from({ length: 10 }, (_, i) => `${'t'.repeat(49)}${i}`).join(', '),
    });
    expect(res.status).toBe(303);
    const row = await listingBySlug(slugOf(res.headers.get('location')));
    expect(row).toMatchObject({ name: 'N'.repeat(200), punchline: 'P'.repeat(300), social: 's'.repeat(100) });
    expect((row?.tags as string[]).length).toBe(10);
  });

  it('reports every refused field at once, in the order of the form', async () => {
    const browser = await newMaker();
    const res = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', { website: 'ftp://x', name: '', punchline: '<i>x</i>', description: '', category: '' });
    expect(res.status).toBe(400);
    const errors = shownErrors(await res.text());
    expect(errors.summary.map((e) => e.href)).toEqual(['#field-website', '#field-name', '#field-punchline', '#field-description', '#field-category']);
  });

  it('refuses a website whose name resolves to a private address, saving nothing', async () => {
    const browser = await newMaker();
    const before = await listingCount();
    const res = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', complete('http://inside.example/'));
    expect(res.status).toBe(400);
    expect(shownErrors(await res.text()).fields.website).toMatch(/^The website is not reachable from the internet: inside.example resolves to 10.0.0.5/);
    expect(await listingCount()).toBe(before);
  });

  it('holds for review a site that cannot be read', async () => {
    const browser = await newMaker();
    // Not in the test resolver's table: the name does not resolve.
    const res = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', complete('http://unknown-host.example/'));
    expect(res.status).toBe(303);
    expect((await listingBySlug(slugOf(res.headers.get('location'))))?.status).toBe('pending');
  });
});

describe('the claim link', () => {
  const draftArgs = (website: string) => ({
    website,
    name: 'Drafted App',
    punchline: 'Drafted by an assistant',
    description: 'It *works*.',
    category: 'design',
    pricing_model: 'paid',
    product_type: 'digital_product',
    social: 'drafted',
    tags: ['ai', 'images'],
    plan: 'premium',
  });

  it('asks a signed-out visitor to sign in, then shows the form filled from the draft', async () => {
    const website = freshSite();
    const claim = await draftClaimPath(pages.stack, draftArgs(website));
    const visitor = new MakerBrowser(pages.stack.baseUrl);
    const res = await visitor.request(claim);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    const html = await res.text();
    const page = parsePage(html);
    expect(page.texts('h1')).toEqual(['Sign in']);
    expect(html).toContain(new URL(website).host);
    expect(formEntries(html, '/signin')).toContainEqual(['return_to', claim]);

    // Signing in through that form comes back to the claim link.
    const email = `claimer-${Date.now()}@example.com`;
    const sent = await post(visitor, '/signin', typed(formEntries(html, '/signin'), { email }));
    expect(sent.status).toBe(200);
    const link = /https?:\/\/\S+\/signin\/link\/\S+/.exec(pages.stack.mails.findLast((m) => m.to === email)!.text)![0];
    const confirm = await visitor.request(link);
    const done = await post(visitor, new URL(link).pathname, formEntries(await confirm.text(), new URL(link).pathname));
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(claim);

    const form = await (await visitor.request(claim)).text();
    expect(parsePage(form).texts('h1')).toEqual(['Finish your submission']);
    const entries = Object.fromEntries(formEntries(form, claim));
    expect(entries).toMatchObject({
      website,
      name: 'Drafted App',
      punchline: 'Drafted by an assistant',
      description: 'It *works*.',
      category: 'design',
      pricing_model: 'paid',
      product_type: 'digital_product',
      social: 'drafted',
      tags: 'ai, images',
      plan: 'premium',
    });
  });

  it('submits once: the listing is made and the link is spent; a second submit says it was already used', async () => {
    const website = freshSite();
    const claim = await draftClaimPath(pages.stack, draftArgs(website));
    const browser = await newMaker();
    const form = await (await browser.request(claim)).text();
    const entries = formEntries(form, claim);
    const before = await listingCount();
    const res = await post(browser, claim, entries);
    expect(res.status).toBe(303);
    const slug = slugOf(res.headers.get('location'));
    const listing = await listingBySlug(slug);
    expect(listing).toMatchObject({ status: 'live', name: 'Drafted App', category: 'design' });
    const { rows } = await pages.stack.db.pool.query('SELECT claimed_at IS NOT NULL AS claimed, listing_id FROM catalog.drafts WHERE website = $1', [website]);
    expect(rows).toEqual([{ claimed: true, listing_id: listing?.id }]);
    // plan premium from the draft: the payment link is on the edit page.
    const edit = parsePage(await (await browser.request(`/dashboard/listings/${slug}`)).text());
    expect(edit.text(edit.byId('payment')!)).toContain('Nothing is charged until you pay.');

    const again = await post(browser, claim, entries);
    expect(again.status).toBe(410);
    const page = parsePage(await again.text());
    expect(page.texts('h1')).toEqual(['This link has already been used']);
    expect(await listingCount()).toBe(before + 1);
    // Opening it again says the same.
    expect((await browser.request(claim)).status).toBe(410);
    const otherMaker = await newMaker();
    const reopened = await otherMaker.request(claim);
    expect(reopened.status).toBe(410);
    expect(parsePage(await reopened.text()).texts('p').join(' ')).toContain('already been used');
  });

  it('two submits of the same link at once make one listing', async () => {
    const claim = await draftClaimPath(pages.stack, draftArgs(freshSite()));
    const browser = await newMaker();
    const entries = formEntries(await (await browser.request(claim)).text(), claim);
    const before = await listingCount();
    const answers = await Promise.all([post(browser, claim, entries), post(browser, claim, entries)]);
    expect(answers.map((r) => r.status).sort()).toEqual([303, 410]);
    expect(await listingCount()).toBe(before + 1);
  });

  it('is refused once 7 days old, with a clear page, whether signed in or not', async () => {
    const website = freshSite();
    const claim = await draftClaimPath(pages.stack, draftArgs(website));
    const browser = await newMaker();
    const entries = formEntries(await (await browser.request(claim)).text(), claim);
    await pages.stack.db.pool.query("UPDATE catalog.drafts SET expires_at = now() - interval '1 second' WHERE website = $1", [website]);
    const before = await listingCount();
    for (const who of [browser, new MakerBrowser(pages.stack.baseUrl)]) {
      const res = await who.request(claim);
      expect(res.status).toBe(410);
      const page = parsePage(await res.text());
      expect(page.texts('h1')).toEqual(['This link has expired']);
      expect(page.texts('p').join(' ')).toContain('7 days');
    }
    const submitted = await post(browser, claim, entries);
    expect(submitted.status).toBe(410);
    expect(await listingCount()).toBe(before);
  });

  it('works until the moment it expires', async () => {
    const website = freshSite();
    const claim = await draftClaimPath(pages.stack, draftArgs(website));
    await pages.stack.db.pool.query("UPDATE catalog.drafts SET created_at = now() - interval '7 days' + interval '1 minute', expires_at = now() + interval '1 minute' WHERE website = $1", [website]);
    const browser = await newMaker();
    const res = await fillAndPost(browser, claim, claim);
    expect(res.status).toBe(303);
  });

  it('an unknown link is a 404 page', async () => {
    for (const token of ['not-a-real-token', 'x'.repeat(300)]) {
      const res = await new MakerBrowser(pages.stack.baseUrl).request(`/claim/${token}`);
      expect(res.status).toBe(404);
      expect(parsePage(await res.text()).texts('h1')).toEqual(['This link is not valid']);
    }
  });

  it('a refused claim form comes back filled, the link unspent', async () => {
    const website = freshSite();
    const claim = await draftClaimPath(pages.stack, draftArgs(website));
    const browser = await newMaker();
    const res = await fillAndPost(browser, claim, claim, { name: '<script>x</script>' });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(shownErrors(html).fields.name).toMatch(/plain text/);
    expect(shownValue(html, 'field-punchline')).toBe('Drafted by an assistant');
    expect(formEntries(html, claim).length).toBeGreaterThan(5);
    const { rows } = await pages.stack.db.pool.query('SELECT claimed_at FROM catalog.drafts WHERE website = $1', [website]);
    expect(rows[0].claimed_at).toBeNull();
    // Fixed, it goes through.
    expect((await fillAndPost(browser, claim, claim, { name: 'Fixed Name' })).status).toBe(303);
  });

  it('already listed: nothing is made and the link stays unspent', async () => {
    const owner = await newMaker();
    const website = freshSite();
    await fillAndPost(owner, '/dashboard/new', '/dashboard/new', complete(website));
    const claim = await draftClaimPath(pages.stack, draftArgs(website));
    const browser = await newMaker();
    const res = await fillAndPost(browser, claim, claim);
    expect(res.status).toBe(200);
    expect(parsePage(await res.text()).texts('h1')).toEqual(['Already in the directory']);
    expect((await browser.request(claim)).status).toBe(200);
  });
});

describe('CSRF', () => {
  it('refuses a form posted without its token, with a token of another session, or from before sign-in', async () => {
    const browser = await newMaker();
    const html = await (await browser.request('/dashboard/new')).text();
    const entries = typed(formEntries(html, '/dashboard/new'), complete(freshSite()));
    const before = await listingCount();

    const withoutToken = await post(browser, '/dashboard/new', entries.filter(([n]) => n !== '_csrf'));
    expect(withoutToken.status).toBe(403);
    expect(parsePage(await withoutToken.text()).texts('h1')).toEqual(['This form has expired']);

    const other = await newMaker();
    const othersToken = Browser.csrfOf(await (await other.request('/dashboard/new')).text());
    expect((await post(browser, '/dashboard/new', typed(entries, { _csrf: othersToken }))).status).toBe(403);

    // A token made for the signed-out visitor is refused once signed in.
    const visitor = new MakerBrowser(pages.stack.baseUrl);
    const signedOutToken = Browser.csrfOf(await (await visitor.request('/signin')).text());
    const signedIn = await signIn(pages.stack, `csrf-${Date.now()}@example.com`, visitor);
    expect((await post(signedIn, '/dashboard/new', typed(entries, { _csrf: signedOutToken }))).status).toBe(403);

    // A cross-site post carries no cookie of ours.
    const res = await fetch(`${pages.stack.baseUrl}/dashboard/new`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(entries).toString(), redirect: 'manual' });
    expect(res.status).toBe(403);
    expect(await listingCount()).toBe(before);

    // The form itself still works.
    expect((await post(browser, '/dashboard/new', entries)).status).toBe(303);
  });

  it('refuses a claim submitted without its token, leaving the link unspent', async () => {
    const website = freshSite();
    const claim = await draftClaimPath(pages.stack, { website, name: 'C', punchline: 'P', description: 'D', category: 'design' });
    const browser = await newMaker();
    const entries = formEntries(await (await browser.request(claim)).text(), claim);
    expect((await post(browser, claim, entries.filter(([n]) => n !== '_csrf'))).status).toBe(403);
    const { rows } = await pages.stack.db.pool.query('SELECT claimed_at FROM catalog.drafts WHERE website = $1', [website]);
    expect(rows[0].claimed_at).toBeNull();
  });
});
