import { z } from 'zod';
import { badRequest, conflict } from '../../contract/errors.ts';
import type { ValidationIssue } from '../../contract/schemas.ts';
import type { Pool, Queryable } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import { LISTING_LIMITS } from '../../contract/listing-limits.ts';
import { decidePremiumProfileEdit, promoExpiryProblem } from './listing-rules.ts';
import { hasControlCharacters, hasMarkup } from './maker-input.ts';
import { getMakerListing, type MakerListing } from './maker-listings.ts';
import type { ListingUrls } from './listing-urls.ts';

/**
 * The premium profile a maker writes for a listing on the premium plan: highlights, who it is
 * ideal for, questions and answers, and a promo code. The limits are those of an import
 * (LISTING_LIMITS); every value is plain text, as the listing's name is: markup is refused with
 * a clear message rather than stripped.
 *
 * The schema's messages leave out which value they are about; profileIssues() names it
 * ("highlight 3 must be at most 300 characters"), from the issue's path.
 */
interface Promo {
  readonly code: string;
  readonly discount: string;
  readonly url: string | null;
  /** The last valid day, yyyy-mm-dd. */
  readonly expiresAt: string | null;
}

export interface PremiumProfile {
  readonly highlights: readonly string[];
  readonly idealFor: readonly string[];
  readonly faq: readonly { readonly question: string; readonly answer: string }[];
  readonly promo: Promo | null;
}

