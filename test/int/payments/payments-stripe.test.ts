import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../../helpers/oauth.ts';
import { PREMIUM_PROFILE, makerListing, outboxCount, paymentFor, paymentRow, productOf, readPayPage, type MakerListing } from '../../helpers/payments.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { signedEvent, startStripeStandIn, type StandInSession, type StripeStandIn } from '../../helpers/stripe-stand-in.ts';

/**
 * Stripe Checkout, with the Stripe SDK talking to a loopback stand-in for Stripe's API
 * (STRIPE_API_BASE) and Stripe's webhook driven with events signed as Stripe signs them.
 */
const SECRET_KEY = 'sk_test_paymentsSuite';
const WEBHOOK_SECRET = 'whsec_paymentsSuiteSecret';

let stripe: StripeStandIn;
let stack: TestStack;

beforeAll(async () => {
  stripe = await startStripeStandIn();
  stack = await startTestStack({
    realPublicUrl: true,
    env: { STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: stripe.url, PREMIUM_PRICE: '49.50 EUR' },
  });
});

afterAll(async () => {
  await stack?.stop();
  await stripe?.close();
});

async function payPage(browser: Browser, id: string) {
  const res = await browser.request(`/pay/${id}`);
  const html = await res.text();
  return { res, html, page: readPayPage(html) };
}

/** Presses the pay page's button; returns the answer (a 303 to Stripe's checkout). */
async function pressPay(browser: Browser, id: string) {
  const { html } = await payPage(browser, id);
  return browser.request(`/pay/${id}`, { form: { _csrf: Browser.csrfOf(html) } });
}

