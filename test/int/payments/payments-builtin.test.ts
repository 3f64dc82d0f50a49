import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, MemoryOAuthClient, decideConsent, signIn } from '../../helpers/oauth.ts';
import { PREMIUM_PROFILE, makerListing, outboxCount, paymentFor, paymentRow, productOf, readPayPage } from '../../helpers/payments.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * The built-in checkout (no STRIPE_SECRET_KEY): upgrade_listing's link opens a pay page that
 * says no money moves; its Confirm (no charge) button moves the listing to the premium plan,
 * whose profile then shows in REST and MCP, and the maker is told by e-mail.
 */
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ realPublicUrl: true });
});

afterAll(async () => {
  await stack?.stop();
});

/** A valid CSRF token for this browser, as any form of the site gives it (here the sign-in form). */
async function tokenOf(browser: Browser): Promise<string> {
  return Browser.csrfOf(await (await browser.request('/signin')).text());
}

async function openPage(browser: Browser, path: string) {
  const res = await browser.request(path);
  const html = await res.text();
  return { res, html, page: readPayPage(html) };
}

describe('the built-in checkout, end to end', () => {
  it('upgrade_listing over MCP → pay page → Confirm (no charge) → premium in REST and MCP, and the maker is e-mailed', async () => {
    const email = 'premium-maker@example.com';
    const makerBrowser = await signIn(stack, email);
    const listing = await makerListing(stack, email, { name: 'Sketch Relay' });
    await stack.settle();
    const before = await productOf(stack, listing.slug);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ highlights: [], ideal_for: [], faq: [] });

    // The maker's assistant asks for the link through the official SDK, signed in by OAuth.
    const provider = new MemoryOAuthClient({
      client_name: 'Payment Assistant',
      redirect_uris: ['http://127.0.0.1:45679/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/api/mcp`), { authProvider: provider });
    const client = new Client({ name: 'payments-test', version: '1.0.0' });
    await client.connect(transport);
    await expect(client.callTool({ name: 'upgrade_listing', arguments: { slug: listing.slug } })).rejects.toBeInstanceOf(UnauthorizedError);
    const back = await decideConsent(makerBrowser, provider.authorizationUrl!.href, 'approve');
    await transport.finishAuth(back.searchParams.get('code')!);
    const upgrade = (await client.callTool({ name: 'upgrade_listing', arguments: { slug: listing.slug } })) as CallToolResult;
    expect(upgrade.isError).toBeFalsy();
    const payment = (upgrade.structuredContent as { payment: { url: string; price: string } }).payment;
    expect(payment.price).toBe('29.00 USD');
    const payUrl = new URL(payment.url);
    expect(payUrl.origin).toBe(stack.baseUrl);
    expect(payUrl.pathname).toMatch(/^\/pay\/[0-9a-f-]{36}$/);
    const paymentId = payUrl.pathname.split('/').pop()!;

    // Anyone holding the link pays: a browser that never signed in.
    const payer = new Browser(stack.baseUrl);
    const open = await openPage(payer, payUrl.pathname);
    expect(open.res.status).toBe(200);
    expect(open.res.headers.get('cache-control')).toMatch(/no-store/);
    expect(open.res.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    expect(open.page.h1).toBe('Premium plan for Sketch Relay');
    expect(open.page.text).toContain('29.00 USD');
    expect(open.page.status).toEqual(['Open']);
    expect(open.page.text).toContain('This directory runs without a payment provider: no money moves.');
    expect(open.page.text).toContain('no subscription');
    expect(open.page.buttons).toContain('Confirm (no charge)');
    expect(open.page.forms).toContain(payUrl.pathname);
    expect(await paymentRow(stack, paymentId)).toMatchObject({ status: 'open', provider: 'builtin', plan: 'free', paid_at: null });

    const mailsBefore = stack.mails.length;
    const outboxBefore = await outboxCount(stack, listing.listingId);
    const confirm = await payer.request(payUrl.pathname, { form: { _csrf: Browser.csrfOf(open.html) } });
    expect(confirm.status).toBe(303);
    expect(confirm.headers.get('location')).toBe(`${payUrl.pathname}?done=paid`);

    const row = await paymentRow(stack, paymentId);
    expect(row).toMatchObject({ status: 'paid', plan: 'premium' });
    expect(row.paid_at).toBeInstanceOf(Date);
    expect(await outboxCount(stack, listing.listingId)).toBe(outboxBefore + 1);

    const paid = await openPage(payer, confirm.headers.get('location')!);
    expect(paid.res.status).toBe(200);
    expect(paid.page.status).toEqual(['Paid']);
    expect(paid.page.text).toContain('Payment confirmed: the listing is on the premium plan.');
    expect(paid.page.buttons).not.toContain('Confirm (no charge)');
    expect(paid.page.links).toContainEqual({ text: 'Fill in the premium profile', href: `/dashboard/listings/${listing.slug}` });

    // The premium profile reaches REST and MCP reads through the projector.
    await stack.settle();
    const after = await productOf(stack, listing.slug);
    expect(after.body).toMatchObject(PREMIUM_PROFILE);
    const viaMcp = (await client.callTool({ name: 'get_product', arguments: { slug: listing.slug } })) as CallToolResult;
    expect(viaMcp.structuredContent).toMatchObject(PREMIUM_PROFILE);
    await client.close();

    const mails = stack.mails.slice(mailsBefore);
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ to: email, subject: 'The premium plan is active for Sketch Relay' });
    expect(mails[0]!.text).toContain(`${stack.baseUrl}/dashboard/listings/${listing.slug}`);
    expect(mails[0]!.text).toContain('No money was charged');

    // A second press (Back, then the button again) changes nothing and mails nobody.
    const again = await payer.request(payUrl.pathname, { form: { _csrf: Browser.csrfOf(open.html) } });
    expect(again.status).toBe(303);
    expect(stack.mails.length).toBe(mailsBefore + 1);
    expect(await outboxCount(stack, listing.listingId)).toBe(outboxBefore + 1);
  });

  it('cancels the listing\'s other open payments once one is paid, and their page offers nothing', async () => {
    const listing = await makerListing(stack, 'two-links@example.com');
    const first = await paymentFor(stack, listing);
    // Another link for the same listing while the first is open is the same payment (reused).
    expect((await paymentFor(stack, listing)).id).toBe(first.id);
    await stack.db.pool.query(`INSERT INTO catalog.payments (listing_id, maker_id, provider, amount_minor, currency) VALUES ($1, $2, 'builtin', 2900, 'usd')`, [listing.listingId, listing.makerId]);
    const { rows } = await stack.db.pool.query<{ id: string }>('SELECT id FROM catalog.payments WHERE listing_id = $1 AND id <> $2', [listing.listingId, first.id]);
    const second = rows[0]!.id;

    const payer = new Browser(stack.baseUrl);
    const open = await openPage(payer, `/pay/${first.id}`);
    expect((await payer.request(`/pay/${first.id}`, { form: { _csrf: Browser.csrfOf(open.html) } })).status).toBe(303);
    expect(await paymentRow(stack, second)).toMatchObject({ status: 'cancelled', paid_at: null });

    const other = await openPage(payer, `/pay/${second}`);
    expect(other.page.status).toEqual(['Cancelled']);
    expect(other.page.buttons).not.toContain('Confirm (no charge)');
    const refused = await payer.request(`/pay/${second}`, { form: { _csrf: await tokenOf(payer) } });
    expect(refused.status).toBe(409);
    expect(await paymentRow(stack, second)).toMatchObject({ status: 'cancelled', paid_at: null });
  });
});

