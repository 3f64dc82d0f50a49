import { formatPrice, minorUnitOf, type Price } from './money.ts';

/**
 * Amounts as Stripe's API counts them, which is not always ISO 4217's minor unit. From Stripe's
 * "Supported currencies" guide (minor units in API amounts, and its special cases):
 * - zero-decimal currencies are sent in whole units (500 charges 500 JPY);
 * - three-decimal currencies (BHD, JOD, KWD, OMR, TND) are sent in thousandths, and the last
 *   digit must be 0: Stripe's partners charge them in steps of 0.010;
 * - ISK has no minor unit, but for backwards compatibility Stripe takes its amounts with two
 *   decimals, evenly divisible by 100 (500 charges 5 ISK);
 * - HUF and TWD are charged with two decimals (Stripe's whole-unit rule for them is for payouts,
 *   which this service never makes), as is every other currency.
 * Where ISO and Stripe disagree (MGA: ISO 2 decimals, Stripe whole units; IQD and LYD: ISO 3,
 * Stripe's default 2), a price Stripe cannot charge exactly is refused when the service starts
 * (`stripeAmountProblem`, checked by the configuration when STRIPE_SECRET_KEY is set).
 */
const ZERO_DECIMAL: ReadonlySet<string> = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);
const THREE_DECIMAL: ReadonlySet<string> = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);

/** The decimals of the unit Stripe's API counts the currency in. */
function stripeDecimals(currency: string): number {
  const c = currency.toLowerCase();
  if (ZERO_DECIMAL.has(c)) return 0;
  if (THREE_DECIMAL.has(c)) return 3;
  return 2;
}

/** The smallest step of a Stripe amount, in Stripe's unit: 10 for three-decimal currencies, 100 for ISK, else 1. */
function stripeStep(currency: string): number {
  const c = currency.toLowerCase();
  if (THREE_DECIMAL.has(c)) return 10;
  if (c === 'isk') return 100;
  return 1;
}

function isoDecimals(currency: string): number {
  const digits = minorUnitOf(currency);
  if (digits === undefined) throw new Error(`${currency} is not an ISO 4217 currency`);
  return digits;
}

/** The price as Stripe's `unit_amount`, or undefined when Stripe cannot charge it exactly. */
export function toStripeAmount(price: Price): number | undefined {
  const shift = stripeDecimals(price.currency) - isoDecimals(price.currency);
  const amount = shift >= 0 ? price.amountMinor * 10 ** shift : price.amountMinor / 10 ** -shift;
  return Number.isInteger(amount) && amount % stripeStep(price.currency) === 0 ? amount : undefined;
}

/** An amount Stripe reports (a session's `amount_total`) in ISO minor units, or undefined when it is none. */
export function fromStripeAmount(amount: number, currency: string): number | undefined {
  if (minorUnitOf(currency) === undefined) return undefined;
  const shift = isoDecimals(currency) - stripeDecimals(currency);
  const minor = shift >= 0 ? amount * 10 ** shift : amount / 10 ** -shift;
  return Number.isInteger(minor) ? minor : undefined;
}

/** Why Stripe cannot charge this price exactly, with the nearest prices it can; undefined when it can. */
export function stripeAmountProblem(price: Price): string | undefined {
  if (toStripeAmount(price) !== undefined) return undefined;
  // The step, back in ISO minor units: 10 fils for KWD, 100 (one whole ariary) for MGA.
  const step = Math.max(1, 10 ** (isoDecimals(price.currency) - stripeDecimals(price.currency)) * stripeStep(price.currency));
  const below = Math.floor(price.amountMinor / step) * step;
  const nearest = [below, below + step].filter((a) => a > 0).map((amountMinor) => formatPrice({ amountMinor, currency: price.currency }));
  return `Stripe charges ${price.currency.toUpperCase()} only in steps of ${formatPrice({ amountMinor: step, currency: price.currency })}, so it cannot charge ${formatPrice(price)}: use ${nearest.join(' or ')}`;
}
