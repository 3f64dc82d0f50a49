import type { z } from 'zod';
import { ErrorCode, type ErrorBody, type ValidationIssue } from './schemas.ts';

/**
 * The one error base class of the service. Its code is stable and public; REST turns it into
 * an HTTP status and the error object, MCP into a tool error carrying the same code and message.
 */
export class CatalogError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly issues: ValidationIssue[] | undefined;
  /** Seconds until a refused call may be retried (429 and 503). */
  readonly retryAfterSeconds: number | undefined;
  /** The `WWW-Authenticate` challenge sent with a 401 (a credential refused). */
  readonly challenge: string | undefined;

  constructor(
    code: ErrorCode,
    status: number,
    message: string,
    opts: { issues?: ValidationIssue[]; retryAfterSeconds?: number; challenge?: string; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'CatalogError';
    this.code = code;
    this.status = status;
    this.issues = opts.issues;
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.challenge = opts.challenge;
  }

  toBody(): ErrorBody {
    return this.issues
      ? { code: this.code, message: this.message, data: { issues: this.issues } }
      : { code: this.code, message: this.message };
  }
}

export function badRequest(issues: ValidationIssue[]): CatalogError {
  const names = [...new Set(issues.map((i) => String(i.path[0] ?? 'request')))];
  return new CatalogError(
    ErrorCode.BAD_REQUEST,
    400,
    `Invalid request: ${names.map((n) => `'${n}'`).join(', ')} ${names.length === 1 ? 'was' : 'were'} rejected; see data.issues.`,
    { issues },
  );
}

export function notFound(slug: string): CatalogError {
  return new CatalogError(ErrorCode.NOT_FOUND, 404, `No live listing has the slug '${slug}'.`);
}

/** Whose budget is spent: an address (anonymous), a consumer key, or a maker's sign-in. */
export type BudgetHolder = 'address' | 'key' | 'sign-in';

const HOLDER_TEXT: Record<BudgetHolder, string> = { address: 'from this address', key: 'with this key', 'sign-in': 'through this sign-in' };

export function tooManyRequests(retryAfterSeconds: number, holder: BudgetHolder = 'address'): CatalogError {
  return new CatalogError(
    ErrorCode.TOO_MANY_REQUESTS,
    429,
    `Too many requests ${HOLDER_TEXT[holder]}: slow down and retry shortly (in about ${retryAfterSeconds} s).`,
    { retryAfterSeconds },
  );
}

/**
 * A consumer key that is malformed, unknown, revoked or expired: never served as anonymous. Its
 * challenge says so to the client's HTTP layer (RFC 6750).
 */
export function invalidKey(message: string): CatalogError {
  return new CatalogError(ErrorCode.INVALID_KEY, 401, message, { challenge: keyChallenge(message) });
}

/** The challenge of a 401 for a key (a header value: printable ASCII, no quotes inside the quoted string). */
export function keyChallenge(message: string): string {
  const description = message.replace(/…/g, '...').replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '');
  return `Bearer error="invalid_token", error_description="${description}"`;
}

/** The change feed cannot continue from this cursor; the client must export again. */
export function cursorExpired(reason: string): CatalogError {
  return new CatalogError(
    ErrorCode.CURSOR_EXPIRED,
    410,
    `${reason} Export the catalog again (GET /api/v1/export) and follow the feed from its Catalog-Cursor.`,
  );
}

/** A maker's request that the listing's state does not allow (editing a rejected listing…). */
export function conflict(message: string): CatalogError {
  return new CatalogError(ErrorCode.CONFLICT, 409, message);
}

/** One of the caller's listings was named that the caller does not have. */
export function listingNotFound(slug: string): CatalogError {
  return new CatalogError(ErrorCode.NOT_FOUND, 404, `You have no listing with the slug '${slug.slice(0, 200)}'. Call my_listings to see yours.`);
}

export function internalError(cause?: unknown): CatalogError {
  return new CatalogError(ErrorCode.INTERNAL_SERVER_ERROR, 500, 'The service failed to answer this request. Please retry shortly.', {
    cause,
  });
}

/** Seconds a client is told to wait before retrying a request refused while the database is away. */
export const UNAVAILABLE_RETRY_SECONDS = 5;

/**
 * The database cannot be reached (restarting, failing over, out of connections): the request
 * was not completed. Reads keep answering from each process's copy of the catalog; writes get
 * this, at once rather than after a hang.
 */
export function serviceUnavailable(cause?: unknown): CatalogError {
  return new CatalogError(
    ErrorCode.SERVICE_UNAVAILABLE,
    503,
    `The service cannot reach its database right now, so this request could not be completed. Retry in about ${UNAVAILABLE_RETRY_SECONDS} seconds.`,
    { retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS, cause },
  );
}

/** Requests held open for a while: change-feed long polls and exports (docs/connections.md). */
export type HeldKind = 'long polls' | 'exports';

/** Seconds a client is told to wait when it, or the whole process, holds as many of a kind as allowed. */
const HELD_RETRY_SECONDS = 5;

const heldRefusals = new WeakSet<CatalogError>();

/** Whether the error refuses a request past a cap on held requests (not worth a log line each). */
export function isHeldRefusal(err: unknown): boolean {
  return err instanceof CatalogError && heldRefusals.has(err);
}

/** One address (or consumer key) has as many long polls (or exports) open as it may: 429. */
export function tooManyHeld(kind: HeldKind, cap: number, holder: 'address' | 'key'): CatalogError {
  const whose = holder === 'key' ? 'with this key' : 'from this address';
  const advice = kind === 'long polls' ? 'wait for one to answer before opening another' : 'finish one before starting another';
  const err = new CatalogError(
    ErrorCode.TOO_MANY_REQUESTS,
    429,
    `Too many ${kind} open ${whose} at once (at most ${cap}): ${advice}, or retry in about ${HELD_RETRY_SECONDS} s.`,
    { retryAfterSeconds: HELD_RETRY_SECONDS },
  );
  heldRefusals.add(err);
  return err;
}

/** The process holds as many long polls (or exports) as it allows in all: 503. */
export function heldFull(kind: HeldKind): CatalogError {
  const alternative = kind === 'long polls' ? ' (or poll without wait)' : '';
  const err = new CatalogError(
    ErrorCode.SERVICE_UNAVAILABLE,
    503,
    `The service holds as many ${kind} open as it allows right now: retry in about ${HELD_RETRY_SECONDS} s${alternative}.`,
    { retryAfterSeconds: HELD_RETRY_SECONDS },
  );
  heldRefusals.add(err);
  return err;
}

/** One issue per rejected parameter, naming it, in the order the parameters were checked. */
export function issuesFromZod(error: z.ZodError): ValidationIssue[] {
  const byParam = new Map<string, ValidationIssue>();
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        if (!byParam.has(key)) byParam.set(key, { path: [key], message: 'is not a known parameter' });
      }
      continue;
    }
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    const key = String(path[0] ?? 'request');
    if (!byParam.has(key)) byParam.set(key, { path: path.length ? path : [key], message: issue.message });
  }
  return [...byParam.values()];
}
