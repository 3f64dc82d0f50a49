import type { Price } from '../../money/money.ts';

/**
 * The premium plan's payments as the catalog sees them (a maker upgrades a live free listing;
 * no connected app can pay for anything): a payment link
 * with its price, opened and paid by the maker in a browser at the payment provider. Nothing is
 * charged here. Implemented by src/payments/ (Stripe Checkout, or a built-in checkout that moves
 * no money when no Stripe key is set).
 */
export interface PaymentLink {
  readonly url: string;
  readonly price: Price;
}

export interface PaymentLinks {
  readonly price: Price;
  /** Records an open payment for the listing and returns the page where the maker pays. */
  linkFor(listing: { id: string; makerId: string }): Promise<PaymentLink>;
}
