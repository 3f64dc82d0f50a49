import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePage } from '../../../helpers/html.ts';
import { Browser, makerToken, signIn } from '../../../helpers/oauth.ts';
import { decideInBrowser, loggedMails, makerClient, myListing, runCatalog, siteHandler, tool, type Json } from '../../../helpers/review.ts';
import { startSite, tableResolver, type TestSite } from '../../../helpers/site-network.ts';
import { startTestStack, type TestStack } from '../../../helpers/stack.ts';

/**
 * Review and moderation from outside: listings submitted by a maker through the MCP SDK client
 * (loopback sites under real-looking names), decided by an admin through the web queue (a
 * cookie jar posting the pages' forms) and through `catalog review`; each decision seen in REST,
 * in my_listings with its feedback, in the admin's history, and in the e-mails sent.
 */
let stack: TestStack;
let site: TestSite;
let admin: Browser;
let maker: Client;
let otherMaker: Client;
const HOSTS = ['alpha.example', 'beta.example', 'gamma.example', 'delta.example', 'epsilon.example', 'zeta.example', 'eta.example', 'theta.example', 'iota.example', 'kappa.example'];
const ADMIN = 'admin@example.com';
const MAKER = 'maker@example.com';

beforeAll(async () => {
  site = await startSite(siteHandler());
  stack = await startTestStack({
    realPublicUrl: true,
    env: { FETCH_ALLOW_LOOPBACK: 'true', TRUST_PROXY: 'true', RATE_LIMIT_OTHER_PER_MIN: '100000', RATE_LIMIT_SEARCH_PER_MIN: '100000', DRAFT_CAP_PER_DAY: '1000' },
    fetchOptions: { resolver: tableResolver(Object.fromEntries(HOSTS.map((h) => [h, ['127.0.0.1']]))) },
  });
  // The admin is made by the command operators use.
  const granted = await runCatalog(stack, ['admin', 'grant', ADMIN]);
  expect(granted.code, granted.stderr).toBe(0);
  admin = await signIn(stack, ADMIN);
  maker = await makerClient(stack, (await makerToken(stack, MAKER)).accessToken);
  otherMaker = await makerClient(stack, (await makerToken(stack, 'other-maker@example.com')).accessToken);
}, 120_000);

afterAll(async () => {
  await maker?.close();
  await otherMaker?.close();
  await stack?.stop();
  await site?.close();
});

const web = (host: string) => `http://${host}:${site.port}/`;

/** A listing the automatic check holds for review: it has no description. */
async function submitPending(client: Client, host: string, name: string, extra: Json = {}): Promise<string> {
  const answer = await tool(client, 'submit_product', { website: web(host), name, punchline: `${name} in one line`, category: 'design', ...extra });
  expect(answer.body.outcome, JSON.stringify(answer.body)).toBe('pending_review');
  return (answer.body.listing as { slug: string }).slug;
}

