import os from 'node:os';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type SpanContext } from '@opentelemetry/api';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { SERVICE_VERSION } from './version.ts';
import type { Tracing } from './tracing-port.ts';

/**
 * The OpenTelemetry SDK, loaded by tracing.ts only when traces are asked for. The official
 * packages read the standard settings themselves: the exporter its OTEL_EXPORTER_OTLP_*
 * (endpoint, headers, timeout, compression), the provider OTEL_TRACES_SAMPLER(_ARG) and the
 * span limits, the batch processor OTEL_BSP_*, the resource OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES. The protocol is OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL: `http/json`,
 * or `http/protobuf` (the default).
 */
export function createTracing(part: string): Tracing {
  const exporter = otlpExporter();
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: 'catalog',
    [ATTR_SERVICE_VERSION]: SERVICE_VERSION,
    'service.instance.id': `${os.hostname()}:${process.pid}`,
    'process.pid': process.pid,
    'catalog.process': part,
  }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('catalog', SERVICE_VERSION);
  return {
    tracer,
    traceparent(span) {
      const c = span.spanContext();
      return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
    },
    spanContextOf(traceparent) {
      const m = traceparent === undefined ? null : /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent.trim());
      if (!m || m[1] === 'ff') return undefined;
      const c: SpanContext = { traceId: m[2]!, spanId: m[3]!, traceFlags: parseInt(m[4]!, 16), isRemote: true };
      return trace.isSpanContextValid(c) ? c : undefined;
    },
    contextWith(parent) {
      if (parent === undefined) return ROOT_CONTEXT;
      return 'spanContext' in parent ? trace.setSpan(ROOT_CONTEXT, parent) : trace.setSpanContext(ROOT_CONTEXT, parent);
    },
    kind: { server: SpanKind.SERVER, internal: SpanKind.INTERNAL, consumer: SpanKind.CONSUMER, producer: SpanKind.PRODUCER },
    fail(span: Span, errorType: string, message?: string) {
      span.setAttribute(ATTR_ERROR_TYPE, errorType);
      span.setStatus({ code: SpanStatusCode.ERROR, ...(message !== undefined && { message }) });
    },
    link(spanContext, attributes) {
      return { context: spanContext, ...(attributes && { attributes }) };
    },
    async shutdown() {
      await provider.forceFlush().catch(() => undefined);
      await provider.shutdown().catch(() => undefined);
      trace.disable();
      context.disable();
    },
  };
}

function otlpExporter(): SpanExporter {
  const protocol = (process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || process.env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  if (protocol === 'http/json') return new JsonExporter();
  if (protocol !== 'http/protobuf') throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use http/protobuf or http/json`);
  return new ProtobufExporter();
}
