import type { Attributes, Context, Link, Span, SpanContext, SpanKind, Tracer } from '@opentelemetry/api';

/** What the service uses of OpenTelemetry when traces are on (tracing.ts starts it, tracing-sdk.ts makes it). */
export interface Tracing {
  readonly tracer: Tracer;
  /** The W3C traceparent of a span, to hand to another process. */
  traceparent(span: Span): string;
  /** The span context a traceparent names; undefined when it is not a valid one. */
  spanContextOf(traceparent: string | undefined): SpanContext | undefined;
  /** A context whose span is `parent` (a span, or a remote span's context), for starting a child. */
  contextWith(parent: Span | SpanContext | undefined): Context;
  readonly kind: { readonly server: SpanKind; readonly internal: SpanKind; readonly consumer: SpanKind; readonly producer: SpanKind };
  /** Marks a span failed, with the standard error.type. */
  fail(span: Span, errorType: string, message?: string): void;
  link(context: SpanContext, attributes?: Attributes): Link;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}
