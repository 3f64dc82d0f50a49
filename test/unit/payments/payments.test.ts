import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { paymentConfirmedMail } from '../../../src/catalog/payments/confirm-payment.ts';
import { ConfigError, loadConfig } from '../../../src/config/config.ts';
import { checkoutPays, type CheckoutState } from '../../../src/payments/payment-provider.ts';
import { formatPrice } from '../../../src/money/money.ts';
import { fromStripeAmount, stripeAmountProblem, toStripeAmount } from '../../../src/money/stripe-amounts.ts';
import { checkoutStateOf, isCheckoutSessionId } from '../../../src/payments/stripe-checkout.ts';

const PAYMENT = { id: '6f1c1f0e-3b1a-4c55-9d8e-0a1b2c3d4e5f', price: { amountMinor: 2900, currency: 'usd' } };

function session(fields: Partial<Stripe.Checkout.Session>): Stripe.Checkout.Session {
  return {
    id: 'cs_test_abc',
    object: 'checkout.session',
    status: 'open',
    payment_status: 'unpaid',
    url: 'https://checkout.stripe.com/c/pay/cs_test_abc',
    client_reference_id: PAYMENT.id,
    metadata: { payment_id: PAYMENT.id },
    amount_total: 2900,
    currency: 'usd',
    ...fields,
  } as Stripe.Checkout.Session;
}

describe('prices in any ISO 4217 currency', () => {
  it('are shown with exactly their currency\'s decimals', () => {
    expect(formatPrice({ amountMinor: 2900, currency: 'usd' })).toBe('29.00 USD');
    expect(formatPrice({ amountMinor: 5, currency: 'usd' })).toBe('0.05 USD');
    expect(formatPrice({ amountMinor: 1500, currency: 'jpy' })).toBe('1500 JPY');
    expect(formatPrice({ amountMinor: 5250, currency: 'kwd' })).toBe('5.250 KWD');
    expect(formatPrice({ amountMinor: 7, currency: 'kwd' })).toBe('0.007 KWD');
    expect(formatPrice({ amountMinor: 12345, currency: 'clf' })).toBe('1.2345 CLF');
  });

  it('are charged at Stripe in the unit Stripe counts the currency in, and read back from it', () => {
    const cases: [number, string, number][] = [
      [2900, 'usd', 2900],
      [1500, 'jpy', 1500],
      [5000, 'ugx', 5000],
      [5250, 'kwd', 5250],
      // ISK has no minor unit, but Stripe takes it with two decimals, whole krónur only.
      [990, 'isk', 99000],
      // HUF and TWD are charged with two decimals (their whole-unit rule is for payouts).
      [1234, 'huf', 1234],
      [9999, 'twd', 9999],
      // MGA: two decimals in ISO 4217, whole units at Stripe.
      [100000, 'mga', 1000],
      // IQD: three decimals in ISO 4217, Stripe's default two.
      [1250, 'iqd', 125],
    ];
    for (const [amountMinor, currency, stripe] of cases) {
      expect(toStripeAmount({ amountMinor, currency }), currency).toBe(stripe);
      expect(fromStripeAmount(stripe, currency), currency).toBe(amountMinor);
      expect(stripeAmountProblem({ amountMinor, currency }), currency).toBeUndefined();
    }
  });

  it('that Stripe cannot charge exactly are named, with the nearest it can', () => {
    expect(toStripeAmount({ amountMinor: 5255, currency: 'kwd' })).toBeUndefined();
    expect(toStripeAmount({ amountMinor: 100050, currency: 'mga' })).toBeUndefined();
    expect(toStripeAmount({ amountMinor: 1255, currency: 'iqd' })).toBeUndefined();
    expect(stripeAmountProblem({ amountMinor: 1255, currency: 'iqd' })).toBe('Stripe charges IQD only in steps of 0.010 IQD, so it cannot charge 1.255 IQD: use 1.250 IQD or 1.260 IQD');
    // An amount Stripe reports that is no whole number of minor units is no price of ours.
    expect(fromStripeAmount(99050, 'isk')).toBeUndefined();
  });
});

