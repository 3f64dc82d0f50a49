import { hash } from 'node:crypto';

/** Strong ETag of a body (quoted): the SHA-1 of its UTF-8 bytes, base64url. */
export function etagOf(body: string | Buffer): string {
  return `"${hash('sha1', body, 'base64url')}"`;
}
