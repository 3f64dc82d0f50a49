import type Stripe from 'stripe';
import type { Mailer } from '../auth/mailer.ts';
import type { PaymentConfirmDeps } from '../catalog/payments/confirm-payment.ts';
import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';
import { createBuiltinCheckout } from './builtin-checkout.ts';
import type { PaymentProvider } from './payment-provider.ts';

/**
 * Payments as one running service holds them: the provider the pay page uses, what confirming
 * a payment needs, and Stripe's webhook when it is on. Built once per process (service.ts).
 *
 * - STRIPE_SECRET_KEY set: Stripe Checkout. With STRIPE_WEBHOOK_SECRET, Stripe's events confirm
 *   payments (POST /payments/stripe/webhook); without it that endpoint does not exist (404) and
 *   payments are confirmed when the maker comes back to the pay page, by retrieving the session
 *   from Stripe. The return check runs with a webhook too, whichever comes first.
 * - No key: the built-in checkout, which moves no money.
 */
export interface Payments {
  readonly provider: PaymentProvider;
  readonly confirm: PaymentConfirmDeps;
  /** Stripe's webhook: the client that verifies its signatures and the signing secret; undefined when off. */
  readonly stripeWebhook: { readonly stripe: Stripe; readonly secret: string } | undefined;
}

export interface PaymentsOptions {
  config: Config['payments'];
  pool: Pool;
  mailer: Mailer;
  publicUrl: string;
  /** Told when a maker's "payment confirmed" e-mail could not be sent. */
  onMailError?: (err: unknown) => void;
}

export async function createPayments(opts: PaymentsOptions): Promise<Payments> {
  const confirm: PaymentConfirmDeps = { pool: opts.pool, mailer: opts.mailer, publicUrl: opts.publicUrl, ...(opts.onMailError && { onMailError: opts.onMailError }) };
  const stripeConfig = opts.config.stripe;
  if (!stripeConfig) return { provider: createBuiltinCheckout(), confirm, stripeWebhook: undefined };
  // Stripe's library is loaded only when it is used.
  const { createStripeCheckout, createStripeClient } = await import('./stripe-checkout.ts');
  const stripe = createStripeClient({ secretKey: stripeConfig.secretKey, apiBase: stripeConfig.apiBase });
  return {
    provider: createStripeCheckout(stripe, { apiBase: stripeConfig.apiBase }),
    confirm,
    stripeWebhook: stripeConfig.webhookSecret ? { stripe, secret: stripeConfig.webhookSecret } : undefined,
  };
}
