import type { Cluster } from './cluster.ts';

/**
 * The API processes' own account of how long changes took to reach them:
 * `catalog_projection_delivery_seconds` in /metrics, by stage (`projected`: commit → the
 * projector's commit; `applied`: that → the process applied it). Scraped at moments of a run and
 * subtracted, so a stretch (between faults) can be read on its own.
 */
export type DeliveryStage = 'projected' | 'applied';

/** Cumulative bucket counts per stage, by upper bound (seconds, +Inf last), per API process. */
export type DeliveryScrape = Map<string, Record<DeliveryStage, Map<number, number>>>;

const LINE = /^catalog_projection_delivery_seconds_bucket\{le="([^"]+)",stage="(projected|applied)"\} (\d+)/;

export async function scrapeDelivery(cluster: Cluster): Promise<DeliveryScrape> {
  const out: DeliveryScrape = new Map();
  await Promise.all(
    cluster.apis.map(async (api) => {
      if (!api.child || !api.url) return;
      const text = await fetch(`${api.url}/metrics`)
        .then((r) => r.text())
        .catch(() => '');
      const stages: Record<DeliveryStage, Map<number, number>> = { projected: new Map(), applied: new Map() };
      for (const line of text.split('\n')) {
        const m = LINE.exec(line);
        if (m) stages[m[2] as DeliveryStage].set(m[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[1]), Number(m[3]));
      }
      out.set(api.name, stages);
    }),
  );
  return out;
}

/**
 * Bucket counts added between two scrapes, summed over the processes. A process started or
 * restarted in between (absent before, or its counts went down) counts from zero.
 */
export function deliveryBetween(earlier: DeliveryScrape, later: DeliveryScrape): Record<DeliveryStage, Map<number, number>> {
  const sum: Record<DeliveryStage, Map<number, number>> = { projected: new Map(), applied: new Map() };
  for (const [name, after] of later) {
    const before = earlier.get(name);
    for (const stage of ['projected', 'applied'] as const) {
      const restarted = before !== undefined && [...after[stage]].some(([le, n]) => n < (before[stage].get(le) ?? 0));
      for (const [le, n] of after[stage]) {
        const base = before && !restarted ? (before[stage].get(le) ?? 0) : 0;
        sum[stage].set(le, (sum[stage].get(le) ?? 0) + n - base);
      }
    }
  }
  return sum;
}

export function addDelivery(a: Record<DeliveryStage, Map<number, number>>, b: Record<DeliveryStage, Map<number, number>>): Record<DeliveryStage, Map<number, number>> {
  const out: Record<DeliveryStage, Map<number, number>> = { projected: new Map(a.projected), applied: new Map(a.applied) };
  for (const stage of ['projected', 'applied'] as const) for (const [le, n] of b[stage]) out[stage].set(le, (out[stage].get(le) ?? 0) + n);
  return out;
}

/** The bucket bound (ms) at or under which a share `q` of the observations fell; undefined without any. */
export function bucketQuantileMs(buckets: Map<number, number>, q: number): number | undefined {
  const sorted = [...buckets].sort((x, y) => x[0] - y[0]);
  const total = sorted.at(-1)?.[1] ?? 0;
  if (total === 0) return undefined;
  const wanted = q * total;
  for (const [le, n] of sorted) if (n >= wanted) return le === Number.POSITIVE_INFINITY ? Number.POSITIVE_INFINITY : Math.round(le * 1000);
  return undefined;
}

export function deliveryCount(buckets: Map<number, number>): number {
  return [...buckets].find(([le]) => le === Number.POSITIVE_INFINITY)?.[1] ?? 0;
}