async function rest(path: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${stack.baseUrl}/api/v1${path}`);
  return { status: res.status, body: (await res.json()) as Json };
}

async function designCount(): Promise<number> {
  const { body } = await rest('/categories');
  return (body.categories as { slug: string; count: number }[]).find((c) => c.slug === 'design')!.count;
}

async function searchSlugs(q: string): Promise<string[]> {
  const { body } = await rest(`/search?q=${encodeURIComponent(q)}`);
  return (body.products as { slug: string }[]).map((p) => p.slug);
}

async function listingRow(slug: string) {
  const { rows } = await stack.db.pool.query<{ status: string; hidden_reason: string | null; featured: boolean; listed_at: Date | null; review_feedback: string | null; review_requested_at: Date | null }>(
    'SELECT status::text AS status, hidden_reason, featured, listed_at, review_feedback, review_requested_at FROM catalog.listings WHERE slug = $1',
    [slug],
  );
  return rows[0]!;
}

async function decisions(slug: string) {
  const { rows } = await stack.db.pool.query<{ action: string; from_status: string; to_status: string; feedback: string | null; email: string | null }>(
    `SELECT d.action, d.from_status::text AS from_status, d.to_status::text AS to_status, d.feedback, m.email
       FROM catalog.review_decisions d JOIN catalog.listings l ON l.id = d.listing_id LEFT JOIN catalog.makers m ON m.id = d.decided_by
      WHERE l.slug = $1 ORDER BY d.id`,
    [slug],
  );
  return rows;
}

function mailsTo(to: string, subject: RegExp) {
  return stack.mails.filter((m) => m.to === to && subject.test(m.subject));
}

describe('the review queue page', () => {
  let first: string;
  let second: string;
  let duplicate: string;

  beforeAll(async () => {
    first = await submitPending(maker, 'alpha.example', 'Alpha Queue');
    second = await submitPending(maker, 'beta.example', 'Beta Queue');
    duplicate = await submitPending(otherMaker, 'alpha.example', 'Alpha Copy');
  });

  it('lists pending listings oldest first, with the check reasons, the site as inspected, https previews, duplicates and the maker', async () => {
    const res = await admin.request('/admin/review');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toMatch(/no-store/);
    const html = await res.text();
    const page = parsePage(html);
    const cards = page.all('section').filter((s) => page.attr(s, 'id')?.startsWith('listing-'));
    const order = cards.map((c) => page.attr(c, 'id')!.slice('listing-'.length));
    // the imported pending fixture asked first, then the submissions in order
    expect(order).toEqual(['pending-review', first, second, duplicate]);

    const card = cards[1]!;
    const text = page.text(card);
    expect(text).toContain('Alpha Queue');
    expect(text).toContain(MAKER);
    expect(text).toContain('The listing has no description.');
    expect(text).toContain('alpha.example home');
    expect(text).toContain('What alpha.example does for you');
    const images = page.all('img', card).map((i) => page.attr(i, 'src'));
    expect(images).toContain('https://cdn.alpha.example/cover.png');
    // the icon is served over http by the test site: named, but not loaded
    expect(images.some((src) => src?.startsWith('http://'))).toBe(false);
    expect(text).toContain(`http://alpha.example:${site.port}/touch.png`);
    expect(text).toContain('Not shown: only https images are previewed.');
    const dupLinks = page.all('a', card).map((a) => page.attr(a, 'href'));
    expect(dupLinks).toContain(`/admin/listings/${duplicate}`);
    expect(page.text(cards[3]!)).toContain('other-maker@example.com');
    expect(page.all('a', cards[3]!).map((a) => page.attr(a, 'href'))).toContain(`/admin/listings/${first}`);
    // every decision form carries the CSRF token; pending listings can be approved, rejected, sent back, hidden
    const form = page.all('form', card).find((f) => page.attr(f, 'action') === `/admin/listings/${first}/decisions`)!;
    expect(page.all('input', form).some((i) => page.attr(i, 'name') === '_csrf' && page.attr(i, 'value'))).toBe(true);
    const buttons = page.all('button', form).map((b) => page.attr(b, 'value'));
    expect(buttons).toEqual(['approve', 'approve_feature', 'request_changes', 'reject', 'hide']);
  });

  it('answers a form posted without its CSRF token with 403 and changes nothing', async () => {
    const res = await admin.request(`/admin/listings/${second}/decisions`, { form: { action: 'approve', from: 'queue' } });
    expect(res.status).toBe(403);
    expect((await listingRow(second)).status).toBe('pending');
  });
});

