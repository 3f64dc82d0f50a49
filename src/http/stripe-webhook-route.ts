import type { FastifyInstance } from 'fastify';
import type Stripe from 'stripe';
import { ErrorCode } from '../contract/schemas.ts';
import type { Payments } from '../payments/payments.ts';
import { applyStripeEvent } from '../payments/stripe-webhook.ts';
import { NO_STORE } from './caching.ts';
import { sendError } from './errors.ts';

/**
 * Stripe's webhook: the URL to register in Stripe's dashboard is PUBLIC_URL + this path, for the
 * events checkout.session.completed and checkout.session.async_payment_succeeded. It exists only
 * when STRIPE_WEBHOOK_SECRET is set (otherwise 404, and payments are confirmed on the maker's
 * return to the pay page).
 *
 * Each request's Stripe-Signature is verified over the raw body (400 and nothing changes when it
 * does not match); a session that paid one of our payments confirms it, recording the event id
 * in the same transaction, so a retried or replayed event is applied once. Any other event, or
 * one for a payment we do not have, is acknowledged and ignored: Stripe would otherwise retry it
 * for days. The answer comes as soon as the transaction commits; the maker's e-mail is not waited
 * for.
 */
const STRIPE_WEBHOOK_PATH = '/payments/stripe/webhook';

/** Stripe's events are a few kilobytes; this leaves ample room and refuses anything else early. */
const WEBHOOK_BODY_LIMIT = 256 * 1024;

export async function registerStripeWebhook(app: FastifyInstance, payments: Payments): Promise<void> {
  const webhook = payments.stripeWebhook;
  if (!webhook) return;
  await app.register(async (scope) => {
    // The signature covers the exact bytes Stripe sent: this scope keeps them as they came.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));

    scope.post(STRIPE_WEBHOOK_PATH, async (request, reply) => {
      const signature = request.headers['stripe-signature'];
      let event: Stripe.Event;
      try {
        if (typeof signature !== 'string' || !Buffer.isBuffer(request.body)) throw new Error('no signature or body');
        event = webhook.stripe.webhooks.constructEvent(request.body, signature, webhook.secret);
      } catch {
        return sendError(reply, 400, {
          code: ErrorCode.BAD_REQUEST,
          message: 'The Stripe-Signature header does not verify this body with the webhook signing secret (or is too old); nothing was changed.',
        });
      }
      const outcome = await applyStripeEvent(payments, event, request.log);
      return reply.code(200).header('cache-control', NO_STORE).send({ received: true, outcome });
    });
  });
}