describe('refusals', () => {
  it('refuses a confirmation without its CSRF token, or with a forged one: 403, and nothing changes', async () => {
    const listing = await makerListing(stack, 'csrf-payer@example.com');
    const payment = await paymentFor(stack, listing);
    const payer = new Browser(stack.baseUrl);
    await openPage(payer, `/pay/${payment.id}`);
    const mailsBefore = stack.mails.length;

    const missing = await payer.request(`/pay/${payment.id}`, { form: { confirm: '1' } });
    expect(missing.status).toBe(403);
    expect(readPayPage(await missing.text()).h1).toBe('This form has expired');
    const forged = await payer.request(`/pay/${payment.id}`, { form: { _csrf: 'forged-token' } });
    expect(forged.status).toBe(403);
    // A token is only good with the cookie it was made for: a fresh browser's post is refused.
    const page = await openPage(new Browser(stack.baseUrl), `/pay/${payment.id}`);
    const stranger = await new Browser(stack.baseUrl).request(`/pay/${payment.id}`, { form: { _csrf: Browser.csrfOf(page.html) } });
    expect(stranger.status).toBe(403);

    expect(await paymentRow(stack, payment.id)).toMatchObject({ status: 'open', plan: 'free', paid_at: null });
    expect(stack.mails.length).toBe(mailsBefore);
  });

  it('answers 404 pages for an unknown payment id, and for one that is not an id', async () => {
    const payer = new Browser(stack.baseUrl);
    for (const path of [`/pay/${randomUUID()}`, '/pay/not-a-payment', `/pay/${'9'.repeat(300)}`]) {
      const res = await payer.request(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(readPayPage(await res.text()).h1).toBe('Payment not found');
    }
  });

  it('refuses to confirm an unknown payment even with a valid form: 404, nothing written', async () => {
    const listing = await makerListing(stack, 'unknown-post@example.com');
    const payment = await paymentFor(stack, listing);
    const payer = new Browser(stack.baseUrl);
    const open = await openPage(payer, `/pay/${payment.id}`);
    const before = await stack.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.payments WHERE status = 'paid'`);
    const res = await payer.request(`/pay/${randomUUID()}`, { form: { _csrf: Browser.csrfOf(open.html) } });
    expect(res.status).toBe(404);
    const after = await stack.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.payments WHERE status = 'paid'`);
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });

  it('offers nothing to pay for a listing already on the premium plan', async () => {
    const listing = await makerListing(stack, 'already@example.com', { plan: 'premium' });
    await stack.db.pool.query(`INSERT INTO catalog.payments (listing_id, maker_id, provider, amount_minor, currency) VALUES ($1, $2, 'builtin', 2900, 'usd')`, [listing.listingId, listing.makerId]);
    const { rows } = await stack.db.pool.query<{ id: string }>('SELECT id FROM catalog.payments WHERE listing_id = $1', [listing.listingId]);
    const payer = new Browser(stack.baseUrl);
    const page = await openPage(payer, `/pay/${rows[0]!.id}`);
    expect(page.res.status).toBe(200);
    expect(page.page.text).toContain('is already on the premium plan: there is nothing to pay with this link.');
    expect(page.page.buttons).not.toContain('Confirm (no charge)');
    expect(page.page.forms).not.toContain(`/pay/${rows[0]!.id}`);
    const refused = await payer.request(`/pay/${rows[0]!.id}`, { form: { _csrf: await tokenOf(payer) } });
    expect(refused.status).toBe(409);
    expect(await paymentRow(stack, rows[0]!.id)).toMatchObject({ status: 'open', paid_at: null });
  });

  it('never confirms without charge a payment opened with Stripe (a key since removed)', async () => {
    const listing = await makerListing(stack, 'was-stripe@example.com');
    await stack.db.pool.query(`INSERT INTO catalog.payments (listing_id, maker_id, provider, amount_minor, currency) VALUES ($1, $2, 'stripe', 2900, 'usd')`, [listing.listingId, listing.makerId]);
    const { rows } = await stack.db.pool.query<{ id: string }>('SELECT id FROM catalog.payments WHERE listing_id = $1', [listing.listingId]);
    const id = rows[0]!.id;
    const payer = new Browser(stack.baseUrl);
    const page = await openPage(payer, `/pay/${id}`);
    expect(page.page.text).toContain('This payment link was made for another checkout than the one this directory uses now');
    expect(page.page.buttons).toEqual(expect.not.arrayContaining(['Confirm (no charge)']));
    const refused = await payer.request(`/pay/${id}`, { form: { _csrf: await tokenOf(payer) } });
    expect(refused.status).toBe(409);
    expect(await paymentRow(stack, id)).toMatchObject({ status: 'open', plan: 'free', paid_at: null });
  });

  it('offers nothing for a listing that is no longer live', async () => {
    const listing = await makerListing(stack, 'hidden@example.com');
    const payment = await paymentFor(stack, listing);
    await stack.db.pool.query(`UPDATE catalog.listings SET status = 'hidden', hidden_reason = 'admin' WHERE id = $1`, [listing.listingId]);
    const payer = new Browser(stack.baseUrl);
    const page = await openPage(payer, `/pay/${payment.id}`);
    expect(page.page.text).toContain('Only a live listing can be upgraded');
    const refused = await payer.request(`/pay/${payment.id}`, { form: { _csrf: await tokenOf(payer) } });
    expect(refused.status).toBe(409);
    expect(await paymentRow(stack, payment.id)).toMatchObject({ status: 'open', plan: 'free' });
  });

  it('has no Stripe webhook without Stripe: 404', async () => {
    const res = await fetch(`${stack.baseUrl}/payments/stripe/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(404);
  });
});
