import { randomBytes } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/**
 * A loopback HTTP server answering the two Stripe API calls the Stripe Checkout adapter makes,
 * as Stripe does: `POST /v1/checkout/sessions` (form-encoded, Bearer secret key) and
 * `GET /v1/checkout/sessions/:id`. The service reaches it through STRIPE_API_BASE; nothing leaves
 * the machine. Tests read the requests the SDK sent and decide what each session has become.
 */
interface StandInRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The decoded form body (empty for a GET). */
  form: URLSearchParams;
}

export interface StandInSession {
  id: string;
  object: 'checkout.session';
  mode: string;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'paid' | 'unpaid' | 'no_payment_required';
  url: string | null;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  amount_total: number | null;
  currency: string | null;
  success_url: string | null;
  cancel_url: string | null;
  livemode: false;
}

export interface StripeStandIn {
  /** e.g. http://127.0.0.1:41234: STRIPE_API_BASE */
  readonly url: string;
  readonly requests: StandInRequest[];
  readonly sessions: Map<string, StandInSession>;
  /** The session as Stripe holds it after the maker paid (or began a bank debit: `unpaid`). */
  complete(id: string, paymentStatus?: 'paid' | 'unpaid'): StandInSession;
  /** Adds a session the service did not open (another payment's, say). */
  add(session: Partial<StandInSession>): StandInSession;
  close(): Promise<void>;
}

function sessionId(): string {
  return `cs_test_${randomBytes(12).toString('hex')}`;
}

export async function startStripeStandIn(): Promise<StripeStandIn> {
  const requests: StandInRequest[] = [];
  const sessions = new Map<string, StandInSession>();

  const makeSession = (init: Partial<StandInSession>): StandInSession => {
    const id = init.id ?? sessionId();
    const session: StandInSession = {
      id,
      object: 'checkout.session',
      mode: 'payment',
      status: 'open',
      payment_status: 'unpaid',
      url: `https://checkout.stripe.com/c/pay/${id}`,
      client_reference_id: null,
      metadata: {},
      amount_total: null,
      currency: null,
      success_url: null,
      cancel_url: null,
      livemode: false,
      ...init,
    };
    sessions.set(id, session);
    return session;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, form });
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(6).toString('hex')}` });
        res.end(JSON.stringify(body));
      };
      if (!/^Bearer sk_test_/.test(req.headers.authorization ?? '')) {
        return send(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
      }
      if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
        const metadata: Record<string, string> = {};
        for (const [k, v] of form) {
          const m = /^metadata\[(.+)\]$/.exec(k);
          if (m) metadata[m[1]!] = v;
        }
        const session = makeSession({
          mode: form.get('mode') ?? 'payment',
          client_reference_id: form.get('client_reference_id'),
          metadata,
          amount_total: Number(form.get('line_items[0][price_data][unit_amount]')) * Number(form.get('line_items[0][quantity]') ?? 1),
          currency: form.get('line_items[0][price_data][currency]'),
          success_url: form.get('success_url'),
          cancel_url: form.get('cancel_url'),
        });
        return send(200, session);
      }
      const retrieve = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && retrieve) {
        const session = sessions.get(decodeURIComponent(retrieve[1]!));
        if (!session) {
          return send(404, { error: { type: 'invalid_request_error', code: 'resource_missing', param: 'session', message: `No such checkout.session: '${retrieve[1]}'` } });
        }
        return send(200, session);
      }
      return send(404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${url.pathname}).` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    sessions,
    complete(id, paymentStatus = 'paid') {
      const session = sessions.get(id);
      if (!session) throw new Error(`no session ${id}`);
      session.status = 'complete';
      session.payment_status = paymentStatus;
      session.url = null;
      return session;
    },
    add: makeSession,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A Stripe event as Stripe sends it to a webhook endpoint, with its signed header. */
export function signedEvent(opts: { type: string; object: unknown; secret: string; id?: string; timestamp?: number }): { body: string; signature: string; id: string } {
  const id = opts.id ?? `evt_${randomBytes(12).toString('hex')}`;
  const body = JSON.stringify({
    id,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    type: opts.type,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object: opts.object },
  });
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: opts.secret, ...(opts.timestamp !== undefined && { timestamp: opts.timestamp }) });
  return { body, signature, id };
}
