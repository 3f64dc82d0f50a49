/**
 * A baseline for the benchmark, run as a process of its own: a bare Fastify route on the same
 * machine, answering either `{"hello":"world"}` (serialized per request, as Fastify's own
 * benchmark does) or a precomputed body read from a file (a real 20-product search page); or,
 * with no framework at all, Node's own HTTP server writing a real product answer: the headers the
 * service sent for it (names, values and order, a fresh request id each time) and its body. That
 * one is what answering a product costs on this machine with nothing of ours in the way.
 *
 *   node bin/run-ts.js bench/baseline-server.ts hello
 *   node bin/run-ts.js bench/baseline-server.ts body FILE
 *   node bin/run-ts.js bench/baseline-server.ts answer FILE   (JSON: { headers: [[name, value]…], body: base64 })
 *
 * Prints `baseline listening on http://127.0.0.1:PORT` and stops on SIGTERM/SIGINT.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';

const [mode, file] = process.argv.slice(2);
if (mode !== 'hello' && !((mode === 'body' || mode === 'answer') && file)) {
  console.error('usage: baseline-server.ts hello | body FILE | answer FILE');
  process.exit(2);
}

if (mode === 'answer') {
  const answer = JSON.parse(readFileSync(file!, 'utf8')) as { headers: [string, string][]; body: string };
  const body = Buffer.from(answer.body, 'base64');
  // Node adds these itself; the request id is fresh per answer, as the service makes it.
  const headers = answer.headers.filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name));
  const server = http.createServer((_req, res) => {
    const head: string[] = [];
    for (const [name, value] of headers) head.push(name, name === 'x-request-id' ? randomUUID() : value);
    res.writeHead(200, head);
    res.end(body);
  });
  // The service's keep-alive, so the Keep-Alive header matches too.
  server.keepAliveTimeout = 72_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`baseline listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => server.close(() => process.exit(0)));
} else {
  await startFastify(mode, file);
}

async function startFastify(mode: string, file: string | undefined): Promise<void> {
const app = Fastify({ logger: false });
if (mode === 'hello') {
  app.get('/', async () => ({ hello: 'world' }));
} else {
  const body = readFileSync(file!, 'utf8');
  app.get('/', (_request, reply) => {
    reply.header('content-type', 'application/json; charset=utf-8').send(body);
  });
}

const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`baseline listening on ${url}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
}