const text = (max: number) =>
  z
    .string({ error: 'must be text' })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` })
    .refine((v) => !hasMarkup(v), { error: 'must be plain text, without HTML or scripts' })
    .refine((v) => !hasControlCharacters(v), { error: 'must not contain control characters' });

const lines = (max: number) =>
  z
    .array(text(LISTING_LIMITS.profileItemMax), { error: 'must be a list of lines' })
    .max(max, { error: `must have at most ${max} lines` });

const promoUrl = z
  .string({ error: 'must be text' })
  .trim()
  .max(LISTING_LIMITS.urlMax, { error: `must be at most ${LISTING_LIMITS.urlMax} characters` })
  .pipe(z.url({ protocol: /^https?$/, hostname: z.regexes.domain, error: 'must be an http(s) address with a domain name, such as https://example.com/offer' }));

export const premiumProfileSchema = z
  .strictObject({
    highlights: lines(LISTING_LIMITS.profileItemsMax),
    ideal_for: lines(LISTING_LIMITS.profileItemsMax),
    faq: z
      .array(
        z.strictObject({ question: text(LISTING_LIMITS.faqQuestionMax), answer: text(LISTING_LIMITS.faqAnswerMax) }, { error: 'must be a question and its answer' }),
        { error: 'must be a list of questions and answers' },
      )
      .max(LISTING_LIMITS.faqMax, { error: `must have at most ${LISTING_LIMITS.faqMax} questions` }),
    promo: z
      .strictObject(
        {
          code: text(LISTING_LIMITS.promoCodeMax),
          discount: text(LISTING_LIMITS.promoDiscountMax),
          url: promoUrl.nullable(),
          expires_at: z.iso.date({ error: 'must be a date, yyyy-mm-dd' }).nullable(),
        },
        { error: 'must be a code and a discount, or nothing' },
      )
      .nullable(),
  })
  .transform(
    (v): PremiumProfile => ({
      highlights: v.highlights,
      idealFor: v.ideal_for,
      faq: v.faq,
      promo: v.promo && { code: v.promo.code, discount: v.promo.discount, url: v.promo.url, expiresAt: v.promo.expires_at },
    }),
  );

const LABELS: Readonly<Record<string, { list: string; item: string }>> = {
  highlights: { list: 'highlights', item: 'highlight' },
  ideal_for: { list: 'ideal for', item: 'ideal for line' },
  faq: { list: 'FAQ', item: 'question' },
};

const PROMO_LABELS: Readonly<Record<string, string>> = { code: 'promo code', discount: 'promo discount', url: 'promo URL', expires_at: 'promo expiry date' };

/** What an issue's path names, in words: "highlight 3", "answer 2", "promo URL". */
function labelOf(path: readonly PropertyKey[]): string {
  const [field, index, part] = path;
  if (field === 'promo') return typeof index === 'string' ? (PROMO_LABELS[index] ?? 'promo') : 'promo';
  const label = LABELS[String(field)];
  if (!label) return String(field ?? 'profile');
  if (typeof index !== 'number') return label.list;
  if (field === 'faq') return `${part === 'answer' ? 'answer' : 'question'} ${index + 1}`;
  return `${label.item} ${index + 1}`;
}

/** Every problem with a profile, each naming the value it is about (its path says where it is). */
export function profileIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ path: [...issue.path.map(String), key], message: `${key} is not part of the premium profile` }));
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    return [{ path, message: `${labelOf(path)} ${issue.message}` }];
  });
}

interface ProfileRow {
  highlights: string[];
  ideal_for: string[];
  faq: { question: string; answer: string }[];
  promo_code: string | null;
  promo_discount: string | null;
  promo_url: string | null;
  promo_expires_at: string | null;
}

/** The premium profile of one of the maker's listings (empty for a listing that never had one). */
export async function getPremiumProfile(db: Queryable, makerId: string, listingId: string): Promise<PremiumProfile> {
  const { rows } = await db.query<ProfileRow>(
    `SELECT highlights, ideal_for, faq, promo_code, promo_discount, promo_url, to_char(promo_expires_at, 'YYYY-MM-DD') AS promo_expires_at
     FROM catalog.listings WHERE id = $1 AND maker_id = $2`,
    [listingId, makerId],
  );
  const row = rows[0];
  if (!row) return { highlights: [], idealFor: [], faq: [], promo: null };
  return {
    highlights: row.highlights,
    idealFor: row.ideal_for,
    faq: row.faq,
    promo: row.promo_code !== null ? { code: row.promo_code, discount: row.promo_discount ?? '', url: row.promo_url, expiresAt: row.promo_expires_at } : null,
  };
}

export interface ProfileEditResult {
  readonly listing: MakerListing;
  readonly outcome: 'updated_live' | 'sent_to_review';
}

/**
 * Replaces the premium profile of one of the maker's premium listings, under the rules of any
 * edit: a live listing stays live, a rejected one is refused (CONFLICT), any other goes to
 * review. A promo whose last day is already past is refused (BAD_REQUEST).
 */
export async function editPremiumProfile(pool: Pool, urls: ListingUrls, makerId: string, slug: string, profile: PremiumProfile, now: Date): Promise<ProfileEditResult> {
  const expiry = profile.promo?.expiresAt;
  const expiryProblem = expiry ? promoExpiryProblem(expiry, now) : undefined;
  if (expiryProblem) throw badRequest([{ path: ['promo', 'expires_at'], message: `promo expiry date ${expiryProblem}` }]);
  return withTransaction(pool, async (client) => {
    const current = await getMakerListing(client, urls, makerId, slug, true);
    const decision = decidePremiumProfileEdit(current.state);
    if (!decision.allowed) throw conflict(decision.message);
    await client.query(
      `UPDATE catalog.listings SET highlights = $2, ideal_for = $3, faq = $4, promo_code = $5, promo_discount = $6, promo_url = $7,
         promo_expires_at = $8, status = $9, updated_at = $10,
         review_requested_at = CASE WHEN $11 THEN $10 ELSE review_requested_at END,
         hidden_reason = CASE WHEN $11 THEN NULL ELSE hidden_reason END
       WHERE id = $1`,
      [
        current.id,
        profile.highlights,
        profile.idealFor,
        JSON.stringify(profile.faq),
        profile.promo?.code ?? null,
        profile.promo?.discount ?? null,
        profile.promo?.url ?? null,
        profile.promo?.expiresAt ?? null,
        decision.nextStatus,
        now,
        decision.reviewRequested,
      ],
    );
    return { listing: await getMakerListing(client, urls, makerId, slug), outcome: decision.reviewRequested ? 'sent_to_review' : 'updated_live' };
  });
}
