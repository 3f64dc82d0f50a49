import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiProcess, type ApiProcess } from '../helpers/api-process.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { FIXTURE_IDS, seedFixtureCatalog } from '../helpers/fixtures.ts';
import { updateListing } from '../helpers/write-model.ts';

/**
 * Traces, end to end (docs/operating.md#traces): a `catalog projector` and two `catalog api`
 * processes with OTEL_EXPORTER_OTLP_ENDPOINT set to an OTLP/HTTP receiver of the test's own on
 * loopback (JSON protocol). For one change made by the test, the receiver gets the projector's
 * batch span (the change among its events, with its lag), and from each API process a span
 * applying that version in the batch's trace; HTTP request spans with the semantic conventions'
 * attributes, from the direct read path; and an MCP tool call's span inside its request's.
 * Without the variable, a process loads no OpenTelemetry module beyond the API package
 * prom-client requires anyway.
 */
const CLI = path.resolve('bin/catalog.js');
const PROBE = path.resolve('test/helpers/module-probe.mjs');
const SLUG = 'pixel-forge';
const PUNCHLINE = 'Traced from commit to every process';

type Value = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: unknown };
interface KeyValue {
  key: string;
  value: Value;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  events?: Array<{ name: string; attributes?: KeyValue[] }>;
  links?: Array<{ traceId: string; spanId: string }>;
  status?: { code?: number };
}
interface ReceivedSpan extends OtlpSpan {
  resource: Record<string, unknown>;
  attrs: Record<string, unknown>;
}

function valueOf(v: Value): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return v.arrayValue;
}

const attrsOf = (kvs: KeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, valueOf(kv.value)]));

/** An OTLP/HTTP receiver (JSON protocol) on loopback, keeping every span it is sent. */
function startReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; posts: () => number; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  let posts = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      posts++;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
      };
      for (const rs of body.resourceSpans) {
        const resource = attrsOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, resource, attrs: attrsOf(s.attributes) });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, spans, posts: () => posts, close: () => new Promise<void>((r) => server.close(() => r())) });
    }),
  );
}

