import type { Price } from '../money/money.ts';
import type { PaymentProviderName } from '../catalog/payments/payments.ts';

/**
 * Where the maker pays, behind one port with two adapters: Stripe Checkout (stripe-checkout.ts)
 * when STRIPE_SECRET_KEY is set, otherwise the built-in checkout (builtin-checkout.ts), which
 * moves no money. The pay page (web/payment-routes.tsx) asks the provider to start a checkout and,
 * when the maker comes back from one, what became of it; the provider never writes the catalog.
 */
interface CheckoutRequest {
  readonly paymentId: string;
  /** What the maker buys, as the checkout shows it: "Premium plan for <listing name>". */
  readonly description: string;
  readonly price: Price;
  /** The pay page of this payment (absolute): where the maker comes back to. */
  readonly returnUrl: string;
}

type CheckoutStart =
  /** Send the browser to the provider's checkout page; `providerRef` names that checkout. */
  | { readonly kind: 'redirect'; readonly url: string; readonly providerRef: string }
  /** Nothing to pay elsewhere: the checkout is settled now (the built-in checkout). */
  | { readonly kind: 'settled' };

/** A checkout as the provider knows it. */
export interface CheckoutState {
  readonly providerRef: string;
  /** The payment it was opened for (our id, as the checkout carries it), when it names one. */
  readonly paymentId: string | null;
  /** The money moved. */
  readonly paid: boolean;
  /** The maker completed it and the provider is still collecting the money (a bank debit, say). */
  readonly settling: boolean;
  /** The maker can still pay in it, at `url`. */
  readonly open: boolean;
  readonly url: string | null;
  /** What it charges, to compare with the payment's price; null when the provider does not say. */
  readonly price: Price | null;
}

export interface PaymentProvider {
  readonly name: PaymentProviderName;
  /** False for the built-in checkout: the pay page says so plainly. */
  readonly movesMoney: boolean;
  /**
   * Origins the browser is sent to after the pay page's button (the provider's checkout pages):
   * the page's Content-Security-Policy allows its form to lead there.
   */
  readonly checkoutOrigins: readonly string[];
  startCheckout(request: CheckoutRequest): Promise<CheckoutStart>;
  /** The provider's view of a checkout it opened; undefined when it knows no such checkout. */
  findCheckout(providerRef: string): Promise<CheckoutState | undefined>;
}

/** The checkout paid exactly this payment's price for this payment. */
export function checkoutPays(state: CheckoutState, payment: { id: string; price: Price }): boolean {
  return (
    state.paid &&
    state.paymentId === payment.id &&
    state.price !== null &&
    state.price.amountMinor === payment.price.amountMinor &&
    state.price.currency.toLowerCase() === payment.price.currency.toLowerCase()
  );
}
