import type Stripe from 'stripe';
import type { Price } from '../money/money.ts';
import type { CheckoutState } from './payment-provider.ts';
import { fromStripeAmount } from '../money/stripe-amounts.ts';

/**
 * What the service reads of Stripe's Checkout Sessions, kept apart from the Stripe client
 * (stripe-checkout.ts), which is loaded only when Stripe is configured.
 */

/** A Checkout Session id as Stripe writes them; anything else is never sent to Stripe. */
const SESSION_ID = /^cs_(?:test|live)_[A-Za-z0-9]{1,250}$/;

export function isCheckoutSessionId(value: unknown): value is string {
  return typeof value === 'string' && SESSION_ID.test(value);
}

/** What a session charged, in the currency's ISO minor unit; null when Stripe does not say (or says an amount that is none). */
function sessionPrice(session: Stripe.Checkout.Session): Price | null {
  if (session.amount_total === null || !session.currency) return null;
  const amountMinor = fromStripeAmount(session.amount_total, session.currency);
  return amountMinor === undefined ? null : { amountMinor, currency: session.currency.toLowerCase() };
}

/** What a Checkout Session says about our payment. */
export function checkoutStateOf(session: Stripe.Checkout.Session): CheckoutState {
  const paymentId = session.client_reference_id ?? session.metadata?.payment_id ?? null;
  return {
    providerRef: session.id,
    paymentId,
    paid: session.status === 'complete' && session.payment_status === 'paid',
    settling: session.status === 'complete' && session.payment_status === 'unpaid',
    open: session.status === 'open' && session.url !== null,
    url: session.url,
    price: sessionPrice(session),
  };
}
