import type { PaymentProvider } from './payment-provider.ts';

/**
 * The checkout of a directory that runs without a payment provider (no STRIPE_SECRET_KEY): the
 * pay page says plainly that no money moves, and its "Confirm (no charge)" button settles the
 * payment at once. There is no checkout elsewhere to send the maker to or to come back from.
 */
export function createBuiltinCheckout(): PaymentProvider {
  return {
    name: 'builtin',
    movesMoney: false,
    checkoutOrigins: [],
    async startCheckout() {
      return { kind: 'settled' };
    },
    async findCheckout() {
      return undefined;
    },
  };
}
