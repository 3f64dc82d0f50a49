import type { FastifyBaseLogger } from 'fastify';
import type Stripe from 'stripe';
import { confirmPayment } from '../catalog/payments/confirm-payment.ts';
import { findPayment, isPaymentId } from '../catalog/payments/payments.ts';
import { checkoutPays } from './payment-provider.ts';
import type { Payments } from './payments.ts';
import { checkoutStateOf } from './stripe-session.ts';

/**
 * Stripe's events about our checkouts, once their signature is verified (the webhook's route:
 * src/http/stripe-webhook-route.ts). A session that paid one of our payments confirms it,
 * recording the event id in the same transaction, so a retried or replayed event is applied once.
 */
export type WebhookOutcome = 'applied' | 'already_applied' | 'ignored';

const CONFIRMING_EVENTS: ReadonlySet<string> = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded']);

/** Applies one verified event. */
export async function applyStripeEvent(payments: Payments, event: Stripe.Event, log: FastifyBaseLogger): Promise<WebhookOutcome> {
  if (!CONFIRMING_EVENTS.has(event.type) || event.data.object.object !== 'checkout.session') return 'ignored';
  const state = checkoutStateOf(event.data.object as Stripe.Checkout.Session);
  // completed with payment_status unpaid: a bank debit still on its way; its
  // async_payment_succeeded event confirms it later.
  if (!state.paid || !isPaymentId(state.paymentId)) return 'ignored';
  const payment = await findPayment(payments.confirm.pool, state.paymentId);
  if (!payment || payment.provider !== 'stripe') return 'ignored';
  if (!checkoutPays(state, payment)) {
    log.warn({ paymentId: payment.id, session: state.providerRef, paid: state.price, price: payment.price }, 'Stripe checkout paid another amount than its payment; not applied');
    return 'ignored';
  }
  const result = await confirmPayment(payments.confirm, payment.id, { provider: 'stripe', providerRef: state.providerRef, eventId: event.id });
  return result.outcome === 'confirmed' ? 'applied' : 'already_applied';
}
