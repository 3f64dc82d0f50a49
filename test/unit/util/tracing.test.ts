import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { tracesRequested } from '../../../src/util/tracing.ts';
import { createTracing } from '../../../src/util/tracing-sdk.ts';

describe('tracesRequested', () => {
  it('asks for traces only with an OTLP endpoint, unless the SDK or the exporter is turned off', () => {
    expect(tracesRequested({})).toBe(false);
    expect(tracesRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBe(false);
    expect(tracesRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBe(false);
    expect(tracesRequested({ OTEL_SERVICE_NAME: 'catalog' })).toBe(false);
    expect(tracesRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracesRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracesRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(tracesRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });
});

describe('traceparent', () => {
  it('names a span so that another process can start a child of it, and refuses what is not one', async () => {
    // The spans go to a receiver of the test's own on loopback, which takes them and says no more.
    const sink = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}')));
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
    const saved = { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol: process.env.OTEL_EXPORTER_OTLP_PROTOCOL };
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    const t = createTracing('test');
    try {
      const span = t.tracer.startSpan('batch');
      const header = t.traceparent(span);
      expect(header).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      const remote = t.spanContextOf(header);
      expect(remote).toMatchObject({ traceId: span.spanContext().traceId, spanId: span.spanContext().spanId, isRemote: true });
      const child = t.tracer.startSpan('apply', {}, t.contextWith(remote));
      expect(child.spanContext().traceId).toBe(span.spanContext().traceId);
      child.end();
      span.end();
      for (const bad of [undefined, '', 'nonsense', `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01`, `ff-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, `00-${'A'.repeat(32)}-${'b'.repeat(16)}-01`]) {
        expect(t.spanContextOf(bad)).toBeUndefined();
      }
    } finally {
      await t.shutdown();
      sink.close();
      for (const [name, value] of [['OTEL_EXPORTER_OTLP_ENDPOINT', saved.endpoint], ['OTEL_EXPORTER_OTLP_PROTOCOL', saved.protocol]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
