import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Pool } from '../db/pool.ts';
import { hashToken } from './secret-token.ts';

/**
 * Refresh tokens are replaced on every use, and using a spent one revokes the grant. A client
 * whose connection dropped before it read the answer retries with the same refresh token; within
 * REPLAY_SECONDS that retry gets the very same new pair instead of a revoked grant.
 *
 * The answer is kept sealed (AES-256-GCM) under a key derived from the spent refresh token, and
 * found by that token's hash: the database never holds a usable token, and only the holder of
 * the spent token can open the answer. After the window, reuse revokes the grant as before.
 */
export const REPLAY_SECONDS = 10;

function keyFor(refreshToken: string): Buffer {
  return Buffer.from(hkdfSync('sha256', refreshToken, 'catalog refresh replay', 'aes-256-gcm key', 32));
}

export function sealAnswer(refreshToken: string, body: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(refreshToken), iv);
  const sealed = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

export function openAnswer(refreshToken: string, sealed: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', keyFor(refreshToken), sealed.subarray(0, 12));
  decipher.setAuthTag(sealed.subarray(12, 28));
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
}

export interface RefreshReplays {
  /** Records the answer to a refresh that spent `refreshToken`. */
  remember(refreshToken: string, body: unknown): Promise<void>;
  /** The answer given to an earlier refresh with this token, while the window lasts. */
  recall(refreshToken: string): Promise<string | undefined>;
  /**
   * Runs `fn` for one refresh token at a time in this process: a second request with the same
   * token waits for the first, then finds its answer instead of spending the token again.
   */
  oneAtATime<T>(refreshToken: string, fn: () => Promise<T>): Promise<T>;
}

export function createRefreshReplays(pool: Pool): RefreshReplays {
  const inFlight = new Map<string, Promise<unknown>>();
  return {
    async remember(refreshToken, body) {
      await pool.query(
        `INSERT INTO auth.refresh_replays (token_hash, sealed, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
         ON CONFLICT (token_hash) DO NOTHING`,
        [hashToken(refreshToken), sealAnswer(refreshToken, JSON.stringify(body)), REPLAY_SECONDS],
      );
    },
    async recall(refreshToken) {
      const { rows } = await pool.query<{ sealed: Buffer }>('SELECT sealed FROM auth.refresh_replays WHERE token_hash = $1 AND expires_at > now()', [
        hashToken(refreshToken),
      ]);
      return rows[0] ? openAnswer(refreshToken, rows[0].sealed) : undefined;
    },
    async oneAtATime(refreshToken, fn) {
      const key = hashToken(refreshToken).toString('hex');
      for (let earlier = inFlight.get(key); earlier; earlier = inFlight.get(key)) await earlier.catch(() => undefined);
      const run = fn();
      inFlight.set(key, run);
      try {
        return await run;
      } finally {
        inFlight.delete(key);
      }
    },
  };
}
