/**
 * The premium plan's payments as the catalog sees them (spec sections 3 and 5): a payment link
 * with its price, opened and paid by the maker in a browser at the payment provider. Nothing is
 * charged here. Implemented by src/payments/ (Stripe Checkout, or a built-in checkout that moves
 * no money when no Stripe key is set).
 */
export interface Price {
  /** In the currency's smallest unit (cents). */
  readonly amountCents: number;
  /** ISO 4217, lowercase. */
  readonly currency: string;
}

export interface PaymentLink {
  readonly url: string;
  readonly price: Price;
}

export interface PaymentLinks {
  readonly price: Price;
  /** Records an open payment for the listing and returns the page where the maker pays. */
  linkFor(listing: { id: string; makerId: string }): Promise<PaymentLink>;
}

/** "29.00 USD" */
export function formatPrice(price: Price): string {
  return `${(price.amountCents / 100).toFixed(2)} ${price.currency.toUpperCase()}`;
}