describe('decisions through the web queue', () => {
  it('approve: live in REST, search and category counts, listed_at set once, feedback cleared, the maker e-mailed with the public page', async () => {
    const slug = await submitPending(maker, 'gamma.example', 'Gamma Approve');
    await stack.settle();
    const countBefore = await designCount();
    expect((await rest(`/products/${slug}`)).status).toBe(404);

    const res = await decideInBrowser(admin, slug, 'approve', { feedback: 'Welcome aboard.' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/admin/review?done=approve&slug=${slug}`);
    const after = await admin.request(res.headers.get('location')!);
    expect(parsePage(await after.text()).texts('p')).toContain(`${slug} was approved.`);

    await stack.settle();
    const product = await rest(`/products/${slug}`);
    expect(product.status).toBe(200);
    expect(product.body).toMatchObject({ slug, name: 'Gamma Approve', featured: false });
    expect(await designCount()).toBe(countBefore + 1);
    expect(await searchSlugs('Gamma Approve')).toContain(slug);
    // MCP reads answer the same Product
    const viaMcp = await tool(maker, 'get_product', { slug });
    expect(viaMcp).toEqual({ ok: true, body: product.body });

    const row = await listingRow(slug);
    expect(row.status).toBe('live');
    expect(row.listed_at).not.toBeNull();
    const mine = await myListing(maker, slug);
    expect(mine).toMatchObject({ status: 'live', feedback: 'Welcome aboard.', listed_at: row.listed_at!.toISOString() });
    expect(await decisions(slug)).toEqual([{ action: 'approve', from_status: 'pending', to_status: 'live', feedback: 'Welcome aboard.', email: ADMIN }]);

    const mail = mailsTo(MAKER, /Gamma Approve is live/);
    expect(mail).toHaveLength(1);
    expect(mail[0]!.text).toContain(`https://directory.test/products/${slug}`);
    expect(mail[0]!.text).toContain('Welcome aboard.');
  });

  it('reject needs feedback; a rejected listing leaves nothing public, refuses update_listing, and the maker is told why', async () => {
    const slug = await submitPending(maker, 'delta.example', 'Delta Reject');
    const mailsBefore = stack.mails.length;

    const missing = await decideInBrowser(admin, slug, 'reject', { feedback: '   ' });
    expect(missing.status).toBe(400);
    const page = parsePage(await missing.text());
    expect(page.byId(`field-feedback-${slug}-error`)).toBeDefined();
    expect(page.text(page.byId(`field-feedback-${slug}-error`)!)).toMatch(/Say why the listing is rejected/);
    expect((await listingRow(slug)).status).toBe('pending');
    expect(await decisions(slug)).toEqual([]);

    const tooLong = await decideInBrowser(admin, slug, 'reject', { feedback: 'x'.repeat(2001) });
    expect(tooLong.status).toBe(400);
    expect(await tooLong.text()).toContain('at most 2000 characters');
    expect(stack.mails.length).toBe(mailsBefore);

    const res = await decideInBrowser(admin, slug, 'reject', { feedback: 'This is not a product.' });
    expect(res.status).toBe(303);
    await stack.settle();
    expect((await rest(`/products/${slug}`)).status).toBe(404);
    expect(await myListing(maker, slug)).toMatchObject({ status: 'rejected', feedback: 'This is not a product.' });

    const edit = await tool(maker, 'update_listing', { slug, punchline: 'A better line' });
    expect(edit.ok).toBe(false);
    expect(edit.body.code).toBe('CONFLICT');
    expect((await listingRow(slug)).status).toBe('rejected');

    const mail = mailsTo(MAKER, /Delta Reject was not accepted/);
    expect(mail).toHaveLength(1);
    expect(mail[0]!.text).toContain('This is not a product.');
    expect(mail[0]!.text).toContain(`${stack.baseUrl}/dashboard/listings/${slug}`);

    // rejection is final: even approve is refused, with the reason on the page
    const again = await decideInBrowser(admin, slug, 'approve', { from: 'listing' });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('rejected, which is final');
  });

  it("request changes: the maker reads the feedback; the maker's edit sends the listing back to the end of the queue", async () => {
    const slug = await submitPending(maker, 'epsilon.example', 'Epsilon Changes');
    const res = await decideInBrowser(admin, slug, 'request_changes', { feedback: 'Add a description of what it does.' });
    expect(res.status).toBe(303);
    expect(await myListing(maker, slug)).toMatchObject({ status: 'changes_requested', feedback: 'Add a description of what it does.' });
    expect(mailsTo(MAKER, /Changes requested for Epsilon Changes/)[0]!.text).toContain('Add a description of what it does.');
    const queue = parsePage(await (await admin.request('/admin/review')).text());
    expect(queue.byId(`listing-${slug}`)).toBeUndefined();

    const requestedBefore = (await listingRow(slug)).review_requested_at!;
    const edit = await tool(maker, 'update_listing', { slug, description: 'It turns notes into plans.' });
    expect(edit.body).toMatchObject({ outcome: 'sent_to_review' });
    const row = await listingRow(slug);
    expect(row.status).toBe('pending');
    expect(row.review_requested_at!.getTime()).toBeGreaterThan(requestedBefore.getTime());
    const order = parsePage(await (await admin.request('/admin/review')).text())
      .all('section')
      .map((s) => s.attribs.id)
      .filter((id) => id?.startsWith('listing-'));
    expect(order.at(-1)).toBe(`listing-${slug}`);
  });

  it('hide keeps a live listing out of every list until restored; restore brings it back live with its first listed_at', async () => {
    const slug = await submitPending(maker, 'zeta.example', 'Zeta Hide');
    expect((await decideInBrowser(admin, slug, 'approve')).status).toBe(303);
    await stack.settle();
    const listedAt = (await listingRow(slug)).listed_at!;
    const count = await designCount();

    const hidden = await decideInBrowser(admin, slug, 'hide', { from: 'listing', feedback: 'Under investigation.' });
    expect(hidden.status).toBe(303);
    expect(hidden.headers.get('location')).toBe(`/admin/listings/${slug}?done=hide`);
    await stack.settle();
    expect((await rest(`/products/${slug}`)).status).toBe(404);
    expect(await designCount()).toBe(count - 1);
    expect(await searchSlugs('Zeta Hide')).not.toContain(slug);
    expect(await myListing(maker, slug)).toMatchObject({ status: 'hidden', hidden_reason: 'admin', feedback: 'Under investigation.' });
    expect(mailsTo(MAKER, /Zeta Hide/).map((m) => m.subject)).toEqual(['Zeta Hide is live in the directory']);

    // hidden again is refused: it stays hidden until restored
    expect((await decideInBrowser(admin, slug, 'hide', { from: 'listing' })).status).toBe(409);

    expect((await decideInBrowser(admin, slug, 'restore', { from: 'listing' })).status).toBe(303);
    await stack.settle();
    expect((await rest(`/products/${slug}`)).status).toBe(200);
    expect(await designCount()).toBe(count);
    expect(await searchSlugs('Zeta Hide')).toContain(slug);
    const row = await listingRow(slug);
    expect(row).toMatchObject({ status: 'live', hidden_reason: null, review_feedback: null });
    expect(row.listed_at!.getTime()).toBe(listedAt.getTime());
    expect((await decisions(slug)).map((d) => `${d.action}:${d.from_status}>${d.to_status}`)).toEqual(['approve:pending>live', 'hide:live>hidden', 'restore:hidden>live']);
  });

  it('feature shows in the Product; only live listings are featured; approve-and-feature does both', async () => {
    const slug = await submitPending(maker, 'eta.example', 'Eta Feature');
    const early = await decideInBrowser(admin, slug, 'feature');
    expect(early.status).toBe(409);
    expect(await early.text()).toContain('cannot be featured: it is waiting for review');

    expect((await decideInBrowser(admin, slug, 'approve_feature')).status).toBe(303);
    await stack.settle();
    expect((await rest(`/products/${slug}`)).body).toMatchObject({ featured: true });
    expect((await tool(maker, 'get_product', { slug })).body).toMatchObject({ featured: true });
    const listed = await rest('/search?q=Eta Feature');
    expect((listed.body.products as Json[]).find((p) => p.slug === slug)).toMatchObject({ featured: true });
    expect((await decisions(slug)).map((d) => d.action)).toEqual(['approve', 'feature']);

    expect((await decideInBrowser(admin, slug, 'unfeature', { from: 'listing' })).status).toBe(303);
    await stack.settle();
    expect((await rest(`/products/${slug}`)).body).toMatchObject({ featured: false });

    // hidden while featured, it keeps the flag; approve-and-feature then only approves
    expect((await decideInBrowser(admin, slug, 'feature', { from: 'listing' })).status).toBe(303);
    expect((await decideInBrowser(admin, slug, 'hide', { from: 'listing' })).status).toBe(303);
    expect((await decideInBrowser(admin, slug, 'approve_feature', { from: 'listing' })).status).toBe(303);
    await stack.settle();
    expect((await rest(`/products/${slug}`)).body).toMatchObject({ featured: true });
    expect((await decisions(slug)).map((d) => d.action)).toEqual(['approve', 'feature', 'unfeature', 'feature', 'hide', 'approve']);
  });

  it("the admin's listing page finds any listing by slug and shows its history, who decided, and the actions its state allows", async () => {
    const slug = await submitPending(maker, 'theta.example', 'Theta History');
    await decideInBrowser(admin, slug, 'request_changes', { feedback: 'Say who it is for.' });
    const found = await admin.request(`/admin/listings?slug=${slug.toUpperCase()}`);
    expect(found.status).toBe(303);
    expect(found.headers.get('location')).toBe(`/admin/listings/${slug}`);
    const page = parsePage(await (await admin.request(`/admin/listings/${slug}`)).text());
    const rows = page.all('tr').slice(1).map((tr) => page.all('td', tr).map((td) => page.text(td)));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.slice(1)).toEqual(['Changes requested', 'In review → Changes requested', ADMIN, 'Say who it is for.']);
    expect(page.all('button').map((b) => page.attr(b, 'value')).filter(Boolean)).toEqual(['approve', 'approve_feature', 'request_changes', 'reject', 'hide']);

    const unknown = await admin.request('/admin/listings/no-such-listing');
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("No listing has the slug 'no-such-listing'.");
    const bad = await admin.request('/admin/listings?slug=Not%20a%20slug!');
    expect(bad.status).toBe(400);
  });
});

describe('admins only', () => {
  it('answers 403 to a signed-out visitor and to a signed-in maker on every admin page and action, showing nothing of them', async () => {
    const slug = await submitPending(maker, 'iota.example', 'Iota Guarded');
    const signedOut = new Browser(stack.baseUrl);
    const makerBrowser = await signIn(stack, 'not-an-admin@example.com');
    const pages = ['/admin', '/admin/review', '/admin/listings', `/admin/listings?slug=${slug}`, `/admin/listings/${slug}`, '/admin/listings/no-such-listing'];
    for (const browser of [signedOut, makerBrowser]) {
      for (const path of pages) {
        const res = await browser.request(path);
        expect(res.status, path).toBe(403);
        const html = await res.text();
        expect(html, path).toContain('For admins only');
        expect(html, path).not.toContain('Iota Guarded');
        expect(html, path).not.toContain(MAKER);
      }
      // a form post with a valid token of the visitor's own session: refused before anything is decided
      const token = Browser.csrfOf(await (await browser.request(browser === signedOut ? '/signin' : '/settings/apps')).text());
      for (const action of ['approve', 'reject', 'request_changes', 'hide', 'restore', 'feature', 'unfeature', 'approve_feature']) {
        const res = await browser.request(`/admin/listings/${slug}/decisions`, { form: { _csrf: token, action, feedback: 'x', from: 'queue' } });
        expect(res.status, action).toBe(403);
      }
    }
    expect((await listingRow(slug)).status).toBe('pending');
    expect(await decisions(slug)).toEqual([]);
    const signInLink = parsePage(await (await signedOut.request('/admin/review')).text())
      .all('a')
      .map((a) => a.attribs.href);
    expect(signInLink).toContain('/signin?return_to=%2Fadmin%2Freview');
  });

  it('takes the role away at once when revoked', async () => {
    const deputy = 'deputy@example.com';
    expect((await runCatalog(stack, ['admin', 'grant', deputy])).code).toBe(0);
    const browser = await signIn(stack, deputy);
    expect((await browser.request('/admin/review')).status).toBe(200);
    expect((await runCatalog(stack, ['admin', 'revoke', deputy])).code).toBe(0);
    expect((await browser.request('/admin/review')).status).toBe(403);
  });
});

// Each case runs the command in a process of its own: give them time on a busy machine.
describe('catalog review (the command)', { timeout: 120_000 }, () => {
  it('lists the queue oldest first, one tab-separated line each', async () => {
    const slug = await submitPending(maker, 'kappa.example', 'Kappa Command');
    const run = await runCatalog(stack, ['review', 'list']);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
    const { rows } = await stack.db.pool.query<{ slug: string }>(
      `SELECT slug FROM catalog.listings WHERE status = 'pending' ORDER BY COALESCE(review_requested_at, created_at), id`,
    );
    expect(lines.map((l) => l[0])).toEqual(rows.map((r) => r.slug));
    const mine = lines.find((l) => l[0] === slug)!;
    expect(mine).toHaveLength(5);
    expect(new Date(mine[1]!).toISOString()).toBe(mine[1]);
    expect(mine.slice(2)).toEqual([MAKER, 'missing_description', 'Kappa Command']);
    expect(lines.find((l) => l[0] === 'pending-review')!.slice(2, 4)).toEqual(['-', '-']);
  });

  it('decides with one line of output, as the directory or as an admin, and e-mails the maker', async () => {
    const slug = await submitPending(maker, 'kappa.example', 'Kappa Approve', { website: `http://kappa.example:${site.port}/approve` });
    const run = await runCatalog(stack, ['review', 'approve', slug, '--feedback', 'Approved from the terminal.']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${slug}: approved (pending -> live); the maker was e-mailed\n`);
    expect(loggedMails(run)).toEqual([expect.objectContaining({ to: MAKER, subject: 'Kappa Approve is live in the directory' })]);
    expect(loggedMails(run)[0]!.text).toContain(`https://directory.test/products/${slug}`);
    await stack.settle();
    expect((await rest(`/products/${slug}`)).status).toBe(200);
    expect(await myListing(maker, slug)).toMatchObject({ status: 'live', feedback: 'Approved from the terminal.' });

    const featured = await runCatalog(stack, ['review', 'feature', slug, '--as', ADMIN]);
    expect(featured.code, featured.stderr).toBe(0);
    expect(featured.stdout).toBe(`${slug}: featured (live -> live)\n`);
    await stack.settle();
    expect((await rest(`/products/${slug}`)).body).toMatchObject({ featured: true });

    const hidden = await runCatalog(stack, ['review', 'hide', slug]);
    expect(hidden.stdout).toBe(`${slug}: hidden (live -> hidden)\n`);
    await stack.settle();
    expect((await rest(`/products/${slug}`)).status).toBe(404);
    const restored = await runCatalog(stack, ['review', 'restore', slug]);
    expect(restored.stdout).toBe(`${slug}: restored (hidden -> live)\n`);
    await stack.settle();
    expect((await rest(`/products/${slug}`)).body).toMatchObject({ featured: true });

    expect(await decisions(slug)).toEqual([
      { action: 'approve', from_status: 'pending', to_status: 'live', feedback: 'Approved from the terminal.', email: null },
      { action: 'feature', from_status: 'live', to_status: 'live', feedback: null, email: ADMIN },
      { action: 'hide', from_status: 'live', to_status: 'hidden', feedback: null, email: null },
      { action: 'restore', from_status: 'hidden', to_status: 'live', feedback: null, email: null },
    ]);
  });

  it('rejects with the feedback required, and sends back for changes', async () => {
    const rejected = await submitPending(maker, 'kappa.example', 'Kappa Reject', { website: `http://kappa.example:${site.port}/reject` });
    const bare = await runCatalog(stack, ['review', 'reject', rejected]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Say why the listing is rejected');
    expect((await listingRow(rejected)).status).toBe('pending');
    const done = await runCatalog(stack, ['review', 'reject', rejected, '--feedback', 'Duplicate of another listing.']);
    expect(done.code, done.stderr).toBe(0);
    expect(await myListing(maker, rejected)).toMatchObject({ status: 'rejected', feedback: 'Duplicate of another listing.' });
    expect(loggedMails(done)[0]!.text).toContain('Duplicate of another listing.');

    const sentBack = await submitPending(maker, 'kappa.example', 'Kappa Back', { website: `http://kappa.example:${site.port}/back` });
    const back = await runCatalog(stack, ['review', 'request-changes', sentBack, '--feedback', 'Pick a category that fits.']);
    expect(back.stdout).toBe(`${sentBack}: sent back for changes (pending -> changes_requested); the maker was e-mailed\n`);
    expect(await myListing(maker, sentBack)).toMatchObject({ status: 'changes_requested', feedback: 'Pick a category that fits.' });
  });

  it('answers bad input with exit 2, an unknown slug or a refused move with exit 1, and changes nothing', async () => {
    const slug = await submitPending(maker, 'kappa.example', 'Kappa Refused', { website: `http://kappa.example:${site.port}/refused` });
    const cases: Array<{ args: string[]; code: number; message: RegExp }> = [
      { args: ['review'], code: 2, message: /expected list or an action/ },
      { args: ['review', 'promote', slug], code: 2, message: /unknown action 'promote'/ },
      { args: ['review', 'approve'], code: 2, message: /expected 'approve SLUG'/ },
      { args: ['review', 'approve', slug, 'extra'], code: 2, message: /expected 'approve SLUG'/ },
      { args: ['review', 'approve', 'Not_A_Slug'], code: 2, message: /is not a slug/ },
      { args: ['review', 'approve', slug, '--colour', 'red'], code: 2, message: /Unknown option '--colour'/ },
      { args: ['review', 'list', '--feedback', 'x'], code: 2, message: /'list' takes no slug/ },
      { args: ['review', 'approve', slug, '--as', 'not-an-address'], code: 2, message: /--as:/ },
      { args: ['review', 'approve', slug, '--as', MAKER], code: 2, message: /maker@example.com is not an admin/ },
      { args: ['review', 'approve', slug, '--feedback', 'x'.repeat(2001)], code: 2, message: /at most 2000 characters/ },
      { args: ['review', 'feature', slug, '--feedback', 'x'], code: 2, message: /Featuring carries no feedback/ },
      { args: ['review', 'approve', 'no-such-listing'], code: 1, message: /No listing has the slug 'no-such-listing'/ },
      { args: ['review', 'restore', slug], code: 1, message: /cannot be restored: it is waiting for review/ },
    ];
    for (const c of cases) {
      const run = await runCatalog(stack, c.args);
      expect(run.code, c.args.join(' ')).toBe(c.code);
      expect(run.stderr, c.args.join(' ')).toMatch(c.message);
      expect(run.stdout, c.args.join(' ')).toBe('');
    }
    expect((await listingRow(slug)).status).toBe('pending');
    expect(await decisions(slug)).toEqual([]);
  });
});

describe('the queue page at its size limit', () => {
  it('shows the 50 oldest requests and says how many wait', async () => {
    const pendingNow = (await stack.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.listings WHERE status = 'pending'`)).rows[0]!.n;
    const extra = 50 - pendingNow;
    await stack.db.pool.query(
      `INSERT INTO catalog.listings (slug, name, punchline, description, website, status, review_requested_at)
       SELECT 'bulk-' || i, 'Bulk ' || i, 'Bulk listing', '', 'https://bulk' || i || '.example', 'pending', now() + i * interval '1 second'
         FROM generate_series(1, $1::int) AS i`,
      [extra],
    );
    const cardsOf = async () => {
      const page = parsePage(await (await admin.request('/admin/review')).text());
      return { cards: page.all('section').filter((s) => s.attribs.id?.startsWith('listing-')).length, text: page.texts('p').join(' ') };
    };
    expect(await cardsOf()).toMatchObject({ cards: 50, text: expect.stringContaining('50 waiting.') });
    await stack.db.pool.query(
      `INSERT INTO catalog.listings (slug, name, punchline, description, website, status, review_requested_at) VALUES ('bulk-last', 'Bulk last', 'Bulk', '', 'https://last.example', 'pending', now() + interval '1 hour')`,
    );
    const full = await cardsOf();
    expect(full).toMatchObject({ cards: 50, text: expect.stringContaining('51 waiting; showing 1 to 50, page 1 of 2.') });
    const page = parsePage(await (await admin.request('/admin/review')).text());
    expect(page.byId('listing-bulk-last')).toBeUndefined();
    // The next page holds the newest request, and links back.
    const next = page.all('a').find((a) => page.text(a) === 'Next page');
    expect(page.attr(next!, 'href')).toBe('/admin/review?page=2');
    const second = parsePage(await (await admin.request('/admin/review?page=2')).text());
    expect(second.byId('listing-bulk-last')).toBeDefined();
    expect(second.texts('p').join(' ')).toContain('51 waiting; showing 51 to 51, page 2 of 2.');
    expect(second.all('a').some((a) => second.text(a) === 'Previous page')).toBe(true);
  });
});
