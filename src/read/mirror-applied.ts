import { tracing } from '../util/tracing.ts';
import type { ChangeDelivery } from './mirror-versions.ts';

export type ChangeListener = (version: number, delivery?: ChangeDelivery) => void;

/** A sync that moved the mirror to another version. */
export interface AppliedVersion {
  from: number;
  to: number;
  /** Whether the whole projection was loaded (rather than the changes since `from`). */
  full: boolean;
  /** The way of the version's changes, when it came as a delta carrying the projector's times. */
  delivery: ChangeDelivery | undefined;
  /** The traceparent of the projector's batch that wrote it, when it traced it. */
  traceparent: string | null;
  /** When the sync began (ms since the epoch), read only while traces are on; 0 otherwise. */
  began: number;
}

/**
 * What follows a version applied, once its transaction has ended: with traces on, a span for
 * this process applying it, then each listener (in the order they came) with the new version and
 * its delivery. A listener that throws stops the ones after it, and the sync fails.
 */
export class AppliedVersions {
  private readonly listeners = new Set<ChangeListener>();

  /** Adds a listener; the function returned removes it. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  announce(applied: AppliedVersion): void {
    if (applied.began !== 0) traceApply(applied);
    for (const l of this.listeners) l(applied.to, applied.delivery);
  }
}

/**
 * With traces on, a span for this process applying a version, in the trace of the projector's
 * batch that wrote it (and linked to it): one change's way, from its batch to every process,
 * is one trace. A process that applies several versions at once joins the last one's.
 */
function traceApply({ began, from, to, full, traceparent, delivery }: AppliedVersion): void {
  const t = tracing();
  if (t === undefined) return;
  const batch = t.spanContextOf(traceparent ?? undefined);
  const span = t.tracer.startSpan(
    'projection apply',
    {
      kind: t.kind.consumer,
      startTime: began,
      attributes: {
        'catalog.projection.version': to,
        'catalog.projection.version_from': from,
        'catalog.projection.full_load': full,
        ...(delivery && { 'catalog.change.projected_seconds': delivery.projected, 'catalog.change.delivery_seconds': delivery.applied }),
      },
      ...(batch && { links: [t.link(batch)] }),
    },
    t.contextWith(batch),
  );
  span.end();
}
