import type { Registry } from 'prom-client';

/**
 * `http_request_duration_seconds`: a Prometheus histogram by method and route pattern, kept in
 * plain numbers per label set. prom-client's Histogram resolves, validates and hashes its labels
 * on every observation; here a label set is resolved once (`series`), so the busiest answers
 * (src/http/direct-reads.ts) record their time with a comparison loop and three additions.
 *
 * prom-client's registry renders it: `get()` returns the values in the shape and order its own
 * Histogram gives them (each label set in the order first observed; its buckets, `+Inf`, sum,
 * count; `le` first among the labels), so the exposition text is the same.
 * test/unit/http/request-durations.test.ts renders both from the same observations and compares.
 */
export interface DurationSeries {
  /** Records one duration, in seconds. */
  observe(seconds: number): void;
}

type DurationLabels = { method: string; route: string };

interface Series extends DurationSeries {
  readonly labels: DurationLabels;
  readonly counts: Float64Array;
  sum: number;
  count: number;
  listed: boolean;
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

export class RequestDurations {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly labelNames = ['method', 'route'] as const;
  /** Label sets observed since the start (or the last reset), in the order first observed. */
  private readonly listed = new Map<string, Series>();
  /** Every label set handed out, observed or not. */
  private readonly known = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly upperBounds: readonly number[],
    registry: Registry,
  ) {
    for (let i = 1; i < upperBounds.length; i++) {
      if (!(upperBounds[i]! > upperBounds[i - 1]!)) throw new Error(`${name}: bucket bounds must increase`);
    }
    // The registry needs only the shape prom-client's metrics have (name, help, type, get).
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The series of one label set, resolved once and kept by the caller. */
  series(labels: DurationLabels): DurationSeries {
    const key = `${labels.method}\u0000${labels.route}`;
    const known = this.known.get(key);
    if (known) return known;
    const bounds = this.upperBounds;
    const listed = this.listed;
    const series: Series = {
      labels: { method: labels.method, route: labels.route },
      // One slot per bound and one past the last (counted only in +Inf).
      counts: new Float64Array(bounds.length + 1),
      sum: 0,
      count: 0,
      listed: false,
      observe(seconds) {
        let i = 0;
        while (i < bounds.length && seconds > bounds[i]!) i++;
        this.counts[i]!++;
        this.sum += seconds;
        this.count++;
        if (!this.listed) {
          listed.set(key, this);
          this.listed = true;
        }
      },
    };
    this.known.set(key, series);
    return series;
  }

  observe(labels: DurationLabels, seconds: number): void {
    this.series(labels).observe(seconds);
  }

  async get(): Promise<{ name: string; help: string; type: 'histogram'; values: MetricValue[]; aggregator: 'sum' }> {
    const values: MetricValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const s of this.listed.values()) {
      const { method, route } = s.labels;
      let acc = 0;
      for (let i = 0; i < this.upperBounds.length; i++) {
        acc += s.counts[i]!;
        values.push({ labels: { le: this.upperBounds[i]!, method, route }, value: acc, metricName: bucketName });
      }
      values.push({ labels: { le: '+Inf', method, route }, value: s.count, metricName: bucketName });
      values.push({ labels: { method, route }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { method, route }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** Forgets every observation, as prom-client's reset does. */
  reset(): void {
    for (const s of this.known.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
      s.listed = false;
    }
    this.listed.clear();
  }
}
