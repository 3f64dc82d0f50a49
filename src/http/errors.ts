import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CatalogError, isHeldRefusal, serviceUnavailable } from '../contract/errors.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { ErrorCode, type ErrorBody } from '../contract/schemas.ts';
import { NO_STORE } from './caching.ts';

/**
 * Every error leaves the service as the public Error object: `{code, message}`,
 * plus `data.issues` on a 400. Fastify's own failures (malformed body, unknown route, payload too
 * large, a crash) are mapped onto the same object, so a client never sees HTML, a stack trace or
 * an internal message.
 */
export const METHOD_NOT_ALLOWED = 'METHOD_NOT_ALLOWED';

interface PublicError {
  status: number;
  body: ErrorBody | { code: string; message: string };
}

const MAX_ECHOED_PATH = 200;

/** The request path without its query, shortened so an error never echoes a huge input back. */
export function requestPath(request: FastifyRequest): string {
  const url = request.url;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  return path.length > MAX_ECHOED_PATH ? `${path.slice(0, MAX_ECHOED_PATH)}…` : path;
}

function isFastifyError(err: unknown): err is FastifyError {
  return err instanceof Error && typeof (err as FastifyError).statusCode === 'number';
}

/**
 * The error as the service reports it: a database that cannot be reached is SERVICE_UNAVAILABLE
 * (503, retry shortly), whatever step of the request met it.
 */
function catalogErrorOf(err: unknown): unknown {
  return !(err instanceof CatalogError) && isDatabaseUnavailable(err) ? serviceUnavailable(err) : err;
}

/** The public form of any error; only CatalogError messages are shown as they are. */
export function publicError(error: unknown): PublicError {
  const err = catalogErrorOf(error);
  if (err instanceof CatalogError) return { status: err.status, body: err.toBody() };
  const status = isFastifyError(err) ? (err.statusCode ?? 500) : 500;
  const code = isFastifyError(err) ? err.code : undefined;
  if (status === 400) {
    const aboutBody = typeof code === 'string' && code.startsWith('FST_ERR_CTP');
    const isJson = err instanceof SyntaxError || code === 'FST_ERR_CTP_INVALID_JSON_BODY';
    const message = isJson ? 'must be valid JSON' : code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'must not be empty' : 'is malformed';
    const where = aboutBody || isJson ? 'body' : 'request';
    return {
      status,
      body: {
        code: ErrorCode.BAD_REQUEST,
        message: `Invalid request: '${where}' was rejected; see data.issues.`,
        data: { issues: [{ path: [where], message }] },
      },
    };
  }
  if (status === 404) return { status, body: { code: ErrorCode.NOT_FOUND, message: 'Not found.' } };
  if (status === 405) return { status, body: { code: METHOD_NOT_ALLOWED, message: 'This method is not allowed here.' } };
  if (status === 413) return { status, body: { code: ErrorCode.BAD_REQUEST, message: 'The request body is too large.' } };
  if (status === 415) return { status, body: { code: ErrorCode.BAD_REQUEST, message: 'This Content-Type is not supported here.' } };
  if (status === 429) {
    return { status, body: { code: ErrorCode.TOO_MANY_REQUESTS, message: 'Too many requests: slow down and retry shortly.' } };
  }
  if (status >= 400 && status < 500) {
    return { status, body: { code: ErrorCode.BAD_REQUEST, message: `${STATUS_CODES[status] ?? 'Bad request'}.` } };
  }
  return {
    status: 500,
    body: { code: ErrorCode.INTERNAL_SERVER_ERROR, message: 'The service failed to answer this request. Please retry shortly.' },
  };
}

