import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Attributes, Span } from '@opentelemetry/api';
import { tracing, type Tracing } from '../util/tracing.ts';
import type { ClientAddresses } from './client/client-address.ts';

/**
 * A span per HTTP request, by OpenTelemetry's semantic conventions for HTTP servers, when traces
 * are on (src/util/tracing.ts). The span is begun by a wrapper around the server's one request
 * listener, so the answers of the direct read paths (direct-reads.ts, src/mcp/direct-mcp.ts) are
 * traced as the Fastify path's are; the route is told by whichever path answered
 * (`noteRoute`: Fastify's onRequest hook, the direct paths once they answer). Nothing here runs
 * while traces are off: the composition wraps the listener only when they are on.
 */
const spans = new WeakMap<ServerResponse, { readonly span: Span; readonly method: string }>();

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** The request listener, each request a SERVER span (a client's traceparent is its parent). */
export function traceRequests(listener: RequestListener, t: Tracing, clients: ClientAddresses): RequestListener {
  return (req, res) => {
    const method = req.method && KNOWN_METHODS.has(req.method) ? req.method : '_OTHER';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const attributes: Attributes = {
      'http.request.method': method,
      'url.path': q < 0 ? url : url.slice(0, q),
      'url.scheme': 'encrypted' in req.socket ? 'https' : 'http',
      'network.protocol.version': req.httpVersion,
    };
    if (method === '_OTHER' && req.method) attributes['http.request.method_original'] = req.method;
    const host = req.headers.host;
    if (host) {
      const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
      if (m) {
        attributes['server.address'] = m[1]!;
        if (m[2]) attributes['server.port'] = Number(m[2]);
      }
    } else if (req.socket.localAddress) {
      attributes['server.address'] = req.socket.localAddress;
      if (req.socket.localPort) attributes['server.port'] = req.socket.localPort;
    }
    // The client as budgets see it (TRUST_PROXY), and the peer the socket is connected to.
    attributes['client.address'] = clients.of(req).address;
    if (req.socket.remoteAddress) attributes['network.peer.address'] = req.socket.remoteAddress;
    const agent = req.headers['user-agent'];
    if (agent) attributes['user_agent.original'] = agent;
    const header = req.headers.traceparent;
    const parent = t.spanContextOf(typeof header === 'string' ? header : undefined);
    const span = t.tracer.startSpan(method === '_OTHER' ? 'HTTP' : method, { kind: t.kind.server, attributes }, t.contextWith(parent));
    spans.set(res, { span, method });
    res.once('close', () => {
      const status = res.statusCode;
      span.setAttribute('http.response.status_code', status);
      if (!res.writableFinished) t.fail(span, 'aborted', 'the connection closed before the answer was sent');
      else if (status >= 500) t.fail(span, String(status));
      span.end();
    });
    listener(req, res);
  };
}

/** Names the route (its pattern) of the request `res` answers, and the span after it. */
export function noteRoute(res: ServerResponse, route: string | undefined): void {
  const traced = spans.get(res);
  if (!traced || !route) return;
  traced.span.setAttribute('http.route', route);
  traced.span.updateName(`${traced.method === '_OTHER' ? 'HTTP' : traced.method} ${route}`);
}

/** Whether traces are on: a caller building a span's attributes asks first. */
export function requestsTraced(): boolean {
  return tracing() !== undefined;
}

/**
 * Starts a span inside the request `res` answers, ended when the answer is sent; undefined when
 * the request is not traced.
 */
export function startRequestChild(res: ServerResponse, name: string, attributes: Attributes): Span | undefined {
  const t = tracing();
  if (t === undefined) return undefined;
  const parent = spans.get(res);
  if (!parent) return undefined;
  const span = t.tracer.startSpan(name, { kind: t.kind.internal, attributes }, t.contextWith(parent.span));
  res.once('close', () => {
    if (!res.writableFinished) t.fail(span, 'aborted');
    span.end();
  });
  return span;
}
