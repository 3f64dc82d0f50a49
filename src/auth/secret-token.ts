import { createHash, randomBytes } from 'node:crypto';

/**
 * Secrets handed to browsers and clients (sign-in links, session cookies, claim links) are random
 * and stored only as their SHA-256: whoever reads the database cannot use what it holds.
 */
export function newSecretToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export function hashTokenHex(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
