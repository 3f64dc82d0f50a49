import { confirmPayment } from '../catalog/payments/confirm-payment.ts';
import { decideUpgrade } from '../catalog/listings/listing-rules.ts';
import { findPayment, recordCheckout, type Payment } from '../catalog/payments/payments.ts';
import { checkoutPays } from './payment-provider.ts';
import type { Payments } from './payments.ts';

/**
 * What the pay page does with a payment: what it offers, the button (start the provider's
 * checkout, or settle the built-in one), and the maker's return from Stripe. Every change goes
 * through the catalog's confirmPayment; nothing here writes a table but the checkout reference.
 */
export type PayOffer =
  /** Open, for this directory's provider, for a live free listing: the button is offered. */
  | { readonly kind: 'pay' }
  | { readonly kind: 'paid' }
  | { readonly kind: 'cancelled' }
  /** The listing is on the premium plan already (through another payment, say). */
  | { readonly kind: 'already_premium' }
  /** The listing is not live: only live listings are upgraded. */
  | { readonly kind: 'not_live'; readonly message: string }
  /** Opened with another checkout than the directory uses now (Stripe turned on or off since). */
  | { readonly kind: 'other_provider' };

export function payOffer(payment: Payment, payments: Payments): PayOffer {
  if (payment.status === 'paid') return { kind: 'paid' };
  if (payment.status === 'cancelled') return { kind: 'cancelled' };
  if (payment.provider !== payments.provider.name) return { kind: 'other_provider' };
  if (payment.listing.state.plan === 'premium') return { kind: 'already_premium' };
  const upgrade = decideUpgrade(payment.listing.state);
  if (!upgrade.allowed) return { kind: 'not_live', message: upgrade.message };
  return { kind: 'pay' };
}

export type PayResult =
  /** Send the browser to the provider's checkout. */
  | { readonly kind: 'redirect'; readonly url: string }
  /** The payment is paid (now, or it already was). */
  | { readonly kind: 'paid' }
  /** The maker completed the checkout and the provider is still collecting the money: nothing to do but wait. */
  | { readonly kind: 'settling' }
  /** Nothing to pay: the page shows why. */
  | { readonly kind: 'refused'; readonly offer: PayOffer };

/** The pay page's button. `returnUrl` is the pay page's own absolute URL. */
export async function pay(payments: Payments, payment: Payment, returnUrl: string): Promise<PayResult> {
  const offer = payOffer(payment, payments);
  if (offer.kind === 'paid') return { kind: 'paid' };
  if (offer.kind !== 'pay') return { kind: 'refused', offer };
  const { provider } = payments;

  // A checkout opened before (a second click, a Back from Stripe) is reused while it is open:
  // two open checkouts for one payment would let the maker pay twice.
  if (payment.providerRef) {
    const earlier = await provider.findCheckout(payment.providerRef);
    if (earlier && checkoutPays(earlier, payment)) {
      await confirmPayment(payments.confirm, payment.id, { provider: provider.name, providerRef: earlier.providerRef });
      return { kind: 'paid' };
    }
    if (earlier?.paymentId === payment.id) {
      if (earlier.settling) return { kind: 'settling' };
      if (earlier.open && earlier.url) return { kind: 'redirect', url: earlier.url };
    }
  }

  const started = await provider.startCheckout({
    paymentId: payment.id,
    description: `Premium plan for ${payment.listing.name}`,
    price: payment.price,
    returnUrl,
  });
  if (started.kind === 'settled') {
    await confirmPayment(payments.confirm, payment.id, { provider: provider.name });
    return { kind: 'paid' };
  }
  if (!(await recordCheckout(payments.confirm.pool, payment.id, started.providerRef))) {
    // Confirmed or cancelled while the checkout was being opened: never send the maker to pay.
    const now = await findPayment(payments.confirm.pool, payment.id);
    return now?.status === 'paid' ? { kind: 'paid' } : { kind: 'refused', offer: now ? payOffer(now, payments) : { kind: 'cancelled' } };
  }
  return { kind: 'redirect', url: started.url };
}

export type ReturnResult = 'paid' | 'not_paid_yet' | 'not_this_payment';

/**
 * The maker is back from the provider's checkout (Stripe's success_url names the session): the
 * session is retrieved from Stripe, and a session that paid this payment confirms it. A webhook
 * may have confirmed it already; confirming twice changes nothing.
 */
export async function confirmReturn(payments: Payments, payment: Payment, providerRef: string): Promise<ReturnResult> {
  if (payment.status === 'paid') return 'paid';
  if (payment.provider !== payments.provider.name) return 'not_this_payment';
  const state = await payments.provider.findCheckout(providerRef);
  if (!state || state.paymentId !== payment.id) return 'not_this_payment';
  if (!checkoutPays(state, payment)) return 'not_paid_yet';
  await confirmPayment(payments.confirm, payment.id, { provider: payments.provider.name, providerRef: state.providerRef });
  return 'paid';
}
