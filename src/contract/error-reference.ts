import { ErrorCode } from './schemas.ts';

/**
 * Every error code a client can meet, with the statuses that carry it and what a client should do
 * about it: the table of docs/api-reference.md is generated from this list, and a test holds it
 * to `ErrorCode` (and the REST API's own 405 code), so a new code cannot go undocumented.
 */
export interface ErrorReference {
  readonly code: string;
  /** The HTTP statuses answered with this code (MCP tools carry the code in their tool error). */
  readonly statuses: readonly number[];
  /** When it is answered. */
  readonly meaning: string;
  /** Whether the same request may succeed later, and how to retry it. */
  readonly retry: 'no' | 'after Retry-After' | 'with back-off' | 'after a new export';
  /** Where it is answered: every caller, or only the maker tools and forms (MCP with a sign-in, pages). */
  readonly where: 'all' | 'makers';
}

export const ERROR_REFERENCE: readonly ErrorReference[] = [
  {
    code: ErrorCode.BAD_REQUEST,
    statuses: [400, 408, 413, 415, 431],
    meaning:
      'The request is invalid: 400 names each rejected parameter in `data.issues`; 408 the request took too long to arrive; 413 its body is too large; 415 its Content-Type is not accepted; 431 its request line or headers (the URL included) are too large.',
    retry: 'no',
    where: 'all',
  },
  { code: ErrorCode.INVALID_KEY, statuses: [401], meaning: 'The Authorization header holds no valid consumer key (malformed, unknown, revoked or expired); `WWW-Authenticate` says why. Never served as anonymous.', retry: 'no', where: 'all' },
  { code: ErrorCode.NOT_FOUND, statuses: [404], meaning: 'No live listing has this slug, or no route answers this path.', retry: 'no', where: 'all' },
  { code: 'METHOD_NOT_ALLOWED', statuses: [405], meaning: 'The REST API answers GET (and HEAD, OPTIONS) only; `Allow` lists them.', retry: 'no', where: 'all' },
  {
    code: ErrorCode.CURSOR_EXPIRED,
    statuses: [410],
    meaning: 'The change feed cannot continue from this cursor (older than the changes it keeps, or from another catalog database).',
    retry: 'after a new export',
    where: 'all',
  },
  {
    code: ErrorCode.TOO_MANY_REQUESTS,
    statuses: [429],
    meaning: 'A budget for the minute is spent (the address\'s, the key\'s or the sign-in\'s), or too many long polls or exports are held open at once.',
    retry: 'after Retry-After',
    where: 'all',
  },
  { code: ErrorCode.INTERNAL_SERVER_ERROR, statuses: [500], meaning: 'The service failed unexpectedly; the failure is logged with the request id.', retry: 'with back-off', where: 'all' },
  {
    code: ErrorCode.SERVICE_UNAVAILABLE,
    statuses: [503],
    meaning: 'The service holds as many long polls or exports as it allows, or (writes only) cannot reach its database.',
    retry: 'after Retry-After',
    where: 'all',
  },
  { code: ErrorCode.UNAUTHORIZED, statuses: [401], meaning: 'A maker tool called without a sign-in, or without the scopes it needs.', retry: 'no', where: 'makers' },
  { code: ErrorCode.FORBIDDEN, statuses: [403], meaning: 'The signed-in maker may not do this.', retry: 'no', where: 'makers' },
  { code: ErrorCode.CONFLICT, statuses: [409], meaning: "The request conflicts with the listing's state (a rejected listing edited, say).", retry: 'no', where: 'makers' },
];
