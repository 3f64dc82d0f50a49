import type { MailMessage, Mailer } from '../../auth/mailer.ts';
import { CatalogError, conflict } from '../../contract/errors.ts';
import { ErrorCode } from '../../contract/schemas.ts';
import { withTransaction, type Pool } from '../../db/pool.ts';
import { LISTING_PAGES } from '../listings/listing-urls.ts';
import { formatPrice, type Price } from '../../money/money.ts';
import type { PaymentProviderName } from './payments.ts';

/**
 * A payment confirmed: the one command that moves a listing to the premium plan. The payment
 * provider (Stripe's webhook or the session retrieved on the maker's return, or the built-in
 * checkout's button) says the maker paid; in one short transaction the payment is marked paid
 * (once: a second confirmation changes nothing), the listing's plan becomes premium (the outbox
 * trigger then carries it to REST and MCP, premium profile included), and the listing's other
 * open payments are cancelled so nobody pays twice (should Stripe still report one of them paid,
 * it is recorded as paid: the money moved). The maker is told by e-mail afterwards, outside the
 * transaction: mail is network I/O.
 */
export interface PaymentConfirmDeps {
  readonly pool: Pool;
  readonly mailer: Mailer;
  /** The service's public URL: the e-mail links the listing's edit page there. */
  readonly publicUrl: string;
  /** Told when the maker's e-mail could not be handed on; the payment stays confirmed. */
  readonly onMailError?: (err: unknown) => void;
  /** The clock; tests may move it. */
  readonly now?: () => Date;
}

export interface ConfirmOptions {
  /** The provider saying the maker paid; a payment made for another provider is refused. */
  readonly provider: PaymentProviderName;
  /** The provider's checkout that was paid (a Stripe Checkout Session id). */
  readonly providerRef?: string;
  /** The provider's event carrying the confirmation: applied once, recorded in the same transaction. */
  readonly eventId?: string;
}

export interface ConfirmedListing {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
}

export type PaymentConfirmation =
  /** This event was applied before: nothing was done. */
  | { readonly outcome: 'duplicate_event' }
  | {
      /** confirmed: paid now, the plan is premium; already_paid: it was paid before, nothing changed. */
      readonly outcome: 'confirmed' | 'already_paid';
      readonly paymentId: string;
      readonly listing: ConfirmedListing;
      /**
       * Settles once the maker's e-mail was handed on (true), or failed or was not due (false);
       * never rejects. Callers need not wait for it.
       */
      readonly notified: Promise<boolean>;
    };

function paymentNotFound(): CatalogError {
  return new CatalogError(ErrorCode.NOT_FOUND, 404, 'There is no such payment.');
}

interface Applied {
  outcome: 'confirmed' | 'already_paid';
  listing: ConfirmedListing;
  price: Price;
  makerEmail: string | null;
}

