import type { Pool } from '../db/pool.ts';
import type { Price } from '../money/money.ts';
import type { PaymentLink, PaymentLinks } from '../catalog/payments/payment-port.ts';

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
      const { rows } = await opts.pool.query<{ id: string }>(
        `WITH open AS (
           SELECT id FROM catalog.payments
           WHERE listing_id = $1 AND status = 'open' AND provider = $3 AND amount_minor = $4 AND currency = $5
           ORDER BY created_at DESC LIMIT 1
         ), made AS (
           INSERT INTO catalog.payments (listing_id, maker_id, provider, amount_minor, currency)
           SELECT $1, $2, $3, $4, $5 WHERE NOT EXISTS (SELECT 1 FROM open)
           RETURNING id
         )
         SELECT id FROM open UNION ALL SELECT id FROM made`,
        [listing.id, listing.makerId, opts.provider, opts.price.amountMinor, opts.price.currency],
      );
      return { url: `${opts.publicUrl}${PAY_PATH}/${rows[0]!.id}`, price: opts.price };
    },
  };
}