/** Sends the public error object; errors are never cacheable and carry no validator. */
export function sendError(reply: FastifyReply, status: number, body: PublicError['body']): FastifyReply {
  reply.removeHeader('etag');
  return reply.code(status).header('cache-control', NO_STORE).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/**
 * A CatalogError as the service answers it, whichever scope refuses: its challenge (a credential
 * refused, 401), Retry-After (429, 503) unless a budget's headers carry it already, then the
 * error object. The root error handler sends every CatalogError so, and the MCP route a key it
 * refuses (its own scope answers JSON-RPC errors).
 */
export function sendCatalogError(reply: FastifyReply, err: CatalogError): FastifyReply {
  if (err.challenge !== undefined) reply.header('www-authenticate', err.challenge);
  if (err.retryAfterSeconds !== undefined && !reply.hasHeader('retry-after')) reply.header('retry-after', String(err.retryAfterSeconds));
  return sendError(reply, err.status, err.toBody());
}

/** Installs the error and not-found handlers on the root instance (inherited by every plugin). */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const err = catalogErrorOf(error);
    const { status, body } = publicError(err);
    // Refusals past a cap on held requests are answered, not logged: they come in floods.
    if (isHeldRefusal(err)) request.log.debug({ err: { code: (err as CatalogError).code, message: (err as CatalogError).message } }, 'request refused: too many held open');
    else if (status === 503) request.log.warn({ err: error }, 'request refused: the database cannot be reached');
    else if (status >= 500) request.log.error({ err }, 'request failed');
    else if (!(err instanceof CatalogError)) request.log.info({ err: { code: (err as FastifyError).code, message: (err as Error).message } }, 'request rejected');
    if (err instanceof CatalogError) return sendCatalogError(reply, err);
    return sendError(reply, status, body);
  });
  app.setNotFoundHandler((request, reply) => notFoundRoute(request, reply));
}

/** The answer for a path no route serves: JSON naming the path, never an HTML page. */
export function notFoundRoute(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = requestPath(request);
  const hint = path.startsWith('/api/') ? ' The REST API is described at /api/v1/openapi.json.' : '';
  return sendError(reply, 404, {
    code: ErrorCode.NOT_FOUND,
    message: `No route answers ${request.method} ${JSON.stringify(path)}.${hint}`,
  });
}

/**
 * Failures the router meets before any hook runs (a malformed percent-encoding in the path,
 * say): answered with the same error object, and with CORS on API paths, since no plugin saw
 * the request.
 */
export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0] ?? '';
  const param = path.startsWith('/api/v1/products/') ? 'slug' : 'path';
  const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
  if (path.startsWith('/api/')) reply.header('access-control-allow-origin', '*');
  reply.header('x-content-type-options', 'nosniff');
  return sendError(reply, 400, {
    code: ErrorCode.BAD_REQUEST,
    message: `Invalid request: '${param}' was rejected; see data.issues.`,
    data: {
      issues: [
        {
          path: [param],
          message: tooLong
            ? param === 'slug'
              ? 'must be 1 to 200 characters'
              : 'is too long'
            : 'must be a valid URL path segment (malformed percent-encoding)',
        },
      ],
    },
  });
}

/** How long a refused connection keeps reading what the client still sends before it is cut. */
const LINGER_MS = 5_000;

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (an unknown method, a raw space
 * or control byte in the path, headers or URL over the size limit, a timeout) still get the
 * public error object, with CORS so a browser script can read it. The connection then closes,
 * as Node does for these, but gracefully: the answer goes out with the end of the stream, and
 * what the client is still sending (the rest of a 100 kB URL) is read and dropped until it
 * closes its side, or LINGER_MS at most. Closing at once with unread bytes resets the
 * connection, and the reset can reach the client before it has read the answer.
 */
export function clientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed || socket.writableEnded) return;
  // A connection that sent nothing within the header deadline has no request to answer: it is
  // closed without one (an answer could be read as that of the request a client sends next).
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesRead === 0) {
    socket.destroy();
    return;
  }
  let status = 400;
  let body: ErrorBody = { code: ErrorCode.BAD_REQUEST, message: 'The request is malformed: it is not valid HTTP/1.1.' };
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    body = { code: ErrorCode.BAD_REQUEST, message: 'The request line or headers are too large (the URL included).' };
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    body = { code: ErrorCode.BAD_REQUEST, message: 'The request took too long to arrive.' };
  }
  const text = JSON.stringify(body);
  if (!socket.writable) {
    socket.destroy(err);
    return;
  }
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
      `Cache-Control: no-store\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n${text}`,
  );
  const cut = setTimeout(() => socket.destroy(), LINGER_MS);
  socket.once('close', () => clearTimeout(cut));
  socket.once('end', () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.resume();
}
