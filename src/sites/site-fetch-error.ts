/**
 * Why fetching a maker's site failed. The code is stable: callers branch on it (a badge check
 * answers "inconclusive" on any of them) and may show the message, which is written for the
 * maker to read.
 */
export type SiteFetchErrorCode =
  /** The address given is not an http(s) URL, or carries a user name or password. */
  | 'invalid_url'
  /** The site (or a redirect) leads to an address the service never connects to. */
  | 'blocked_address'
  /** The host name does not resolve. */
  | 'dns_failed'
  /** No connection could be made (refused, unreachable, TLS certificate not accepted). */
  | 'connect_failed'
  /** The whole fetch (DNS, redirects, body) did not finish within the deadline. */
  | 'timeout'
  /** The body is over the size limit (by Content-Length or while reading). */
  | 'too_large'
  /** A page was expected, another content type came back. */
  | 'not_html'
  /** An image was expected, another content type came back. */
  | 'not_image'
  /** The final answer was not a 2xx (or a redirect came without a Location). */
  | 'http_status'
  /** More redirects than allowed. */
  | 'too_many_redirects'
  /** A redirect pointed to something that is not an http(s) URL. */
  | 'bad_redirect'
  /** The response could not be read (connection dropped, unknown content encoding). */
  | 'bad_response';

export class SiteFetchError extends Error {
  readonly code: SiteFetchErrorCode;
  /** The URL being fetched when it failed (after any redirects followed so far). */
  readonly url: string;
  /** The HTTP status, for `http_status`. */
  readonly status: number | undefined;

  constructor(code: SiteFetchErrorCode, url: string, message: string, opts: { status?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SiteFetchError';
    this.code = code;
    this.url = url;
    this.status = opts.status;
  }
}
