import { code as isoCurrency } from 'currency-codes';

/**
 * Prices in any ISO 4217 currency, counted in the currency's own minor unit as ISO 4217 defines
 * it (the `currency-codes` package carries the standard's list): cents for USD (2 decimals),
 * yen for JPY (0), fils for KWD (3). One price is one integer and a currency code, so nothing is
 * ever rounded on the way from the configuration to the pay page, the database and the payment
 * provider (which may count in other units: src/money/stripe-amounts.ts converts).
 */
export interface Price {
  /** The amount in the currency's minor unit (ISO 4217): 2900 for 29.00 USD, 1500 for 1500 JPY, 5250 for 5.250 KWD. */
  readonly amountMinor: number;
  /** ISO 4217 code, lowercase. */
  readonly currency: string;
}

/**
 * ISO 4217 codes that name no money one pays a price in: precious metals, bond-market units, the
 * SDR, the testing code and "no currency". The standard gives them no minor unit ("N.A.").
 */
const NOT_MONEY: ReadonlySet<string> = new Set(['XAG', 'XAU', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XPD', 'XPT', 'XSU', 'XTS', 'XUA', 'XXX']);

/** The most a price may be in minor units (it is stored as a PostgreSQL integer). */
const MAX_AMOUNT_MINOR = 2_147_483_647;

/** The number of decimals of the currency's minor unit (0 JPY, 2 USD, 3 KWD), or undefined for a code that is not a currency. */
export function minorUnitOf(currency: string): number | undefined {
  const upper = currency.toUpperCase();
  if (!/^[A-Z]{3}$/.test(upper) || NOT_MONEY.has(upper)) return undefined;
  return isoCurrency(upper)?.digits;
}

function digitsOf(price: Price): number {
  const digits = minorUnitOf(price.currency);
  if (digits === undefined) throw new Error(`${price.currency} is not an ISO 4217 currency`);
  return digits;
}

/** The amount as a decimal number with exactly the currency's decimals: "29.00", "1500", "5.250". */
function formatAmount(price: Price): string {
  const digits = digitsOf(price);
  const text = String(price.amountMinor).padStart(digits + 1, '0');
  return digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** "29.00 USD", "1500 JPY", "5.250 KWD": the amount with its currency's decimals, then its code. */
export function formatPrice(price: Price): string {
  return `${formatAmount(price)} ${price.currency.toUpperCase()}`;
}

export type PriceParse = { readonly ok: true; readonly price: Price } | { readonly ok: false; readonly message: string };

/**
 * A price as an operator writes it: an amount and an ISO 4217 code, "29.00 USD", "1500 JPY",
 * "5.250 KWD" (the code may come first, case does not matter). The amount has at most as many
 * decimals as the currency's minor unit, and is more than zero.
 */
export function parsePrice(text: string): PriceParse {
  const m = /^\s*(?:(\d{1,10})(?:\.(\d{1,10}))?\s*([A-Za-z]{3})|([A-Za-z]{3})\s*(\d{1,10})(?:\.(\d{1,10}))?)\s*$/.exec(text);
  if (!m) return { ok: false, message: 'must be an amount and an ISO 4217 currency code, e.g. "29.00 USD", "1500 JPY" or "5.250 KWD"' };
  const whole = m[1] ?? m[5]!;
  const fraction = m[2] ?? m[6] ?? '';
  const code = (m[3] ?? m[4]!).toUpperCase();
  const digits = minorUnitOf(code);
  if (digits === undefined) {
    return { ok: false, message: NOT_MONEY.has(code) ? `${code} is not a currency a price can be paid in` : `${code} is not an ISO 4217 currency code` };
  }
  if (fraction.length > digits) {
    const unit = digits === 0 ? `${code} has no minor unit: give a whole amount, e.g. "${Number(whole) || 1} ${code}"` : `${code} has ${digits} decimals: give at most ${digits}, e.g. "${whole}.${fraction.slice(0, digits)} ${code}"`;
    return { ok: false, message: unit };
  }
  const amountMinor = Number(whole) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
  if (amountMinor === 0) return { ok: false, message: 'must be more than zero' };
  if (amountMinor > MAX_AMOUNT_MINOR) return { ok: false, message: `is too large: at most ${formatPrice({ amountMinor: MAX_AMOUNT_MINOR, currency: code.toLowerCase() })}` };
  return { ok: true, price: { amountMinor, currency: code.toLowerCase() } };
}