export async function confirmPayment(deps: PaymentConfirmDeps, paymentId: string, opts: ConfirmOptions): Promise<PaymentConfirmation> {
  const now = deps.now?.() ?? new Date();
  const applied = await withTransaction(deps.pool, async (client): Promise<Applied | 'duplicate_event'> => {
    if (opts.eventId !== undefined) {
      // A concurrent delivery of the same event waits here on the key until this one commits.
      const recorded = await client.query('INSERT INTO catalog.payment_events (provider, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [opts.provider, opts.eventId]);
      if (recorded.rowCount === 0) return 'duplicate_event';
    }
    const found = await client.query<{ listing_id: string }>('SELECT listing_id FROM catalog.payments WHERE id = $1', [paymentId]);
    if (!found.rows[0]) throw paymentNotFound();
    // The listing first, then its payments: every confirmation for one listing takes the locks
    // in that order, so two payments of one listing confirmed at once wait rather than deadlock.
    const listing = await client.query<{ id: string; slug: string; name: string; email: string | null }>(
      `SELECT l.id, l.slug, l.name, m.email FROM catalog.listings l LEFT JOIN catalog.makers m ON m.id = l.maker_id WHERE l.id = $1 FOR UPDATE OF l`,
      [found.rows[0].listing_id],
    );
    const payment = await client.query<{ provider: PaymentProviderName; status: string; amount_minor: number; currency: string; maker_email: string | null }>(
      `SELECT p.provider, p.status, p.amount_minor, p.currency, m.email AS maker_email
         FROM catalog.payments p LEFT JOIN catalog.makers m ON m.id = p.maker_id
        WHERE p.id = $1 FOR UPDATE OF p`,
      [paymentId],
    );
    const l = listing.rows[0];
    const p = payment.rows[0];
    if (!l || !p) throw paymentNotFound();
    if (p.provider !== opts.provider) {
      throw conflict(`This payment was opened with the ${p.provider === 'stripe' ? 'Stripe' : 'built-in'} checkout and cannot be confirmed by another.`);
    }
    const result = {
      listing: { id: l.id, slug: l.slug, name: l.name },
      price: { amountMinor: p.amount_minor, currency: p.currency },
      makerEmail: l.email ?? p.maker_email,
    };
    if (p.status === 'paid') return { outcome: 'already_paid', ...result };
    // A cancelled payment that Stripe says was paid is recorded as paid: the money moved. The
    // built-in checkout moves none, so a cancelled link stays cancelled.
    if (p.status === 'cancelled' && opts.provider === 'builtin') throw conflict('This payment was cancelled: nothing can be paid with it.');
    await client.query(`UPDATE catalog.payments SET status = 'paid', paid_at = $2, provider_ref = COALESCE($3, provider_ref) WHERE id = $1`, [paymentId, now, opts.providerRef ?? null]);
    await client.query(`UPDATE catalog.listings SET plan = 'premium', updated_at = $2 WHERE id = $1 AND plan <> 'premium'`, [l.id, now]);
    await client.query(`UPDATE catalog.payments SET status = 'cancelled' WHERE listing_id = $1 AND status = 'open' AND id <> $2`, [l.id, paymentId]);
    return { outcome: 'confirmed', ...result };
  });
  if (applied === 'duplicate_event') return { outcome: 'duplicate_event' };

  let notified: Promise<boolean> = Promise.resolve(false);
  if (applied.outcome === 'confirmed' && applied.makerEmail) {
    notified = deps.mailer.send(paymentConfirmedMail({ to: applied.makerEmail, listing: applied.listing, price: applied.price, provider: opts.provider, publicUrl: deps.publicUrl })).then(
      () => true,
      (err: unknown) => {
        deps.onMailError?.(err);
        return false;
      },
    );
  }
  return { outcome: applied.outcome, paymentId, listing: applied.listing, notified };
}

/** The maker's e-mail: the plan is active, and the page where the premium profile is filled in. */
export function paymentConfirmedMail(opts: { to: string; listing: ConfirmedListing; price: Price; provider: PaymentProviderName; publicUrl: string }): MailMessage {
  const editPage = `${opts.publicUrl}${LISTING_PAGES.edit(opts.listing.slug)}`;
  const paid =
    opts.provider === 'builtin'
      ? `The premium plan is now active for ${opts.listing.name}. No money was charged: this directory runs without a payment provider.`
      : `Your payment of ${formatPrice(opts.price)} was confirmed: ${opts.listing.name} is now on the premium plan.`;
  return {
    to: opts.to,
    subject: `The premium plan is active for ${opts.listing.name}`,
    text: [
      paid,
      '',
      'Fill in its premium profile (highlights, who it is for, questions and answers, a promo code) on the listing\'s edit page:',
      '',
      editPage,
      '',
      'What you add there shows on the listing page, in the directory\'s API and to assistants over MCP, and the listing page links your site without nofollow.',
    ].join('\n'),
  };
}