let db: TestDatabase;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let projector: ChildProcess | undefined;
const apis: ApiProcess[] = [];
let traceEnv: Record<string, string>;

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`never received: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  await seedFixtureCatalog(db.pool);
  receiver = await startReceiver();
  traceEnv = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_SERVICE_NAME: 'catalog-under-test',
  };
  const child = spawn(process.execPath, [CLI, 'projector'], {
    env: { ...process.env, ...traceEnv, DATABASE_URL: db.url, SITE_URL: 'https://directory.example', MEILI_URL: '', REDIS_URL: '', PROJECTOR_POLL_MS: '100', LOG_LEVEL: 'info', LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  projector = child;
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (/"projector is leading"/.test(line)) resolve();
    });
    child.once('exit', (code, signal) => reject(new Error(`projector exited (${code ?? signal}) while starting`)));
  });
  for (let i = 0; i < 2; i++) apis.push(await startApiProcess({ ...traceEnv, DATABASE_URL: db.url, REDIS_URL: '' }));
}, 180_000);

afterAll(async () => {
  await Promise.all(apis.map((a) => a.stop()));
  if (projector && projector.exitCode === null && projector.signalCode === null) {
    const exited = new Promise<void>((r) => projector!.once('exit', () => r()));
    projector.kill('SIGTERM');
    await exited;
  }
  await receiver?.close();
  await db?.drop();
});

describe('traces, with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it("follow one change from the projector's batch to every API process, and name requests and tool calls by the conventions", async () => {
    await updateListing(db.pool, FIXTURE_IDS[SLUG]!, { punchline: PUNCHLINE });
    // Each API process shows the change: read through the direct read path.
    for (const api of apis) {
      await until(`the change on ${api.url}`, async () => {
        const r = await fetch(`${api.url}/api/v1/products/${SLUG}`, { headers: { 'user-agent': 'traces-test' } });
        const body = (await r.json()) as { punchline?: string };
        return body.punchline === PUNCHLINE ? true : undefined;
      });
    }

    // The projector's batch carrying the change, with the change's lag.
    const batch = await until('the batch span', () =>
      receiver.spans.find((s) => s.name === 'projector batch' && s.events?.some((e) => attrsOf(e.attributes)['catalog.listing.id'] === FIXTURE_IDS[SLUG])),
    );
    expect(batch.resource).toMatchObject({ 'service.name': 'catalog-under-test', 'catalog.process': 'projector', 'process.pid': projector!.pid });
    const change = attrsOf(batch.events!.find((e) => attrsOf(e.attributes)['catalog.listing.id'] === FIXTURE_IDS[SLUG])!.attributes);
    expect(change['catalog.change.lag_seconds']).toEqual(expect.any(Number));
    expect(change['catalog.change.lag_seconds']).toBeGreaterThanOrEqual(0);
    expect(batch.attrs).toMatchObject({ 'catalog.projector.changes': expect.any(Number), 'catalog.projection.version': expect.any(Number), 'catalog.change.lag_seconds.max': expect.any(Number) });
    const version = batch.attrs['catalog.projection.version'];

    // Each API process's span applying that version: in the batch's trace, a child of it, linked to it.
    for (const api of apis) {
      const apply = await until(`the apply span of pid ${api.pid}`, () =>
        receiver.spans.find((s) => s.name === 'projection apply' && s.resource['process.pid'] === api.pid && s.attrs['catalog.projection.version'] === version),
      );
      expect(apply.resource).toMatchObject({ 'catalog.process': 'api', 'service.name': 'catalog-under-test' });
      expect(apply.traceId).toBe(batch.traceId);
      expect(apply.parentSpanId).toBe(batch.spanId);
      expect(apply.links).toEqual([expect.objectContaining({ traceId: batch.traceId, spanId: batch.spanId })]);
    }

    // The reads above: HTTP server spans (kind 2) by the semantic conventions, from the direct path.
    const [first] = apis;
    const read = await until('an HTTP request span', () =>
      receiver.spans.find((s) => s.resource['process.pid'] === first!.pid && s.attrs['url.path'] === `/api/v1/products/${SLUG}` && s.attrs['http.response.status_code'] === 200),
    );
    expect(read.kind).toBe(2);
    expect(read.name).toBe('GET /api/v1/products/:slug');
    expect(read.attrs).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/api/v1/products/:slug',
      'url.path': `/api/v1/products/${SLUG}`,
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'server.port': first!.port,
      'client.address': '127.0.0.1',
      'user_agent.original': 'traces-test',
      'network.protocol.version': '1.1',
    });

    // A route only Fastify answers (unknown slug, 404) names its route too.
    await fetch(`${first!.url}/api/v1/products/no-such-product`);
    const missing = await until('a 404 span', () => receiver.spans.find((s) => s.resource['process.pid'] === first!.pid && s.attrs['url.path'] === '/api/v1/products/no-such-product'));
    expect(missing.attrs).toMatchObject({ 'http.route': '/api/v1/products/:slug', 'http.response.status_code': 404 });

    // MCP tool calls, by the direct MCP path and (a query string sends it there) by the Fastify
    // route, each a span inside its request's.
    for (const suffix of ['', '?via=fastify']) {
      const r = await fetch(`${first!.url}/api/mcp${suffix}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: suffix ? 12 : 11, method: 'tools/call', params: { name: suffix ? 'list_categories' : 'get_product', arguments: suffix ? {} : { slug: SLUG } } }),
      });
      expect(r.status).toBe(200);
      await r.text();
    }
    for (const [tool, id] of [['get_product', '11'], ['list_categories', '12']] as const) {
      const call = await until(`the ${tool} span`, () => receiver.spans.find((s) => s.name === `tools/call ${tool}` && s.resource['process.pid'] === first!.pid));
      expect(call.attrs).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': tool, 'gen_ai.operation.name': 'execute_tool', 'jsonrpc.request.id': id });
      const request = await until(`the request of ${tool}`, () => receiver.spans.find((s) => s.spanId === call.parentSpanId));
      expect(request.traceId).toBe(call.traceId);
      expect(request.attrs).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/api/mcp', 'url.path': '/api/mcp', 'http.response.status_code': 200 });
    }
  }, 120_000);
});

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  /** Starts `catalog api` from the sources under the module probe; returns what it loaded of OpenTelemetry after it stopped. */
  async function openTelemetryModulesLoaded(env: Record<string, string>): Promise<string[]> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'catalog-probe-'));
    const file = path.join(dir, 'loaded.txt');
    try {
      const api = await startApiProcess({
        DATABASE_URL: db.url,
        REDIS_URL: '',
        CATALOG_RUNTIME: 'sources',
        NODE_OPTIONS: `--import=${PROBE}`,
        MODULE_PROBE_FILE: file,
        MODULE_PROBE_MATCH: '/node_modules/@opentelemetry/',
        ...env,
      });
      // A request and a change applied: the hot paths ran.
      expect((await fetch(`${api.url}/api/v1/products/${SLUG}`)).status).toBe(200);
      await api.stop();
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        // nothing written: nothing loaded
      }
      return text.split('\n').filter(Boolean);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  // prom-client's default process metrics require the API package (a no-op without an SDK) for
  // exemplars whether traces are on or not: every other OpenTelemetry module is left out.
  const beyondTheApi = (lines: string[]) => lines.filter((l) => !l.includes('/@opentelemetry/api/'));

  it('loads no OpenTelemetry SDK or exporter module (and the probe does see them when the variable is set)', async () => {
    const without = await openTelemetryModulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' });
    expect(beyondTheApi(without)).toEqual([]);
    const withTraces = await openTelemetryModulesLoaded(traceEnv);
    expect(beyondTheApi(withTraces).some((l) => l.includes('/@opentelemetry/sdk-trace-base/'))).toBe(true);
    expect(withTraces.some((l) => l.includes('/@opentelemetry/exporter-trace-otlp-http/'))).toBe(true);
  }, 180_000);
});