async function postWebhook(body: string, signature: string | undefined) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (signature !== undefined) headers['stripe-signature'] = signature;
  const res = await fetch(`${stack.baseUrl}/payments/stripe/webhook`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A listing with an open payment whose Stripe checkout was opened through the pay page. */
async function openedCheckout(email: string): Promise<{ listing: MakerListing; paymentId: string; session: StandInSession }> {
  const listing = await makerListing(stack, email);
  const payment = await paymentFor(stack, listing);
  const res = await pressPay(new Browser(stack.baseUrl), payment.id);
  expect(res.status).toBe(303);
  const session = [...stripe.sessions.values()].find((s) => s.client_reference_id === payment.id)!;
  return { listing, paymentId: payment.id, session };
}

function completedEvent(session: StandInSession, opts: { type?: string; id?: string; secret?: string } = {}) {
  return signedEvent({ type: opts.type ?? 'checkout.session.completed', object: session, secret: opts.secret ?? WEBHOOK_SECRET, ...(opts.id && { id: opts.id }) });
}

describe('the pay page with Stripe Checkout', () => {
  it('opens a Checkout Session with the price, the listing and our payment id, and sends the browser to it', async () => {
    const listing = await makerListing(stack, 'stripe-maker@example.com', { name: 'Vector Mill' });
    const payment = await paymentFor(stack, listing);
    const payer = new Browser(stack.baseUrl);

    const open = await payPage(payer, payment.id);
    expect(open.res.status).toBe(200);
    expect(open.page.h1).toBe('Premium plan for Vector Mill');
    expect(open.page.status).toEqual(['Open']);
    expect(open.page.buttons).toContain('Pay 49.50 EUR with Stripe');
    expect(open.page.text).not.toContain('no money moves');
    // Chrome applies form-action to the redirect after the POST: Stripe's checkout is allowed.
    expect(open.res.headers.get('content-security-policy')).toMatch(/form-action 'self' https:\/\/checkout\.stripe\.com/);

    const requestsBefore = stripe.requests.length;
    const res = await payer.request(`/pay/${payment.id}`, { form: { _csrf: Browser.csrfOf(open.html) } });
    expect(res.status).toBe(303);
    const sent = stripe.requests.slice(requestsBefore);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/checkout/sessions']);
    const create = sent[0]!;
    expect(create.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    const payUrl = `${stack.baseUrl}/pay/${payment.id}`;
    expect(Object.fromEntries(create.form)).toEqual({
      mode: 'payment',
      'line_items[0][quantity]': '1',
      'line_items[0][price_data][currency]': 'eur',
      'line_items[0][price_data][unit_amount]': '4950',
      'line_items[0][price_data][product_data][name]': 'Premium plan for Vector Mill',
      client_reference_id: payment.id,
      'metadata[payment_id]': payment.id,
      'payment_intent_data[metadata][payment_id]': payment.id,
      success_url: `${payUrl}?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${payUrl}?cancelled=1`,
    });
    const session = [...stripe.sessions.values()].find((s) => s.client_reference_id === payment.id)!;
    expect(res.headers.get('location')).toBe(`https://checkout.stripe.com/c/pay/${session.id}`);
    expect(await paymentRow(stack, payment.id)).toMatchObject({ status: 'open', provider: 'stripe', provider_ref: session.id, plan: 'free' });

    // Pressing again while that checkout is open goes back to it: no second session to pay twice in.
    const again = await pressPay(payer, payment.id);
    expect(again.headers.get('location')).toBe(`https://checkout.stripe.com/c/pay/${session.id}`);
    expect(stripe.requests.slice(requestsBefore + 1).map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v1/checkout/sessions/${session.id}`]);
    expect([...stripe.sessions.values()].filter((s) => s.client_reference_id === payment.id)).toHaveLength(1);

    // Back from Stripe without paying.
    const left = await payer.request(`/pay/${payment.id}?cancelled=1`);
    expect(readPayPage(await left.text()).text).toContain('You left Stripe\'s checkout: nothing was charged.');
  });

  it('opens a new session when the earlier one expired', async () => {
    const { paymentId, session } = await openedCheckout('expired@example.com');
    session.status = 'expired';
    session.url = null;
    const res = await pressPay(new Browser(stack.baseUrl), paymentId);
    expect(res.status).toBe(303);
    const sessions = [...stripe.sessions.values()].filter((s) => s.client_reference_id === paymentId);
    expect(sessions).toHaveLength(2);
    const fresh = sessions.find((s) => s.id !== session.id)!;
    expect(res.headers.get('location')).toBe(fresh.url);
    expect((await paymentRow(stack, paymentId)).provider_ref).toBe(fresh.id);
  });

  it('says so, and changes nothing, when Stripe cannot be reached', async () => {
    const down = await startTestStack({
      realPublicUrl: true,
      // A loopback port nothing listens on.
      env: { STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_API_BASE: 'http://127.0.0.1:9' },
    });
    try {
      const other = await makerListing(down, 'stripe-down@example.com');
      const downPayment = await paymentFor(down, other);
      const res = await pressPay(new Browser(down.baseUrl), downPayment.id);
      expect(res.status).toBe(502);
      expect(readPayPage(await res.text()).text).toContain('Stripe could not be reached: nothing was charged or changed.');
      expect(await paymentRow(down, downPayment.id)).toMatchObject({ status: 'open', provider_ref: null });
    } finally {
      await down.stop();
    }
  });
});

describe('the Stripe webhook', () => {
  it('applies checkout.session.completed: paid, premium in REST, the maker e-mailed; a replay is applied once', async () => {
    const { listing, paymentId, session } = await openedCheckout('webhook-maker@example.com');
    stripe.complete(session.id);
    const event = completedEvent(session);
    const mailsBefore = stack.mails.length;
    const outboxBefore = await outboxCount(stack, listing.listingId);

    const first = await postWebhook(event.body, event.signature);
    expect(first).toEqual({ status: 200, body: { received: true, outcome: 'applied' } });
    const row = await paymentRow(stack, paymentId);
    expect(row).toMatchObject({ status: 'paid', plan: 'premium', provider_ref: session.id });
    expect(row.paid_at).toBeInstanceOf(Date);
    const events = await stack.db.pool.query('SELECT provider, event_id FROM catalog.payment_events WHERE event_id = $1', [event.id]);
    expect(events.rows).toEqual([{ provider: 'stripe', event_id: event.id }]);

    await stack.settle();
    expect((await productOf(stack, listing.slug)).body).toMatchObject(PREMIUM_PROFILE);
    const mails = stack.mails.slice(mailsBefore);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to).toBe('webhook-maker@example.com');
    expect(mails[0]!.text).toContain('Your payment of 49.50 EUR was confirmed');
    expect(mails[0]!.text).toContain(`${stack.baseUrl}/dashboard/listings/${listing.slug}`);

    // Stripe retries an event it thinks was not received: the same event again changes nothing.
    const replay = await postWebhook(event.body, event.signature);
    expect(replay).toEqual({ status: 200, body: { received: true, outcome: 'already_applied' } });
    expect(stack.mails.length).toBe(mailsBefore + 1);
    expect(await outboxCount(stack, listing.listingId)).toBe(outboxBefore + 1);

    // The maker comes back from Stripe after the webhook: the page says it is paid.
    const back = await new Browser(stack.baseUrl).request(`/pay/${paymentId}?session_id=${session.id}`);
    expect(back.status).toBe(200);
    expect(readPayPage(await back.text()).text).toContain('Payment confirmed: the listing is on the premium plan.');
    const page = await payPage(new Browser(stack.baseUrl), paymentId);
    expect(page.page.status).toEqual(['Paid']);
    expect(page.page.links).toContainEqual({ text: 'Fill in the premium profile', href: `/dashboard/listings/${listing.slug}` });
  });

  it('applies the same event delivered twice at once exactly once', async () => {
    const { listing, paymentId, session } = await openedCheckout('concurrent@example.com');
    stripe.complete(session.id);
    const event = completedEvent(session);
    const mailsBefore = stack.mails.length;
    const outboxBefore = await outboxCount(stack, listing.listingId);

    const answers = await Promise.all([postWebhook(event.body, event.signature), postWebhook(event.body, event.signature), postWebhook(event.body, event.signature)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.map((a) => a.body.outcome).sort()).toEqual(['already_applied', 'already_applied', 'applied']);
    expect(await outboxCount(stack, listing.listingId)).toBe(outboxBefore + 1);
    expect(stack.mails.slice(mailsBefore).filter((m) => m.to === 'concurrent@example.com')).toHaveLength(1);
    expect(await paymentRow(stack, paymentId)).toMatchObject({ status: 'paid', plan: 'premium' });
  });

  it('refuses a bad signature with 400 and changes nothing', async () => {
    const { listing, paymentId, session } = await openedCheckout('bad-signature@example.com');
    const paid = { ...session, status: 'complete', payment_status: 'paid', url: null };
    const good = completedEvent(paid as StandInSession);
    const wrongSecret = completedEvent(paid as StandInSession, { secret: 'whsec_someoneElse' });
    const outboxBefore = await outboxCount(stack, listing.listingId);
    const mailsBefore = stack.mails.length;

    const tampered = good.body.replace('"amount_total":4950', '"amount_total":1');
    expect(tampered).not.toBe(good.body);
    const stale = signedEvent({ type: 'checkout.session.completed', object: paid, secret: WEBHOOK_SECRET, timestamp: Math.floor(Date.now() / 1000) - 3600 });
    for (const [what, body, signature] of [
      ['wrong secret', wrongSecret.body, wrongSecret.signature],
      ['body changed after signing', tampered, good.signature],
      ['no signature', good.body, undefined],
      ['garbage signature', good.body, 't=1,v1=00'],
      ['signed an hour ago', stale.body, stale.signature],
    ] as const) {
      const res = await postWebhook(body, signature);
      expect(res.status, what).toBe(400);
      expect(res.body.code, what).toBe('BAD_REQUEST');
    }
    expect(await paymentRow(stack, paymentId)).toMatchObject({ status: 'open', plan: 'free', paid_at: null });
    expect(await outboxCount(stack, listing.listingId)).toBe(outboxBefore);
    const events = await stack.db.pool.query('SELECT 1 FROM catalog.payment_events WHERE event_id IN ($1, $2, $3)', [good.id, wrongSecret.id, stale.id]);
    expect(events.rowCount).toBe(0);
    expect(stack.mails.length).toBe(mailsBefore);
  });

  it('acknowledges and ignores other event types, unpaid sessions and sessions of no payment of ours', async () => {
    const { listing, paymentId, session } = await openedCheckout('ignored@example.com');
    const outboxBefore = await outboxCount(stack, listing.listingId);
    const unrelated = signedEvent({ type: 'customer.created', object: { id: 'cus_123', object: 'customer', email: 'x@example.com' }, secret: WEBHOOK_SECRET });
    expect(await postWebhook(unrelated.body, unrelated.signature)).toEqual({ status: 200, body: { received: true, outcome: 'ignored' } });

    // A bank debit: the checkout completes unpaid; the money arrives with async_payment_succeeded.
    const debit = completedEvent(stripe.complete(session.id, 'unpaid'));
    expect((await postWebhook(debit.body, debit.signature)).body.outcome).toBe('ignored');
    expect(await paymentRow(stack, paymentId)).toMatchObject({ status: 'open', plan: 'free' });

    const foreign = stripe.add({ status: 'complete', payment_status: 'paid', client_reference_id: 'order-991', amount_total: 4950, currency: 'eur', url: null });
    const notOurs = completedEvent(foreign);
    expect((await postWebhook(notOurs.body, notOurs.signature)).body.outcome).toBe('ignored');
    expect(await outboxCount(stack, listing.listingId)).toBe(outboxBefore);

    const succeeded = completedEvent(stripe.complete(session.id, 'paid'), { type: 'checkout.session.async_payment_succeeded' });
    expect((await postWebhook(succeeded.body, succeeded.signature)).body.outcome).toBe('applied');
    expect(await paymentRow(stack, paymentId)).toMatchObject({ status: 'paid', plan: 'premium' });
  });

  it('ignores a session that paid another amount than the payment', async () => {
    const { paymentId, session } = await openedCheckout('other-amount@example.com');
    const cheap = { ...stripe.complete(session.id), amount_total: 100 };
    const event = completedEvent(cheap);
    expect((await postWebhook(event.body, event.signature)).body.outcome).toBe('ignored');
    expect(await paymentRow(stack, paymentId)).toMatchObject({ status: 'open', plan: 'free' });
  });

  it('refuses a body that is not JSON by its Content-Type', async () => {
    const res = await fetch(`${stack.baseUrl}/payments/stripe/webhook`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(res.status).toBe(415);
  });
});

describe('the return from Stripe (success_url)', () => {
  it('confirms the payment by retrieving the session, once it paid', async () => {
    const { listing, paymentId, session } = await openedCheckout('return-maker@example.com');
    const payer = new Browser(stack.baseUrl);
    const back = `/pay/${paymentId}?session_id=${session.id}`;

    const early = await payer.request(back);
    expect(early.status).toBe(200);
    expect(readPayPage(await early.text()).text).toContain('Stripe has not confirmed this payment yet.');
    expect(await paymentRow(stack, paymentId)).toMatchObject({ status: 'open', plan: 'free' });

    stripe.complete(session.id);
    const mailsBefore = stack.mails.length;
    const done = await payer.request(back);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`/pay/${paymentId}?done=paid`);
    expect(await paymentRow(stack, paymentId)).toMatchObject({ status: 'paid', plan: 'premium', provider_ref: session.id });
    expect(stack.mails.slice(mailsBefore).map((m) => m.to)).toEqual(['return-maker@example.com']);

    // The webhook's event for the same session arrives afterwards: nothing more happens.
    const event = completedEvent(session);
    expect((await postWebhook(event.body, event.signature)).body.outcome).toBe('already_applied');
    expect(stack.mails.length).toBe(mailsBefore + 1);
    await stack.settle();
    expect((await productOf(stack, listing.slug)).body).toMatchObject(PREMIUM_PROFILE);
  });

  it('never confirms with a session of another payment, or a session id that is not one', async () => {
    const mine = await openedCheckout('return-mine@example.com');
    const theirs = await openedCheckout('return-theirs@example.com');
    stripe.complete(theirs.session.id);
    const payer = new Browser(stack.baseUrl);

    const crossed = await payer.request(`/pay/${mine.paymentId}?session_id=${theirs.session.id}`);
    expect(crossed.status).toBe(400);
    expect(readPayPage(await crossed.text()).text).toContain('That checkout does not belong to this payment');
    expect(await paymentRow(stack, mine.paymentId)).toMatchObject({ status: 'open', plan: 'free' });

    const requestsBefore = stripe.requests.length;
    const bogus = await payer.request(`/pay/${mine.paymentId}?session_id=${encodeURIComponent('../../v1/customers')}`);
    expect(bogus.status).toBe(400);
    expect(stripe.requests.length).toBe(requestsBefore);
    expect(await paymentRow(stack, mine.paymentId)).toMatchObject({ status: 'open', plan: 'free' });
  });
});

describe('Stripe without a webhook secret', () => {
  let bare: TestStack;
  beforeAll(async () => {
    bare = await startTestStack({ realPublicUrl: true, env: { STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_API_BASE: stripe.url } });
  });
  afterAll(async () => {
    await bare?.stop();
  });

  it('has no webhook endpoint (404) and confirms on the return from Stripe', async () => {
    const listing = await makerListing(bare, 'no-webhook@example.com');
    const payment = await paymentFor(bare, listing);
    const payer = new Browser(bare.baseUrl);
    const html = await (await payer.request(`/pay/${payment.id}`)).text();
    const res = await payer.request(`/pay/${payment.id}`, { form: { _csrf: Browser.csrfOf(html) } });
    expect(res.status).toBe(303);
    const session = [...stripe.sessions.values()].find((s) => s.client_reference_id === payment.id)!;
    stripe.complete(session.id);

    const event = signedEvent({ type: 'checkout.session.completed', object: session, secret: WEBHOOK_SECRET });
    const hook = await fetch(`${bare.baseUrl}/payments/stripe/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': event.signature }, body: event.body });
    expect(hook.status).toBe(404);
    expect(await paymentRow(bare, payment.id)).toMatchObject({ status: 'open', plan: 'free' });

    const back = await payer.request(`/pay/${payment.id}?session_id=${session.id}`);
    expect(back.status).toBe(303);
    expect(await paymentRow(bare, payment.id)).toMatchObject({ status: 'paid', plan: 'premium' });
  });
});
