import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, parseAnswer, received, startApiProcess, type ApiProcess } from '../helpers/api-process.ts';
import { runCatalogCommand } from '../helpers/review.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/**
 * Slow and greedy clients against `catalog api` run as a child process over real sockets
 * (docs/connections.md), with deadlines and caps made small through its settings so the file
 * stays fast: headers due within 2 s, a whole request within 4 s; 2 long polls per address, 3
 * per consumer key, 6 in the process; and a limit of 256 file descriptors, to run it out of
 * them. The defaults are checked in test/unit/config/connection-settings.test.ts.
 */

const HEADERS_TIMEOUT_SECONDS = 2;
const REQUEST_TIMEOUT_SECONDS = 4;
const FILE_LIMIT = 256;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function get(port: number, path: string, opts: { localAddress?: string; key?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = opts.key ? { authorization: `Bearer ${opts.key}` } : {};
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, localAddress: opts.localAddress ?? '127.0.0.1', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

describe('slow clients, held long polls and running out of file descriptors', () => {
  let stack: TestStack;
  let api: ApiProcess;
  let cursor: string;
  let key: string;
  const held: net.Socket[] = [];

  /** A long poll left waiting on a socket of its own (nothing changes while it waits). */
  async function holdPoll(localAddress: string, withKey?: string): Promise<{ socket: net.Socket; answered: () => string }> {
    const socket = await connect(api.port, localAddress);
    held.push(socket);
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    const auth = withKey ? `Authorization: Bearer ${withKey}\r\n` : '';
    socket.write(`GET /api/v1/changes?since=${encodeURIComponent(cursor)}&wait=30 HTTP/1.1\r\nHost: catalog.test\r\n${auth}\r\n`);
    return { socket, answered: () => text };
  }

  beforeAll(async () => {
    stack = await startTestStack({ listen: false });
    const env = {
      DATABASE_URL: stack.db.url,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_CHANGES_PER_MIN: '10000',
      RATE_LIMIT_OTHER_PER_MIN: '10000',
      HEADERS_TIMEOUT_SECONDS: String(HEADERS_TIMEOUT_SECONDS),
      REQUEST_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_SECONDS),
      LONG_POLLS_PER_ADDRESS: '2',
      LONG_POLLS_PER_KEY: '3',
      LONG_POLLS_MAX: '6',
      EXPORTS_PER_ADDRESS: '1',
    };
    // The key is made beside the start: the process learns of new keys as they are made.
    const [made, started] = await Promise.all([runCatalogCommand(['keys', 'create', 'slow-clients', '--json'], env), startApiProcess(env, { fileLimit: FILE_LIMIT })]);
    api = started;
    expect(made.code, made.stderr).toBe(0);
    key = (JSON.parse(made.stdout) as { key: string }).key;
    cursor = (JSON.parse((await get(api.port, '/api/v1/changes')).body) as { cursor: string }).cursor;
  }, 120_000);

  afterAll(async () => {
    for (const s of held) s.destroy();
    await api?.stop();
    await stack?.stop();
  });

  it('answers 408 and closes a connection whose headers trickle in, one line every half second', async () => {
    const socket = await connect(api.port);
    const answer = received(socket);
    const started = Date.now();
    socket.write('GET /api/v1/categories HTTP/1.1\r\nHost: catalog.test\r\n');
    // 40 lines would take 20 s: the deadline cuts the request long before.
    let sent = 0;
    while (sent < 40 && !socket.destroyed && socket.writable) {
      await sleep(500);
      if (socket.destroyed || !socket.writable) break;
      socket.write(`X-Slow-${sent}: still coming\r\n`);
      sent++;
    }
    const { text, closedAt } = await answer;
    console.log(`headers trickling: cut after ${(closedAt - started) / 1000} s (HEADERS_TIMEOUT_SECONDS ${HEADERS_TIMEOUT_SECONDS}, checked every second)`);
    expect(sent).toBeLessThan(40);
    const reply = parseAnswer(text);
    expect(reply.status).toBe(408);
    expect(reply.headers['connection']).toBe('close');
    expect(JSON.parse(reply.body)).toEqual({ code: 'BAD_REQUEST', message: 'The request took too long to arrive.' });
  });

  it('answers 408 and closes a connection whose body trickles in, ten bytes every 300 ms', async () => {
    const socket = await connect(api.port);
    const answer = received(socket);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_categories', arguments: {} }, pad: 'x'.repeat(2000) });
    const started = Date.now();
    socket.write(
      `POST /api/mcp HTTP/1.1\r\nHost: catalog.test\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    // The whole body would take over a minute.
    let offset = 0;
    while (offset < body.length && !socket.destroyed && socket.writable) {
      socket.write(body.slice(offset, offset + 10));
      offset += 10;
      await sleep(300);
    }
    const { text, closedAt } = await answer;
    console.log(`body trickling: cut after ${(closedAt - started) / 1000} s (REQUEST_TIMEOUT_SECONDS ${REQUEST_TIMEOUT_SECONDS}, checked every second)`);
    expect(offset).toBeLessThan(body.length);
    const reply = parseAnswer(text);
    expect(reply.status).toBe(408);
    expect(JSON.parse(reply.body)).toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('closes a connection that sends nothing, without an answer', async () => {
    const socket = await connect(api.port);
    const { text } = await received(socket);
    expect(text).toBe('');
  });

  it('keeps an idle keep-alive connection past the header deadline and answers its next request', async () => {
    const socket = await connect(api.port);
    held.push(socket);
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.write('GET /healthz HTTP/1.1\r\nHost: catalog.test\r\n\r\n');
    await expect.poll(() => text.includes('\r\n\r\n')).toBe(true);
    expect(parseAnswer(text).status).toBe(200);
    await sleep((HEADERS_TIMEOUT_SECONDS + 2) * 1000);
    text = '';
    socket.write('GET /api/v1/categories HTTP/1.1\r\nHost: catalog.test\r\n\r\n');
    await expect.poll(() => parseAnswer(text).status).toBe(200);
    expect(socket.destroyed).toBe(false);
  });

  it('caps long polls per address (429), per consumer key instead for a keyed one, and in all (503), each with Retry-After', async () => {
    const a = '127.0.3.1';
    const polls = [await holdPoll(a), await holdPoll(a)];
    // The address holds 2: a third waiting poll is refused; one that does not wait is answered.
    const third = await get(api.port, `/api/v1/changes?since=${encodeURIComponent(cursor)}&wait=1`, { localAddress: a });
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBe('5');
    expect(third.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(third.body)).toEqual({
      code: 'TOO_MANY_REQUESTS',
      message: 'Too many long polls open from this address at once (at most 2): wait for one to answer before opening another, or retry in about 5 s.',
    });
    expect((await get(api.port, `/api/v1/changes?since=${encodeURIComponent(cursor)}`, { localAddress: a })).status).toBe(200);

    // A keyed poll counts against its key (3), not the address that sends it.
    const keyed = [await holdPoll(a, key), await holdPoll(a, key), await holdPoll(a, key)];
    const fourth = await get(api.port, `/api/v1/changes?since=${encodeURIComponent(cursor)}&wait=1`, { localAddress: '127.0.3.9', key });
    expect(fourth.status).toBe(429);
    expect(JSON.parse(fourth.body).message).toContain('long polls open with this key at once (at most 3)');

    // 5 held in all; one more from another address makes 6, the process's cap: then 503.
    polls.push(await holdPoll('127.0.3.2'));
    await expect
      .poll(async () => (await get(api.port, `/api/v1/changes?since=${encodeURIComponent(cursor)}&wait=1`, { localAddress: '127.0.3.3' })).status)
      .toBe(503);
    const full = await get(api.port, `/api/v1/changes?since=${encodeURIComponent(cursor)}&wait=1`, { localAddress: '127.0.3.3' });
    expect(full.headers['retry-after']).toBe('5');
    expect(JSON.parse(full.body)).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The service holds as many long polls open as it allows right now: retry in about 5 s (or poll without wait).',
    });
    // What the operator sees: the polls held, and the refusals by the cap met.
    const metrics = (await get(api.port, '/metrics')).body;
    const value = (series: string) => Number(metrics.split('\n').find((l) => l.startsWith(`${series} `))?.split(' ')[1]);
    expect(value('catalog_held_requests{kind="long_poll"}')).toBe(6);
    expect(value('catalog_held_requests{kind="export"}')).toBe(0);
    expect(value('catalog_held_requests_refused_total{kind="long_poll",cap="holder"}')).toBe(2);
    expect(value('catalog_held_requests_refused_total{kind="long_poll",cap="process"}')).toBeGreaterThanOrEqual(2);

    // A client that goes away gives its place back: the address may wait again (answered after 1 s).
    polls[0]!.socket.destroy();
    await expect
      .poll(async () => (await get(api.port, `/api/v1/changes?since=${encodeURIComponent(cursor)}&wait=1`, { localAddress: a })).status, { timeout: 10_000 })
      .toBe(200);
    // Nothing held was answered or dropped meanwhile.
    for (const p of [...polls.slice(1), ...keyed]) {
      expect(p.answered()).toBe('');
      expect(p.socket.destroyed).toBe(false);
    }
    for (const p of [...polls, ...keyed]) p.socket.destroy();
  });

  it('gives an export\'s place back once it is sent (one at a time per address)', async () => {
    for (let i = 0; i < 3; i++) {
      const answer = await get(api.port, '/api/v1/export');
      expect(answer.status).toBe(200);
      expect(answer.body.trim().split('\n').length).toBeGreaterThan(0);
    }
  });

  it('holds no more connections than its descriptors allow: closes new ones, says so, serves the open ones and recovers', { timeout: 60_000 }, async () => {
    // 256 descriptors less the reserve of 128 (src/http/connection-limits.ts).
    const cap = FILE_LIMIT - 128;
    const open: net.Socket[] = [];
    let letGo = false;
    let closedByServer = 0;
    for (let i = 0; i < cap + 50; i++) {
      const socket = await connect(api.port);
      socket.on('error', () => undefined);
      socket.once('close', () => letGo || closedByServer++);
      open.push(socket);
    }
    // The kernel completes every connection; those past the cap the process closes at once.
    await expect.poll(() => closedByServer).toBeGreaterThanOrEqual(50);
    expect(closedByServer).toBeLessThan(cap + 50);
    await expect.poll(() => api.output(), { timeout: 10_000 }).toContain('as many as allowed');
    const lines = api.output().split('\n').filter((l) => l.includes('as many as allowed'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 50, maxConnections: cap, fileDescriptorLimit: FILE_LIMIT });
    expect(lines[0]).toContain('raise MAX_CONNECTIONS and the file-descriptor limit');
    // The ones it took are served, the database included (it kept descriptors for it).
    const taken = open.find((s) => !s.destroyed)!;
    let text = '';
    taken.on('data', (d: Buffer) => (text += d.toString('latin1')));
    taken.write('GET /readyz HTTP/1.1\r\nHost: catalog.test\r\n\r\n');
    await expect.poll(() => parseAnswer(text).status).toBe(200);
    // Let go: new connections are taken again, and the process never ran out of descriptors.
    letGo = true;
    for (const s of open) s.destroy();
    await expect.poll(async () => (await get(api.port, '/api/v1/categories').catch(() => ({ status: 0 }))).status, { timeout: 10_000 }).toBe(200);
    expect((await get(api.port, '/readyz')).status).toBe(200);
    expect(api.output()).not.toContain('out of file descriptors');
    expect(api.output()).not.toContain('EMFILE');
  });
});
