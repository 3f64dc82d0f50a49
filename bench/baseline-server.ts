/**
 * A baseline for the benchmark, run as a process of its own: a bare Fastify route on the same
 * machine, answering either `{"hello":"world"}` (serialized per request, as Fastify's own
 * benchmark does) or a precomputed body read from a file (a real 20-product search page).
 *
 *   node bin/run-ts.js bench/baseline-server.ts hello
 *   node bin/run-ts.js bench/baseline-server.ts body FILE
 *
 * Prints `baseline listening on http://127.0.0.1:PORT` and stops on SIGTERM/SIGINT.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const [mode, file] = process.argv.slice(2);
if (mode !== 'hello' && !(mode === 'body' && file)) {
  console.error('usage: baseline-server.ts hello | body FILE');
  process.exit(2);
}

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
