import { LISTING_PAGES } from '../../catalog/listings/listing-urls.ts';
import { formatPrice } from '../../money/money.ts';
import type { Payment, PaymentStatus } from '../../catalog/payments/payments.ts';
import type { PayOffer } from '../../payments/checkout.ts';
import { PAY_PATH } from '../../payments/payment-links.ts';
import type { PaymentProvider } from '../../payments/payment-provider.ts';
import { Card } from '../components/card.tsx';
import { Button, Form, FormActions, LinkButton } from '../components/forms.tsx';
import { Notice, type NoticeMessage } from '../components/notice.tsx';
import { Page, type Session } from '../components/layout.tsx';

/**
 * The pay page of one payment for the premium plan (/pay/<payment id>): what is bought, for how
 * much, its state, and the one button its checkout needs. Anyone holding the link may pay; the
 * page shows nothing of the maker's account.
 */

const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

const PAYMENT_STATUS_LABELS: Readonly<Record<PaymentStatus, string>> = { open: 'Open', paid: 'Paid', cancelled: 'Cancelled' };

/** The payment's state in words, coloured like the listing states it resembles. */
function PaymentStatusBadge({ status }: { status: PaymentStatus }) {
  const look = status === 'paid' ? 'live' : status === 'open' ? 'pending' : 'hidden';
  return <span class={`badge badge-${look}`}>{PAYMENT_STATUS_LABELS[status]}</span>;
}

const PREMIUM_BENEFITS: readonly string[] = [
  'A premium profile: highlights, who the product is for, questions and answers, and a promo code.',
  'The profile shows on the listing page, in the directory\'s JSON API and to AI assistants over MCP.',
  'The listing page links your site without nofollow, with no directory badge needed on your site.',
  'One payment for this listing: no subscription, nothing renews.',
];

export interface PayPageProps {
  payment: Payment;
  offer: PayOffer;
  provider: Pick<PaymentProvider, 'name' | 'movesMoney'>;
  session: Session | null;
  /** For the button's form; the pay page needs no sign-in, so it is made for signed-out visitors too. */
  csrfToken: string;
  notice?: NoticeMessage | null;
}

export function PayPage({ payment, offer, provider, session, csrfToken, notice }: PayPageProps) {
  const { listing } = payment;
  return (
    <Page title={`Premium plan for ${listing.name}`} session={session} notice={notice}>
      <h1>Premium plan for {listing.name}</h1>
      <Card title="Payment">
        <dl class="facts">
          <dt>Listing</dt>
          <dd>{listing.name}</dd>
          <dt>Price</dt>
          <dd>
            <strong>{formatPrice(payment.price)}</strong>
          </dd>
          <dt>Status</dt>
          <dd>
            <PaymentStatusBadge status={payment.status} />
          </dd>
          {payment.paidAt && (
            <>
              <dt>Paid on</dt>
              <dd>{dateTime.format(payment.paidAt)} UTC</dd>
            </>
          )}
        </dl>
      </Card>
      <Card title="What the premium plan brings">
        <ul>
          {PREMIUM_BENEFITS.map((line) => (
            <li>{line}</li>
          ))}
        </ul>
      </Card>
      <Offer payment={payment} offer={offer} provider={provider} csrfToken={csrfToken} />
    </Page>
  );
}

function EditPageLink({ slug }: { slug: string }) {
  return (
    <FormActions>
      <LinkButton href={LISTING_PAGES.edit(slug)} variant="primary">
        Fill in the premium profile
      </LinkButton>
    </FormActions>
  );
}

const NEW_LINK = 'Ask for a new payment link from your assistant (upgrade_listing) if the listing should still move to the premium plan.';

function Offer({ payment, offer, provider, csrfToken }: Omit<PayPageProps, 'session' | 'notice'>) {
  const action = `${PAY_PATH}/${payment.id}`;
  switch (offer.kind) {
    case 'pay':
      return provider.movesMoney ? (
        <Card title="Pay">
          <p>You pay on Stripe's checkout page: your card details go to Stripe, never to this directory. Nothing is charged until you confirm the payment there.</p>
          <Form action={action} csrfToken={csrfToken} aria-label="Pay with Stripe">
            <FormActions>
              <Button>Pay {formatPrice(payment.price)} with Stripe</Button>
            </FormActions>
          </Form>
          <p class="muted">No sign-in is needed: anyone holding this link can pay for this listing.</p>
        </Card>
      ) : (
        <Card title="Confirm (no charge)">
          <Notice
            kind="info"
            message="This directory runs without a payment provider: no money moves. Confirming marks this payment as paid and moves the listing to the premium plan at no charge."
          />
          <Form action={action} csrfToken={csrfToken} aria-label="Confirm without charge">
            <FormActions>
              <Button>Confirm (no charge)</Button>
            </FormActions>
          </Form>
          <p class="muted">No sign-in is needed: anyone holding this link can confirm it.</p>
        </Card>
      );
    case 'paid':
      return (
        <Card title="Paid">
          <p>
            <strong>Paid.</strong> {payment.listing.name} is on the premium plan. Fill in its premium profile on the listing's edit page: what you add there
            shows on the listing page, in the API and to assistants.
          </p>
          <EditPageLink slug={payment.listing.slug} />
        </Card>
      );
    case 'already_premium':
      return (
        <Card title="Nothing to pay">
          <p>{payment.listing.name} is already on the premium plan: there is nothing to pay with this link.</p>
          <EditPageLink slug={payment.listing.slug} />
        </Card>
      );
    case 'cancelled':
      return (
        <Card title="Nothing to pay">
          <p>This payment was cancelled: nothing can be paid with this link. {payment.listing.state.plan === 'premium' ? '' : NEW_LINK}</p>
          {payment.listing.state.plan === 'premium' && <EditPageLink slug={payment.listing.slug} />}
        </Card>
      );
    case 'not_live':
      return (
        <Card title="Nothing to pay">
          <p>{offer.message} Nothing can be paid with this link while the listing is not live.</p>
        </Card>
      );
    case 'other_provider':
      return (
        <Card title="Nothing to pay">
          <p>This payment link was made for another checkout than the one this directory uses now: nothing can be paid with it. {NEW_LINK}</p>
        </Card>
      );
  }
}

export function PaymentNotFoundPage({ session }: { session: Session | null }) {
  return (
    <Page title="Payment not found" session={session}>
      <h1>Payment not found</h1>
      <p>There is no payment at this address. Check that the whole link was copied, or ask for a new payment link.</p>
      <p>
        <a href="/">Back to the directory</a>
      </p>
    </Page>
  );
}
