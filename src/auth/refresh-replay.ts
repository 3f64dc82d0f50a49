import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Pool, PoolDeadlines } from '../db/pool.ts';
import { REFRESH_LOCK_CLASS } from '../db/locks.ts';
import { hashToken } from './secret-token.ts';

/**
 * Refresh tokens are replaced on every use, and using a spent one revokes the grant. A client
 * whose connection dropped before it read the answer retries with the same refresh token; within
 * REPLAY_SECONDS that retry gets the very same new pair instead of a revoked grant.
 *
 * The answer is kept sealed (AES-256-GCM) under a key derived from the spent refresh token, and
 * found by that token's hash: the database never holds a usable token, and only the holder of
 * the spent token can open the answer. After the window, reuse revokes the grant as before.
 *
 * Requests carrying the same refresh token are handled one at a time across every process of
 * the cluster (an advisory lock in PostgreSQL on the token's hash, held while the library
 * answers and the answer is sealed): behind a load balancer, two processes receiving the same
 * token at the same instant give one new pair, and both callers get it.
 */
const REPLAY_SECONDS = 10;

function keyFor(refreshToken: string): Buffer {
  return Buffer.from(hkdfSync('sha256', refreshToken, 'catalog refresh replay', 'aes-256-gcm key', 32));
}

function sealAnswer(refreshToken: string, body: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(refreshToken), iv);
  const sealed = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

function openAnswer(refreshToken: string, sealed: Buffer): string {
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
   * Runs `fn` for one refresh token at a time in the whole cluster: a second request with the
   * same token, in this process or any other, waits for the first, then finds its answer
   * instead of spending the token again (which would count as reuse and revoke the grant).
   */
  oneAtATime<T>(refreshToken: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** How long a refresh waits for another one with the same token before giving up. */
const REFRESH_LOCK_WAIT_MS = 3_000;

/**
 * The lock pool's deadlines (db/pool.ts): past the lock's own wait, a database that does not
 * answer; a refresh is then refused (503 temporarily_unavailable) rather than held.
 */
export const REFRESH_LOCK_DEADLINES: PoolDeadlines = { connectMs: 3_000, queryMs: REFRESH_LOCK_WAIT_MS + 500, transactionMs: REFRESH_LOCK_WAIT_MS + 500 };

/**
 * `pool` serves the queries; `lockPool` is a small pool of its own whose connections only hold
 * the per-token locks, so a lock never waits for a connection that the library's own queries,
 * made while the lock is held, would need.
 */
export function createRefreshReplays(pool: Pool, lockPool: Pool): RefreshReplays {
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
      const key = [REFRESH_LOCK_CLASS, hashToken(refreshToken).readInt32BE(0)];
      const client = await lockPool.connect();
      // A connection whose unlock did not go through is closed rather than reused: closing the
      // session is what releases a session-level lock for certain.
      let unlocked = false;
      try {
        await client.query(`SET lock_timeout = ${REFRESH_LOCK_WAIT_MS}`);
        await client.query('SELECT pg_advisory_lock($1, $2)', key);
        try {
          return await fn();
        } finally {
          unlocked = await client.query('SELECT pg_advisory_unlock($1, $2)', key).then(
            () => true,
            () => false,
          );
        }
      } finally {
        client.release(!unlocked);
      }
    },
    close: () => lockPool.end(),
  };
}
