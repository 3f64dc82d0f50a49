import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { UNAVAILABLE_RETRY_SECONDS } from '../contract/errors.ts';
import { ErrorCode } from '../contract/schemas.ts';
import { publicError } from '../http/errors.ts';
import { CROSS_SITE_FORM } from './maker-session.ts';
import { ProblemPage } from './components/problem-page.tsx';
import { sendPrivatePage } from './render.ts';

/**
 * Errors on the maker pages are pages too: a form refused for its CSRF token, a body too large,
 * too many requests, a failure. The visitor reads what happened and what to do; nothing of the
 * internals is shown.
 */
export function sendPageError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err.code === 'FST_CSRF_INVALID_TOKEN' || err.code === 'FST_CSRF_MISSING_SECRET' || err.code === CROSS_SITE_FORM) {
    return sendPrivatePage(
      reply,
      <ProblemPage
        title="This form has expired"
        message="The form was sent without its security token, from another site, or from before you signed in or out. Nothing was changed. Go back, reload the page and try again."
        session={null}
      />,
      { status: 403 },
    );
  }
  const { status } = publicError(err);
  if (status === 503) {
    request.log.warn({ err }, 'page refused: the database cannot be reached');
    return sendPrivatePage(
      reply.header('retry-after', String(UNAVAILABLE_RETRY_SECONDS)),
      <ProblemPage
        title="The directory is briefly unavailable"
        message={`Its database cannot be reached right now, so this could not be done (${ErrorCode.SERVICE_UNAVAILABLE}). Go back and try again in a few seconds.`}
        session={null}
      />,
      { status },
    );
  }
  if (status >= 500) request.log.error({ err }, 'page failed');
  if (status === 429) {
    return sendPrivatePage(reply, <ProblemPage title="Too many requests" message="Slow down and retry in a minute." session={null} />, { status });
  }
  if (status >= 400 && status < 500) {
    return sendPrivatePage(reply, <ProblemPage title="This request cannot be answered" message="The form or address was not understood. Go back and try again." session={null} />, { status });
  }
  return sendPrivatePage(reply, <ProblemPage title="Something went wrong" message="The page could not be shown. Please retry shortly." session={null} />, { status: 500 });
}
