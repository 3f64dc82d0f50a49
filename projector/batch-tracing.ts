import type { Span } from '@opentelemetry/api';
import { tracing } from '../src/util/tracing.ts';
import type { OutboxRow } from './outbox-reader.ts';

/**
 * A span per projector batch, when traces are on (docs/operating.md#traces). Its traceparent is
 * written with the version the batch commits (projection.state.traceparent), so every API
 * process's span applying that version joins the batch's trace. Ended once the batch commits:
 * then each change's lag, from its write to the projection's commit, is known; each is an event
 * (`change`, up to OTEL_SPAN_EVENT_COUNT_LIMIT of them), and the batch carries their minimum,
 * maximum and 99th percentile.
 */
export interface BatchTrace {
  readonly span: Span;
  readonly traceparent: string;
}

/** Begins a batch's span; undefined when traces are off. */
export function beginBatch(lane: 'main' | 'interactive', rows: readonly OutboxRow[]): BatchTrace | undefined {
  const t = tracing();
  if (t === undefined) return undefined;
  const span = t.tracer.startSpan('projector batch', {
    kind: t.kind.producer,
    attributes: { 'catalog.projector.lane': lane, 'catalog.projector.changes': rows.length },
  });
  return { span, traceparent: t.traceparent(span) };
}

/** The version the batch wrote. */
export function batchVersion(batch: BatchTrace | undefined, version: number): void {
  batch?.span.setAttribute('catalog.projection.version', version);
}

/** Ends a batch's span: committed (with each change's lag), or failed. */
export function endBatch(batch: BatchTrace | undefined, rows: readonly OutboxRow[], outcome: { committed: true } | { committed: false; error?: unknown }): void {
  if (batch === undefined) return;
  const t = tracing();
  const { span } = batch;
  if (outcome.committed) {
    const at = Date.now();
    const lags = rows.map((r) => Math.max(0, at - r.created_at.getTime()) / 1000);
    rows.forEach((r, i) => {
      span.addEvent('change', {
        'catalog.outbox.txid': r.txid,
        'catalog.outbox.seq': r.seq,
        ...(r.listing_id && { 'catalog.listing.id': r.listing_id }),
        ...(r.category_slug && { 'catalog.category.slug': r.category_slug }),
        'catalog.change.bulk': r.bulk,
        'catalog.change.lag_seconds': lags[i]!,
      });
    });
    const sorted = [...lags].sort((a, b) => a - b);
    if (sorted.length > 0) {
      span.setAttributes({
        'catalog.change.lag_seconds.min': sorted[0]!,
        'catalog.change.lag_seconds.max': sorted[sorted.length - 1]!,
        'catalog.change.lag_seconds.p99': sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)]!,
      });
    }
  } else {
    const err = outcome.error;
    t?.fail(span, err instanceof Error ? err.name : 'rolled_back', err instanceof Error ? err.message : 'the batch did not commit (leadership lost)');
  }
  span.end();
}
