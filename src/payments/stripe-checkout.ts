import Stripe from 'stripe';
import { formatPrice } from '../money/money.ts';
import type { PaymentProvider } from './payment-provider.ts';
import { toStripeAmount } from '../money/stripe-amounts.ts';
import { checkoutStateOf, isCheckoutSessionId } from './stripe-session.ts';

export { checkoutStateOf, isCheckoutSessionId };

/**
 * Stripe Checkout: the pay page's button opens a Checkout Session (one payment, one line item at
 * the payment's price) and sends the maker to Stripe's page; Stripe sends them back to the pay
 * page. The session carries our payment id as client_reference_id and in its metadata, which is
 * how its webhook events and the session retrieved on return are matched to the payment.
 */
export interface StripeClientOptions {
  secretKey: string;
  /**
   * Where API calls go instead of https://api.stripe.com (STRIPE_API_BASE): tests point it at
   * a loopback stand-in; nothing else should set it.
   */
  apiBase?: string | undefined;
}

/** Stripe's hosted checkout pages: where the pay page's form leads, after our 303. */
const STRIPE_CHECKOUT_ORIGIN = 'https://checkout.stripe.com';

/** How long one call to Stripe may take: the maker is waiting on the pay page. */
const STRIPE_TIMEOUT_MS = 20_000;

export function createStripeClient(opts: StripeClientOptions): Stripe {
  const base = opts.apiBase ? new URL(opts.apiBase) : undefined;
  return new Stripe(opts.secretKey, {
    timeout: STRIPE_TIMEOUT_MS,
    telemetry: false,
    ...(base && {
      host: base.hostname,
      port: base.port || (base.protocol === 'https:' ? 443 : 80),
      protocol: base.protocol === 'https:' ? 'https' : 'http',
    }),
  });
}


export function createStripeCheckout(stripe: Stripe, opts: { apiBase?: string | undefined } = {}): PaymentProvider {
  return {
    name: 'stripe',
    movesMoney: true,
    // A stand-in on STRIPE_API_BASE answers with checkout pages of its own origin.
    checkoutOrigins: [STRIPE_CHECKOUT_ORIGIN, ...(opts.apiBase ? [new URL(opts.apiBase).origin] : [])],

    async startCheckout(request) {
      // Stripe counts some currencies in other units than ISO 4217 (stripe-amounts.ts); the
      // configuration refuses a price it cannot charge exactly, so this holds for every payment.
      const unitAmount = toStripeAmount(request.price);
      if (unitAmount === undefined) throw new Error(`Stripe cannot charge ${formatPrice(request.price)} exactly`);
      const separator = request.returnUrl.includes('?') ? '&' : '?';
      const session = await stripe.checkout.sessions.create({
        mode: 'payment',
        line_items: [
          {
            quantity: 1,
            price_data: { currency: request.price.currency, unit_amount: unitAmount, product_data: { name: request.description } },
          },
        ],
        client_reference_id: request.paymentId,
        metadata: { payment_id: request.paymentId },
        payment_intent_data: { metadata: { payment_id: request.paymentId } },
        // Stripe fills in {CHECKOUT_SESSION_ID}: the pay page retrieves that session on return.
        success_url: `${request.returnUrl}${separator}session_id={CHECKOUT_SESSION_ID}`,
        cancel_url: `${request.returnUrl}${separator}cancelled=1`,
      });
      if (!session.url) throw new Error(`Stripe opened checkout session ${session.id} without a URL to send the maker to`);
      return { kind: 'redirect', url: session.url, providerRef: session.id };
    },

    async findCheckout(providerRef) {
      if (!isCheckoutSessionId(providerRef)) return undefined;
      try {
        return checkoutStateOf(await stripe.checkout.sessions.retrieve(providerRef));
      } catch (err) {
        if (err instanceof Stripe.errors.StripeInvalidRequestError && err.statusCode === 404) return undefined;
        throw err;
      }
    },
  };
}
