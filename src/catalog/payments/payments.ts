import type { Queryable } from '../../db/pool.ts';
import type { HiddenReason, ListingState, ListingStatus, Plan } from '../listings/listing-rules.ts';
import type { Price } from '../../money/money.ts';

/**
 * Payments for the premium plan as the write model holds them (catalog.payments): one row per
 * payment link, open until the provider confirms the maker paid. The pay page reads them here;
 * confirm-payment.ts is the one command that marks one paid.
 */
export type PaymentStatus = 'open' | 'paid' | 'cancelled';
export type PaymentProviderName = 'stripe' | 'builtin';

export interface Payment {
  readonly id: string;
  readonly provider: PaymentProviderName;
  /** The provider's checkout for it (a Stripe Checkout Session id), once one was opened. */
  readonly providerRef: string | null;
  readonly price: Price;
  readonly status: PaymentStatus;
  readonly createdAt: Date;
  readonly paidAt: Date | null;
  readonly listing: { readonly id: string; readonly slug: string; readonly name: string; readonly state: ListingState };
}

/**
 * The open payment of this listing at this price with this provider: the one already open, else a
 * new one. Asking again therefore never piles up payments.
 */
export async function openPayment(db: Queryable, listing: { id: string; makerId: string }, provider: PaymentProviderName, price: Price): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
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
    [listing.id, listing.makerId, provider, price.amountMinor, price.currency],
  );
  return rows[0]!.id;
}

/** Payment ids are uuids (gen_random_uuid); anything else names no payment. */
const PAYMENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isPaymentId(value: unknown): value is string {
  return typeof value === 'string' && PAYMENT_ID.test(value);
}

interface Row {
  id: string;
  provider: PaymentProviderName;
  provider_ref: string | null;
  amount_minor: number;
  currency: string;
  status: PaymentStatus;
  created_at: Date;
  paid_at: Date | null;
  listing_id: string;
  slug: string;
  name: string;
  listing_status: ListingStatus;
  hidden_reason: HiddenReason | null;
  plan: Plan;
  badge_status: 'none' | 'verified';
  listed_at: Date | null;
}

/** The payment with its listing as it is now, or undefined for an id that names none. */
export async function findPayment(db: Queryable, id: string): Promise<Payment | undefined> {
  if (!isPaymentId(id)) return undefined;
  const { rows } = await db.query<Row>(
    `SELECT p.id, p.provider, p.provider_ref, p.amount_minor, p.currency, p.status, p.created_at, p.paid_at,
            l.id AS listing_id, l.slug, l.name, l.status::text AS listing_status, l.hidden_reason, l.plan::text AS plan,
            l.badge_status, l.listed_at
       FROM catalog.payments p JOIN catalog.listings l ON l.id = p.listing_id
      WHERE p.id = $1`,
    [id],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: row.id,
    provider: row.provider,
    providerRef: row.provider_ref,
    price: { amountMinor: row.amount_minor, currency: row.currency },
    status: row.status,
    createdAt: row.created_at,
    paidAt: row.paid_at,
    listing: {
      id: row.listing_id,
      slug: row.slug,
      name: row.name,
      state: { status: row.listing_status, hiddenReason: row.hidden_reason, plan: row.plan, badgeVerified: row.badge_status === 'verified', listedAt: row.listed_at },
    },
  };
}

/**
 * Remembers the checkout the provider opened for an open payment, so the pay page can send the
 * maker back to it rather than open a second one. A payment no longer open keeps what it has.
 */
export async function recordCheckout(db: Queryable, paymentId: string, providerRef: string): Promise<boolean> {
  const { rowCount } = await db.query(`UPDATE catalog.payments SET provider_ref = $2 WHERE id = $1 AND status = 'open'`, [paymentId, providerRef]);
  return rowCount === 1;
}
