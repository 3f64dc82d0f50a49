/**
 * Whether an error says the database cannot be reached right now (refused or dropped
 * connections, a server shutting down, starting up or out of connection slots, a connect
 * attempt that timed out, a query or transaction past its deadline), as opposed to an error in
 * what was asked of it. The first kind is answered "unavailable, retry shortly" (HTTP 503); the
 * second is a failure of its own.
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is going away, not there yet, or full, and of a statement it ended
 * past its deadline (57014: statement_timeout, pool.ts).
 */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300', '57014']);

/**
 * What node-postgres says when a connection ends under a query, cannot be made (or a free one
 * found) in time, or a query goes unanswered past its deadline (a frozen server: pool.ts).
 */
const CLIENT_MESSAGES = [/^Connection terminated/, /^timeout exceeded when trying to connect/, /is not queryable/, /^Client was closed and is not queryable/, /^Query read timeout/];

/** A transaction past its deadline (pool.ts: TransactionDeadlineError). */
const DEADLINE_CODES = new Set(['TRANSACTION_DEADLINE']);

export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (depth > 5 || typeof err !== 'object' || err === null) return false;
  const { code, message, cause, errors } = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_CODES.has(code) || DEADLINE_CODES.has(code) || code.startsWith('08'))) return true;
  if (typeof message === 'string' && CLIENT_MESSAGES.some((re) => re.test(message))) return true;
  // A connection refused on every address of a host comes as an AggregateError.
  if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => isDatabaseUnavailable(e, depth + 1))) return true;
  return cause !== undefined && isDatabaseUnavailable(cause, depth + 1);
}
