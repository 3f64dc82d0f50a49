import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer, type MailMessage } from '../../../../src/auth/mailer.ts';
import { confirmPayment, type PaymentConfirmDeps } from '../../../../src/catalog/payments/confirm-payment.ts';
import { CatalogError } from '../../../../src/contract/errors.ts';
import { makerListing, outboxCount, paymentRow, type MakerListing } from '../../../helpers/payments.ts';
import { startTestStack, type TestStack } from '../../../helpers/stack.ts';

/**
 * confirmPayment, the one command that moves a listing to the premium plan, against the real
 * write model: once per payment, one plan change however many confirmations race, the
 * provider's word required, and the maker's e-mail never able to undo a confirmation.
 */
let stack: TestStack;
let deps: PaymentConfirmDeps;

beforeAll(async () => {
  stack = await startTestStack({ seed: false });
  deps = stack.service.payments.confirm;
});

afterAll(async () => {
  await stack?.stop();
});

async function openPayment(listing: MakerListing, provider: 'stripe' | 'builtin', status = 'open'): Promise<string> {
  const { rows } = await stack.db.pool.query<{ id: string }>(
    `INSERT INTO catalog.payments (listing_id, maker_id, provider, amount_minor, currency, status) VALUES ($1, $2, $3, 2900, 'usd', $4) RETURNING id`,
    [listing.listingId, listing.makerId, provider, status],
  );
  return rows[0]!.id;
}

async function refusal(promise: Promise<unknown>): Promise<CatalogError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CatalogError);
  return err as CatalogError;
}

describe('confirmPayment', () => {
  it('confirms two payments of one listing racing each other without a deadlock, with one plan change', async () => {
    const listing = await makerListing(stack, 'race@example.com');
    const a = await openPayment(listing, 'stripe');
    const b = await openPayment(listing, 'stripe');
    const outboxBefore = await outboxCount(stack, listing.listingId);
    const results = await Promise.all([
      confirmPayment(deps, a, { provider: 'stripe', providerRef: 'cs_test_raceA' }),
      confirmPayment(deps, b, { provider: 'stripe', providerRef: 'cs_test_raceB' }),
    ]);
    // Both checkouts took money: both are recorded as paid, whichever cancelled the other first.
    expect(results.map((r) => r.outcome)).toEqual(['confirmed', 'confirmed']);
    expect(await paymentRow(stack, a)).toMatchObject({ status: 'paid', plan: 'premium', provider_ref: 'cs_test_raceA' });
    expect(await paymentRow(stack, b)).toMatchObject({ status: 'paid', provider_ref: 'cs_test_raceB' });
    expect(await outboxCount(stack, listing.listingId)).toBe(outboxBefore + 1);
  });

  it('confirms a payment once: a second confirmation is a no-op that mails nobody', async () => {
    const listing = await makerListing(stack, 'once@example.com');
    const id = await openPayment(listing, 'builtin');
    const mailsBefore = stack.mails.length;
    const first = await confirmPayment(deps, id, { provider: 'builtin' });
    expect(first.outcome).toBe('confirmed');
    if (first.outcome !== 'duplicate_event') expect(await first.notified).toBe(true);
    const paidAt = (await paymentRow(stack, id)).paid_at;
    const second = await confirmPayment(deps, id, { provider: 'builtin' });
    expect(second.outcome).toBe('already_paid');
    if (second.outcome !== 'duplicate_event') expect(await second.notified).toBe(false);
    expect((await paymentRow(stack, id)).paid_at).toEqual(paidAt);
    expect(stack.mails.slice(mailsBefore).map((m) => m.to)).toEqual(['once@example.com']);
  });

  it('applies an event id once, even for another payment', async () => {
    const listing = await makerListing(stack, 'event@example.com');
    const other = await makerListing(stack, 'event-other@example.com');
    const id = await openPayment(listing, 'stripe');
    const otherId = await openPayment(other, 'stripe');
    expect((await confirmPayment(deps, id, { provider: 'stripe', eventId: 'evt_once' })).outcome).toBe('confirmed');
    expect((await confirmPayment(deps, otherId, { provider: 'stripe', eventId: 'evt_once' })).outcome).toBe('duplicate_event');
    expect(await paymentRow(stack, otherId)).toMatchObject({ status: 'open', plan: 'free' });
  });

  it('refuses another provider\'s payment, a cancelled built-in one and an unknown one, changing nothing', async () => {
    const listing = await makerListing(stack, 'refused@example.com');
    const stripeId = await openPayment(listing, 'stripe');
    expect((await refusal(confirmPayment(deps, stripeId, { provider: 'builtin' }))).status).toBe(409);
    const cancelled = await openPayment(listing, 'builtin', 'cancelled');
    expect((await refusal(confirmPayment(deps, cancelled, { provider: 'builtin' }))).status).toBe(409);
    expect((await refusal(confirmPayment(deps, randomUUID(), { provider: 'builtin', eventId: 'evt_unknown' }))).status).toBe(404);
    expect(await paymentRow(stack, stripeId)).toMatchObject({ status: 'open', plan: 'free' });
    expect(await paymentRow(stack, cancelled)).toMatchObject({ status: 'cancelled', paid_at: null });
    // The refused event was not recorded: it rolled back with the rest.
    expect((await stack.db.pool.query(`SELECT 1 FROM catalog.payment_events WHERE event_id = 'evt_unknown'`)).rowCount).toBe(0);
  });

  it('keeps the confirmation when the e-mail cannot be sent, and reports the failure', async () => {
    const listing = await makerListing(stack, 'mail-down@example.com');
    const id = await openPayment(listing, 'builtin');
    const tried: MailMessage[] = [];
    const failures: unknown[] = [];
    // An SMTP server on a loopback port nothing listens on.
    const mailer = createMailer({ smtpUrl: 'smtp://127.0.0.1:9', from: 'directory@example.com', log: pino({ level: 'silent' }), onSend: (m) => tried.push(m) });
    try {
      const result = await confirmPayment({ ...deps, mailer, onMailError: (err) => failures.push(err) }, id, { provider: 'builtin' });
      expect(result.outcome).toBe('confirmed');
      if (result.outcome !== 'duplicate_event') expect(await result.notified).toBe(false);
    } finally {
      mailer.close();
    }
    expect(tried.map((m) => m.to)).toEqual(['mail-down@example.com']);
    expect(failures).toHaveLength(1);
    expect(await paymentRow(stack, id)).toMatchObject({ status: 'paid', plan: 'premium' });
  });
});
