import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findPayment, type Payment } from '../../catalog/payments/payments.ts';
import { CatalogError } from '../../contract/errors.ts';
import { confirmReturn, pay, payOffer, type PayOffer } from '../../payments/checkout.ts';
import { PAY_PATH } from '../../payments/payment-links.ts';
import type { Payments } from '../../payments/payments.ts';
import { isCheckoutSessionId } from '../../payments/stripe-session.ts';
import type { NoticeMessage } from '../components/notice.tsx';
import { contentSecurityPolicy } from '../csp.ts';
import { csrfToken, pageSession } from '../maker-session.ts';
import { PayPage, PaymentNotFoundPage } from './payment-pages.tsx';
import { sendPrivatePage } from '../render.ts';

/**
 * The pay page (GET /pay/<payment id>) and its button (POST, CSRF-checked by the maker scope).
 * No sign-in: the link, a random id, is what lets its holder pay, as a link from an assistant
 * must work in any browser. The button either sends the browser to Stripe's checkout (303) or,
 * for the built-in checkout, settles the payment at once; both come back to the page.
 *
 * Coming back from Stripe (success_url carries `session_id`), the page retrieves that session
 * from Stripe and confirms the payment when it paid: this is how payments are confirmed when no
 * webhook secret is set, and a harmless second check when one is. It changes nothing Stripe has
 * not said, so it is safe on a GET.
 */
export interface PaymentPagesDeps {
  payments: Payments;
  config: { publicUrl: string };
}

interface PayParams {
  Params: { paymentId: string };
  Querystring: Record<string, unknown>;
}

const NOTICES = {
  paid: { kind: 'success', message: 'Payment confirmed: the listing is on the premium plan.' },
  settling: { kind: 'info', message: 'Stripe is still collecting this payment. This page shows Paid once Stripe confirms it; nothing more is needed from you.' },
  leftCheckout: { kind: 'info', message: 'You left Stripe\'s checkout: nothing was charged. You can pay whenever you are ready.' },
  notPaidYet: { kind: 'info', message: 'Stripe has not confirmed this payment yet. If you completed it, reload this page in a minute.' },
  notThisPayment: { kind: 'error', message: 'That checkout does not belong to this payment: nothing was changed.' },
  providerDown: { kind: 'error', message: 'Stripe could not be reached: nothing was charged or changed. Try again in a minute.' },
  nothingToPay: { kind: 'error', message: 'Nothing was paid: this link has nothing to pay, for the reason below.' },
} as const satisfies Record<string, NoticeMessage>;

export function registerPaymentPages(scope: FastifyInstance, deps: PaymentPagesDeps): void {
  const { payments } = deps;
  const pool = payments.confirm.pool;
  const pagePath = (payment: Payment) => `${PAY_PATH}/${payment.id}`;

  const render = (request: FastifyRequest, reply: FastifyReply, payment: Payment, opts: { notice?: NoticeMessage | null; status?: number; offer?: PayOffer } = {}) => {
    const offer = opts.offer ?? payOffer(payment, payments);
    const session = pageSession(request, reply);
    // The pay page's link is a capability: it stays out of search engines.
    reply.header('x-robots-tag', 'noindex, nofollow');
    const origins = offer.kind === 'pay' ? payments.provider.checkoutOrigins : [];
    return sendPrivatePage(
      reply,
      <PayPage payment={payment} offer={offer} provider={payments.provider} session={session} csrfToken={session?.csrfToken ?? csrfToken(request, reply)} notice={opts.notice ?? null} />,
      {
        ...(opts.status !== undefined && { status: opts.status }),
        // Chrome applies form-action to the redirect after the button's POST: Stripe's checkout must be allowed.
        ...(origins.length > 0 && { csp: contentSecurityPolicy({ publicUrl: deps.config.publicUrl, formAction: origins }) }),
      },
    );
  };

  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('x-robots-tag', 'noindex, nofollow');
    return sendPrivatePage(reply, <PaymentNotFoundPage session={pageSession(request, reply)} />, { status: 404 });
  };

  scope.get<PayParams>(`${PAY_PATH}/:paymentId`, async (request, reply) => {
    const payment = await findPayment(pool, request.params.paymentId);
    if (!payment) return notFound(request, reply);
    const { session_id: sessionId, cancelled, done } = request.query;

    if (sessionId !== undefined && payment.status !== 'paid') {
      if (!isCheckoutSessionId(sessionId)) return render(request, reply, payment, { notice: NOTICES.notThisPayment, status: 400 });
      let back;
      try {
        back = await confirmReturn(payments, payment, sessionId);
      } catch (err) {
        if (err instanceof CatalogError) throw err;
        request.log.error({ err, paymentId: payment.id }, 'retrieving the Stripe checkout session failed');
        return render(request, reply, payment, { notice: NOTICES.providerDown, status: 502 });
      }
      if (back === 'paid') return reply.redirect(`${pagePath(payment)}?done=paid`, 303);
      return render(request, reply, payment, { notice: back === 'not_paid_yet' ? NOTICES.notPaidYet : NOTICES.notThisPayment, status: back === 'not_paid_yet' ? 200 : 400 });
    }
    // Back from Stripe after the webhook already confirmed it: the same news as a fresh confirmation.
    const justPaid = (done === 'paid' || sessionId !== undefined) && payment.status === 'paid';
    const notice = justPaid ? NOTICES.paid : done === 'settling' ? NOTICES.settling : cancelled === '1' ? NOTICES.leftCheckout : null;
    return render(request, reply, payment, { notice });
  });

  scope.post<PayParams>(`${PAY_PATH}/:paymentId`, async (request, reply) => {
    const payment = await findPayment(pool, request.params.paymentId);
    if (!payment) return notFound(request, reply);
    let result;
    try {
      result = await pay(payments, payment, `${deps.config.publicUrl}${pagePath(payment)}`);
    } catch (err) {
      if (err instanceof CatalogError) throw err;
      request.log.error({ err, paymentId: payment.id }, 'opening the checkout failed');
      return render(request, reply, payment, { notice: NOTICES.providerDown, status: 502 });
    }
    switch (result.kind) {
      case 'redirect':
        return reply.redirect(result.url, 303);
      case 'paid':
        return reply.redirect(`${pagePath(payment)}?done=paid`, 303);
      case 'settling':
        return reply.redirect(`${pagePath(payment)}?done=settling`, 303);
      case 'refused':
        return render(request, reply, payment, { notice: NOTICES.nothingToPay, status: 409, offer: result.offer });
    }
  });
}