describe('a Checkout Session as the payment sees it', () => {
  it('is open while the maker can pay in it', () => {
    expect(checkoutStateOf(session({}))).toEqual({
      providerRef: 'cs_test_abc',
      paymentId: PAYMENT.id,
      paid: false,
      settling: false,
      open: true,
      url: 'https://checkout.stripe.com/c/pay/cs_test_abc',
      price: { amountMinor: 2900, currency: 'usd' },
    });
  });

  it('is paid only when complete with payment_status paid; complete and unpaid is a debit on its way', () => {
    expect(checkoutStateOf(session({ status: 'complete', payment_status: 'paid', url: null }))).toMatchObject({ paid: true, settling: false, open: false });
    expect(checkoutStateOf(session({ status: 'complete', payment_status: 'unpaid', url: null }))).toMatchObject({ paid: false, settling: true, open: false });
    expect(checkoutStateOf(session({ status: 'expired', url: null }))).toMatchObject({ paid: false, settling: false, open: false });
    expect(checkoutStateOf(session({ status: 'open', payment_status: 'paid' }))).toMatchObject({ paid: false });
  });

  it('reads the amount Stripe charged in the currency\'s ISO minor unit', () => {
    expect(checkoutStateOf(session({ amount_total: 1500, currency: 'jpy' })).price).toEqual({ amountMinor: 1500, currency: 'jpy' });
    expect(checkoutStateOf(session({ amount_total: 5250, currency: 'kwd' })).price).toEqual({ amountMinor: 5250, currency: 'kwd' });
    expect(checkoutStateOf(session({ amount_total: 99000, currency: 'isk' })).price).toEqual({ amountMinor: 990, currency: 'isk' });
    expect(checkoutStateOf(session({ amount_total: 99050, currency: 'isk' })).price).toBeNull();
    expect(checkoutStateOf(session({ amount_total: null })).price).toBeNull();
  });

  it('names its payment by client_reference_id, else by metadata', () => {
    expect(checkoutStateOf(session({ client_reference_id: null })).paymentId).toBe(PAYMENT.id);
    expect(checkoutStateOf(session({ client_reference_id: null, metadata: {} })).paymentId).toBeNull();
  });

  it('pays the payment only for its id, its amount and its currency', () => {
    const paid: CheckoutState = { ...checkoutStateOf(session({ status: 'complete', payment_status: 'paid', url: null })) };
    expect(checkoutPays(paid, PAYMENT)).toBe(true);
    expect(checkoutPays({ ...paid, price: { amountMinor: 2900, currency: 'USD' } }, PAYMENT)).toBe(true);
    expect(checkoutPays({ ...paid, paid: false }, PAYMENT)).toBe(false);
    expect(checkoutPays({ ...paid, paymentId: 'another' }, PAYMENT)).toBe(false);
    expect(checkoutPays({ ...paid, price: { amountMinor: 2899, currency: 'usd' } }, PAYMENT)).toBe(false);
    expect(checkoutPays({ ...paid, price: { amountMinor: 2900, currency: 'eur' } }, PAYMENT)).toBe(false);
    expect(checkoutPays({ ...paid, price: null }, PAYMENT)).toBe(false);
  });

  it('recognises session ids, so nothing else is ever sent to Stripe as one', () => {
    expect(isCheckoutSessionId('cs_test_a1B2c3')).toBe(true);
    expect(isCheckoutSessionId('cs_live_a1B2c3')).toBe(true);
    for (const bad of ['', 'cs_test_', 'pi_test_abc', 'cs_test_abc/../../v1/customers', 'cs_test_abc?x=1', `cs_test_${'a'.repeat(251)}`, 42, undefined]) {
      expect(isCheckoutSessionId(bad), String(bad)).toBe(false);
    }
  });
});

describe('the "payment confirmed" e-mail', () => {
  const listing = { id: 'l1', slug: 'vector-mill', name: 'Vector Mill' };

  it('says the plan is active, with the price paid, and links the edit page', () => {
    const mail = paymentConfirmedMail({ to: 'maker@example.com', listing, price: { amountMinor: 4950, currency: 'eur' }, provider: 'stripe', publicUrl: 'https://catalog.example' });
    expect(mail.to).toBe('maker@example.com');
    expect(mail.subject).toBe('The premium plan is active for Vector Mill');
    expect(mail.text).toContain('Your payment of 49.50 EUR was confirmed: Vector Mill is now on the premium plan.');
    expect(mail.text).toContain('\nhttps://catalog.example/dashboard/listings/vector-mill\n');
  });

  it('says no money was charged for the built-in checkout', () => {
    const mail = paymentConfirmedMail({ to: 'maker@example.com', listing, price: { amountMinor: 2900, currency: 'usd' }, provider: 'builtin', publicUrl: 'https://catalog.example' });
    expect(mail.text).toContain('No money was charged');
    expect(mail.text).not.toContain('29.00 USD');
  });
});

describe('STRIPE_API_BASE', () => {
  const base = { STRIPE_SECRET_KEY: 'sk_test_abc123' };

  it('is unset by default (Stripe\'s own API) and read as an origin when set', () => {
    expect(loadConfig({}, base).payments.stripe?.apiBase).toBeUndefined();
    expect(loadConfig({}, { ...base, STRIPE_API_BASE: 'http://127.0.0.1:12111' }).payments.stripe?.apiBase).toBe('http://127.0.0.1:12111');
  });

  it('refuses anything but an http(s) origin, naming the variable', () => {
    for (const bad of ['127.0.0.1:12111', 'ftp://127.0.0.1:21', 'http://127.0.0.1:12111/v1', 'http://u:p@127.0.0.1:12111', 'http://127.0.0.1:12111?x=1']) {
      expect(() => loadConfig({}, { ...base, STRIPE_API_BASE: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({}, { ...base, STRIPE_API_BASE: bad }), bad).toThrow(/^STRIPE_API_BASE: /m);
    }
  });
});
