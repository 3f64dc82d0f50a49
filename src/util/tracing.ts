import type { Tracing } from './tracing-port.ts';

export type { Tracing } from './tracing-port.ts';

/**
 * OpenTelemetry traces, only when asked for (docs/operating.md#traces): with
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, `startTracing` loads
 * the SDK (tracing-sdk.ts, through `import()`) and `tracing()` answers it; unset, none of the
 * SDK is loaded and `tracing()` is undefined, which is all a hot path asks. Only types are
 * imported here: they vanish from the compiled code.
 *
 * No context manager is installed (an AsyncLocalStorage puts a hook on every promise of the
 * process on Node before 24): a span's parent is passed explicitly, as a Context made by
 * `contextWith` or read from a traceparent.
 */

let active: Tracing | undefined;

/** The process's tracing, or undefined when traces were not asked for. */
export function tracing(): Tracing | undefined {
  return active;
}

/** Whether the environment asks for traces (the OTLP endpoint, unless the SDK is disabled). */
export function tracesRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts exporting traces when the environment asks for them; `process` names this process's
 * part (serve, api, projector) as a resource attribute. OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES override the defaults; the exporter reads its OTEL_EXPORTER_OTLP_*.
 */
export async function startTracing(process: string): Promise<Tracing | undefined> {
  if (active || !tracesRequested()) return active;
  const { createTracing } = await import('./tracing-sdk.ts');
  active = createTracing(process);
  return active;
}

/** Flushes and stops; a process stopping calls it last. */
export async function stopTracing(): Promise<void> {
  const t = active;
  active = undefined;
  await t?.shutdown();
}
