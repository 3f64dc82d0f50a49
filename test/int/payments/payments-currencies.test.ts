import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, makerToken } from '../../helpers/oauth.ts';
import { makerListing, paymentRow, readPayPage, type MakerListing } from '../../helpers/payments.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { startStripeStandIn, type StripeStandIn } from '../../helpers/stripe-stand-in.ts';

/**
 * PREMIUM_PRICE in currencies with 2, 0 and 3 decimals, through both checkouts: the price
 * upgrade_listing answers (with its amount in the currency's minor unit), the price the pay page
 * shows, the amount recorded, the amount Stripe is asked to charge (in the unit Stripe counts the
 * currency in), and the payment confirmed when the amount Stripe charged is exactly that.
 */
const SECRET_KEY = 'sk_test_currencies';

const CURRENCIES = [
  { config: '29.00 USD', shown: '29.00 USD', currency: 'usd', amountMinor: 2900, minorUnit: 2, stripeAmount: '2900' },
  { config: '1500 JPY', shown: '1500 JPY', currency: 'jpy', amountMinor: 1500, minorUnit: 0, stripeAmount: '1500' },
  { config: '5.25 KWD', shown: '5.250 KWD', currency: 'kwd', amountMinor: 5250, minorUnit: 3, stripeAmount: '5250' },
] as const;

let stripe: StripeStandIn;

beforeAll(async () => {
  stripe = await startStripeStandIn();
});

afterAll(async () => {
  await stripe?.close();
});

/** upgrade_listing through the SDK client, signed in by OAuth: its payment object. */
async function upgradeOverMcp(stack: TestStack, listing: MakerListing) {
  const { accessToken } = await makerToken(stack, listing.email);
  const client = new Client({ name: 'currencies-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${accessToken}` } } }));
  try {
    const result = (await client.callTool({ name: 'upgrade_listing', arguments: { slug: listing.slug } })) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const body = result.structuredContent as { message: string; payment: { url: string; price: string; amount_minor: number; minor_unit: number; currency: string } };
    return { message: body.message, payment: body.payment, id: new URL(body.payment.url).pathname.split('/').pop()! };
  } finally {
    await client.close();
  }
}

async function payPage(browser: Browser, id: string) {
  const res = await browser.request(`/pay/${id}`);
  const html = await res.text();
  return { html, page: readPayPage(html) };
}

async function recorded(stack: TestStack, id: string) {
  const { rows } = await stack.db.pool.query<{ amount_minor: number; currency: string }>('SELECT amount_minor, currency FROM catalog.payments WHERE id = $1', [id]);
  return rows[0];
}

describe.each(CURRENCIES)('PREMIUM_PRICE=$config', (c) => {
  describe('with the built-in checkout', () => {
    let stack: TestStack;
    beforeAll(async () => {
      stack = await startTestStack({ realPublicUrl: true, env: { PREMIUM_PRICE: c.config } });
    });
    afterAll(async () => {
      await stack?.stop();
    });

    it(`answers, shows and confirms ${c.shown}`, async () => {
      const listing = await makerListing(stack, `builtin-${c.currency}@example.com`, { name: `Builtin ${c.currency}` });
      const { message, payment, id } = await upgradeOverMcp(stack, listing);
      expect(payment).toMatchObject({ price: c.shown, amount_minor: c.amountMinor, minor_unit: c.minorUnit, currency: c.currency });
      expect(message).toContain(`to pay ${c.shown};`);
      expect(await recorded(stack, id)).toEqual({ amount_minor: c.amountMinor, currency: c.currency });

      const payer = new Browser(stack.baseUrl);
      const open = await payPage(payer, id);
      expect(open.page.text).toContain(c.shown);
      expect(open.page.buttons).toContain('Confirm (no charge)');
      const confirm = await payer.request(`/pay/${id}`, { form: { _csrf: Browser.csrfOf(open.html) } });
      expect(confirm.status).toBe(303);
      expect(await paymentRow(stack, id)).toMatchObject({ status: 'paid', plan: 'premium' });
    });
  });

  describe('with Stripe Checkout', () => {
    let stack: TestStack;
    beforeAll(async () => {
      stack = await startTestStack({ realPublicUrl: true, env: { PREMIUM_PRICE: c.config, STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_API_BASE: stripe.url } });
    });
    afterAll(async () => {
      await stack?.stop();
    });

    it(`answers and shows ${c.shown}, asks Stripe for ${c.stripeAmount} ${c.currency}, and confirms the session that charged it`, async () => {
      const listing = await makerListing(stack, `stripe-${c.currency}@example.com`, { name: `Stripe ${c.currency}` });
      const { payment, id } = await upgradeOverMcp(stack, listing);
      expect(payment).toMatchObject({ price: c.shown, amount_minor: c.amountMinor, minor_unit: c.minorUnit, currency: c.currency });

      const payer = new Browser(stack.baseUrl);
      const open = await payPage(payer, id);
      expect(open.page.buttons).toContain(`Pay ${c.shown} with Stripe`);
      const requestsBefore = stripe.requests.length;
      const press = await payer.request(`/pay/${id}`, { form: { _csrf: Browser.csrfOf(open.html) } });
      expect(press.status).toBe(303);
      const create = stripe.requests.slice(requestsBefore).find((r) => r.method === 'POST')!;
      expect(create.form.get('line_items[0][price_data][currency]')).toBe(c.currency);
      expect(create.form.get('line_items[0][price_data][unit_amount]')).toBe(c.stripeAmount);

      const session = [...stripe.sessions.values()].find((s) => s.client_reference_id === id)!;
      stripe.complete(session.id);
      const back = await payer.request(`/pay/${id}?session_id=${session.id}`);
      expect(back.status).toBe(303);
      expect(await paymentRow(stack, id)).toMatchObject({ status: 'paid', plan: 'premium', provider_ref: session.id });
    });
  });
});
