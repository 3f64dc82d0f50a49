import { z } from 'zod';
import type { Queryable } from '../db/pool.ts';

/** A maker's account: made the first time an address signs in. */
export interface Maker {
  readonly id: string;
  readonly email: string;
  readonly isAdmin: boolean;
}

const emailSchema = z
  .email({ error: 'Enter an e-mail address such as maker@example.com.' })
  .max(254, { error: 'An e-mail address has at most 254 characters.' });

/** Trims an address and checks it; the domain is lowercased (the local part may be case-sensitive). */
export function parseEmail(input: unknown): { ok: true; email: string } | { ok: false; message: string } {
  if (typeof input !== 'string' || input.trim() === '') return { ok: false, message: 'Enter your e-mail address.' };
  const trimmed = input.trim();
  const at = trimmed.lastIndexOf('@');
  const normalized = at > 0 ? `${trimmed.slice(0, at)}@${trimmed.slice(at + 1).toLowerCase()}` : trimmed;
  const parsed = emailSchema.safeParse(normalized);
  return parsed.success ? { ok: true, email: parsed.data } : { ok: false, message: parsed.error.issues[0]!.message };
}


function toMaker(row: { id: string; email: string; is_admin: boolean }): Maker {
  return { id: row.id, email: row.email, isAdmin: row.is_admin };
}

/** The account of this address (matched without regard to case), made if there is none yet. */
export async function findOrCreateMaker(db: Queryable, email: string): Promise<Maker> {
  const { rows } = await db.query<{ id: string; email: string; is_admin: boolean }>(
    `WITH made AS (
       INSERT INTO catalog.makers (email) VALUES ($1) ON CONFLICT ((lower(email))) DO NOTHING RETURNING id, email, is_admin
     )
     SELECT id, email, is_admin FROM made
     UNION ALL
     SELECT id, email, is_admin FROM catalog.makers WHERE lower(email) = lower($1)
     LIMIT 1`,
    [email],
  );
  return toMaker(rows[0]!);
}

export async function findMakerByEmail(db: Queryable, email: string): Promise<Maker | undefined> {
  const { rows } = await db.query<{ id: string; email: string; is_admin: boolean }>('SELECT id, email, is_admin FROM catalog.makers WHERE lower(email) = lower($1)', [email]);
  return rows[0] ? toMaker(rows[0]) : undefined;
}

/** Makes an account an admin (the review pages and tools), or no longer one. */
export async function setAdmin(db: Queryable, makerId: string, isAdmin: boolean): Promise<void> {
  await db.query('UPDATE catalog.makers SET is_admin = $2 WHERE id = $1', [makerId, isAdmin]);
}
