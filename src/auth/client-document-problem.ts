import { SiteFetchError } from '../sites/site-fetch-error.ts';

/**
 * Why a Client ID Metadata Document could not be used, in words for whoever landed on the error
 * page (often the developer of the app). The library reports every failure of the fetch as the
 * same "fetch failed" and keeps the reason in the error's cause; this reads it back. Network
 * failures on public addresses stay one sentence ("could not be reached"), so the page is no
 * probe of which hosts and ports answer; a refused address says it is not public.
 */
/** The most of a client's document read (the draft's suggestion, and the library's default). */
export const CLIENT_DOCUMENT_MAX_BYTES = 5 * 1024;

const FETCH_FAILED = 'client_id metadata document fetch failed';

export function clientDocumentProblem(error: unknown): string | undefined {
  if (!(error instanceof Error) || (error as { error_description?: unknown }).error_description !== FETCH_FAILED) return undefined;
  const cause = error.cause;
  const detail = (error as { error_detail?: unknown }).error_detail;
  if (cause instanceof SiteFetchError) {
    if (cause.code === 'blocked_address' || cause.code === 'invalid_url') return `Its description's address is refused: ${cause.message}`;
    if (cause.code === 'too_large') return `Its description is larger than ${CLIENT_DOCUMENT_MAX_BYTES / 1024} KB, the most this directory reads.`;
    return 'Its description could not be reached.';
  }
  if (cause instanceof Error && cause.name === 'TimeoutError') return 'Its description did not arrive in time.';
  if (cause instanceof SyntaxError) return 'Its description is not JSON.';
  if (detail === 'response too large') return `Its description is larger than ${CLIENT_DOCUMENT_MAX_BYTES / 1024} KB, the most this directory reads.`;
  const status = typeof detail === 'string' ? /^unexpected response status (\d{3})$/.exec(detail) : null;
  if (status) return `Its description's address answered with HTTP status ${status[1]} instead of the description (redirects are not followed).`;
  return undefined;
}
