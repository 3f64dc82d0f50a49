import { hashToken, newSecretToken } from '../../auth/secret-token.ts';
import type { Pool, PoolClient } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import { CLAIM_LINK_MS, DRAFT_WINDOW_MS, claimState, draftAllowance, type ClaimState } from '../listings/listing-rules.ts';
import type { Submission } from '../listings/maker-input.ts';

/**
 * Private drafts and their claim links. A draft is nothing public: it holds what submit_product
 * was given until the maker opens the claim link, signs in and submits it through the normal
 * form. The link's token is random and stored hashed; it works once and for 7 days.
 */
export type DraftReason = 'signed_out' | 'no_write_scope' | 'no_usable_image';

/** What a draft keeps of a submission: every field given, the website included. */
export type DraftFields = Omit<Submission, 'website'>;

export interface Draft {
  readonly id: string;
  readonly website: string;
  readonly fields: DraftFields;
  readonly reason: DraftReason;
  readonly makerId: string | null;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly claimedAt: Date | null;
  readonly listingId: string | null;
}

export const CLAIM_PATH = '/claim';

export type SavedDraft = { saved: true; draft: Draft; claimUrl: string } | { saved: false; retryAt: Date; message: string };

/**
 * Saves a draft unless the draft limits refuse it. Every draft creation takes one lock, so
 * concurrent calls at the boundary are counted one after another and never make a sixth draft.
 */
export async function saveDraft(
  pool: Pool,
  opts: { publicUrl: string; capPerDay: number; now: Date },
  draft: { website: string; websiteKey: string; fields: DraftFields; reason: DraftReason; makerId: string | null; clientIp: string },
): Promise<SavedDraft> {
  const { now } = opts;
  return withTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('catalog draft limits'))");
    const since = new Date(now.getTime() - DRAFT_WINDOW_MS);
    const { rows } = await client.query<{ by_ip: number; oldest_by_ip: Date | null; total: number; oldest_total: Date | null }>(
      `SELECT count(*) FILTER (WHERE client_ip = $2)::int AS by_ip, min(created_at) FILTER (WHERE client_ip = $2) AS oldest_by_ip,
              count(*)::int AS total, min(created_at) AS oldest_total
       FROM catalog.drafts WHERE created_at > $1`,
      [since, draft.clientIp],
    );
    const counts = rows[0]!;
    const allowance = draftAllowance({ byIp: counts.by_ip, oldestByIp: counts.oldest_by_ip, total: counts.total, oldestTotal: counts.oldest_total }, opts.capPerDay, now);
    if (!allowance.allowed) return { saved: false, retryAt: allowance.retryAt, message: allowance.message };
    const token = newSecretToken();
    const expiresAt = new Date(now.getTime() + CLAIM_LINK_MS);
    const inserted = await client.query<{ id: string }>(
      `INSERT INTO catalog.drafts (claim_token_hash, website, website_key, fields, reason, maker_id, client_ip, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
      [hashToken(token), draft.website, draft.websiteKey, JSON.stringify(draft.fields), draft.reason, draft.makerId, draft.clientIp, now, expiresAt],
    );
    return {
      saved: true,
      claimUrl: `${opts.publicUrl}${CLAIM_PATH}/${token}`,
      draft: {
        id: inserted.rows[0]!.id,
        website: draft.website,
        fields: draft.fields,
        reason: draft.reason,
        makerId: draft.makerId,
        createdAt: now,
        expiresAt,
        claimedAt: null,
        listingId: null,
      },
    };
  });
}

interface DraftRow {
  id: string;
  website: string;
  fields: DraftFields;
  reason: DraftReason;
  maker_id: string | null;
  created_at: Date;
  expires_at: Date;
  claimed_at: Date | null;
  listing_id: string | null;
}

function toDraft(row: DraftRow): Draft {
  return {
    id: row.id,
    website: row.website,
    fields: row.fields,
    reason: row.reason,
    makerId: row.maker_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    claimedAt: row.claimed_at,
    listingId: row.listing_id,
  };
}

const DRAFT_COLUMNS = 'id, website, fields, reason, maker_id, created_at, expires_at, claimed_at, listing_id';

/** The draft a claim link opens, and whether the link still works. */
export async function findDraftByClaimToken(pool: Pool, token: string, now: Date): Promise<{ draft: Draft; state: ClaimState } | undefined> {
  if (token.length > 200) return undefined;
  const { rows } = await pool.query<DraftRow>(`SELECT ${DRAFT_COLUMNS} FROM catalog.drafts WHERE claim_token_hash = $1`, [hashToken(token)]);
  if (!rows[0]) return undefined;
  const draft = toDraft(rows[0]);
  return { draft, state: claimState(draft, now) };
}

/**
 * Spends a claim link inside the transaction that creates its listing. False when the link was
 * used or expired meanwhile (the transaction then rolls back: nothing is created).
 */
export async function spendClaim(client: PoolClient, draftId: string, makerId: string, listingId: string, now: Date): Promise<boolean> {
  const { rowCount } = await client.query(
    `UPDATE catalog.drafts SET claimed_at = $4, claimed_by = $2, listing_id = $3
     WHERE id = $1 AND claimed_at IS NULL AND expires_at > $4`,
    [draftId, makerId, listingId, now],
  );
  return rowCount === 1;
}

/** Whether a draft's claim link was used already (or the draft is gone). */
export async function claimSpent(client: Pool | PoolClient, draftId: string): Promise<boolean> {
  const { rows } = await client.query<{ spent: boolean }>('SELECT claimed_at IS NOT NULL AS spent FROM catalog.drafts WHERE id = $1', [draftId]);
  return rows[0]?.spent ?? true;
}
