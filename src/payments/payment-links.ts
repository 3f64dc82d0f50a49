import type { Pool } from '../db/pool.ts';
import type { Price } from '../money/money.ts';
import type { PaymentLink, PaymentLinks } from '../catalog/payments/payment-port.ts';
import { openPayment } from '../catalog/payments/payments.ts';

/**
 * Payment links: an open payment recorded for the listing, and the page on this service where
 * the maker pays (`/pay/<payment id>`): from there Stripe Checkout, or the built-in checkout
 * when no Stripe key is set. Nothing is charged before the maker pays in the browser. A link is
 * reused while its payment is open, so asking again does not pile up payments.
 */
export const PAY_PATH = '/pay';

export function createPaymentLinks(opts: { pool: Pool; publicUrl: string; price: Price; provider: 'stripe' | 'builtin' }): PaymentLinks {
  return {
    price: opts.price,
    async linkFor(listing): Promise<PaymentLink> {
      const id = await openPayment(opts.pool, listing, opts.provider, opts.price);
      return { url: `${opts.publicUrl}${PAY_PATH}/${id}`, price: opts.price };
    },
  };
}
