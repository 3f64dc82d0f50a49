import type { ConsumerKey } from '../auth/consumer-keys/consumer-key-table.ts';
import { tooManyRequests, type CatalogError } from '../contract/errors.ts';

/**
 * The words of a budget decision (budgets.ts: Budgets.decide): the budgets a request spends
 * from, whose they are, and the verdict a request gets.
 *
 * Per-IP request budgets (spec section 8): searches and other calls are separate buckets of a
 * one-minute window; the web pages have a budget of their own (people browsing, makers,
 * admins); so do the bulk export (an answer is the whole catalog) and the change feed (a
 * consumer following it must not spend the budget it needs for its other calls). A consumer
 * key, or a maker's sign-in, spends budgets of its own instead (BudgetOwner).
 */
export type Bucket = 'search' | 'other' | 'pages' | 'export' | 'changes';

/**
 * Whose budget a request spends when it is not its address's: a consumer key (docs/keys.md) or
 * a maker's sign-in through a connected app (one grant). Budgets are counted per owner across
 * every API process, exactly as an address's are. Every owner has these four fields, in this
 * order (one shape).
 */
export interface BudgetOwner {
  /** The budget's name in the limiter: `k:<key id>` or `g:<grant id>`, never an address. */
  readonly id: string;
  /** Its budgets a window; a bucket left out has the address's. */
  readonly limits: Partial<Record<Bucket, number>>;
  /** Who holds it, as a refusal names it ("with this key", "through this sign-in"). */
  readonly holder: 'key' | 'sign-in';
  /** A consumer key's: its requests are counted in the key's usage, answered or refused. */
  readonly key: ConsumerKey | undefined;
}

/** What every verdict says besides whether the request goes on. */
interface VerdictFields {
  /** Whose budget: a key's or a sign-in's; undefined for the address's. */
  readonly owner: BudgetOwner | undefined;
  /**
   * The bucket a unit was spent from, with what its RateLimit headers tell below
   * (rate-limit-headers.ts); undefined when nothing was spent (no bucket asked for, or a key
   * refused), and the other figures are then 0.
   */
  readonly bucket: Bucket | undefined;
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the window ends (at least 1). */
  readonly resetSeconds: number;
  /** Length of the window in seconds. */
  readonly windowSeconds: number;
}

/**
 * A request's budget verdict: it goes on, or `refusal` is what to send (401 INVALID_KEY with its
 * challenge for a key that is not valid, 429 TOO_MANY_REQUESTS with Retry-After for a budget
 * spent or an address guessing keys). Every verdict is made by `counted` or `uncounted` below,
 * so all have one shape: the hot paths read them without a second hidden class.
 */
export type Verdict = VerdictFields & ({ readonly allowed: true; readonly refusal: undefined } | { readonly allowed: false; readonly refusal: CatalogError });

/** A verdict that spent a unit of a bucket: the RateLimit headers tell it. */
export type Counted = Verdict & { readonly bucket: Bucket };

/** Whether a verdict spent a unit (and has RateLimit headers to send). */
export function isCounted(verdict: Verdict): verdict is Counted {
  return verdict.bucket !== undefined;
}

/**
 * The verdict of a unit spent from `bucket` when `count` units of `limit` are spent in the window
 * (this one included): allowed up to the limit, refused past it (429 until the window ends).
 */
export function counted(bucket: Bucket, owner: BudgetOwner | undefined, limit: number, count: number, msBeforeNext: number, windowSeconds: number): Counted {
  const resetSeconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  if (count > limit) {
    return { allowed: false, owner, refusal: tooManyRequests(resetSeconds, owner?.holder ?? 'address'), bucket, limit, remaining: 0, resetSeconds, windowSeconds };
  }
  return { allowed: true, owner, refusal: undefined, bucket, limit, remaining: limit - count, resetSeconds, windowSeconds };
}

/** A verdict with nothing spent: who is calling, and the refusal when its credential is refused. */
export function uncounted(owner: BudgetOwner | undefined, refusal: CatalogError | undefined): Verdict {
  return refusal === undefined
    ? { allowed: true, owner, refusal, bucket: undefined, limit: 0, remaining: 0, resetSeconds: 0, windowSeconds: 0 }
    : { allowed: false, owner, refusal, bucket: undefined, limit: 0, remaining: 0, resetSeconds: 0, windowSeconds: 0 };
}
