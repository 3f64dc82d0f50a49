import type { Pool } from '../../src/db/pool.ts';
import { expectedCategoryCounts, projectedCategoryCounts, projectedDocs, recomputedDocs } from '../../test/helpers/write-model.ts';
import type { Cluster } from './cluster.ts';
import { randomAddress } from './clients.ts';
import type { Ledger } from './workload.ts';

/**
 * What a run holds against PostgreSQL once the writing is over: the clients' ledger against
 * the write model (lost: acknowledged and absent; doubled: present more than once), and the
 * projection and every API process against the write model (counts and totals exact).
 */
export interface LedgerCheck {
  lost: number;
  doubled: number;
  /** One line per write that is lost or doubled. */
  problems: string[];
  acknowledged: { submits: number; updates: number; decisions: number };
}

const hostOf = (url: string) => new URL(url).hostname.toLowerCase();

export async function checkLedger(pool: Pool, ledger: Ledger): Promise<LedgerCheck> {
  const problems: string[] = [];
  let lost = 0;
  let doubled = 0;

  const hosts = ledger.submits.map((s) => hostOf(s.website));
  const { rows: listed } = await pool.query<{ website: string; slug: string }>(
    `SELECT website, slug FROM catalog.listings WHERE lower(substring(website from '://([^:/]+)')) = ANY ($1::text[])`,
    [hosts],
  );
  const byHost = new Map<string, string[]>();
  for (const row of listed) byHost.set(hostOf(row.website), [...(byHost.get(hostOf(row.website)) ?? []), row.slug]);
  for (const submit of ledger.submits) {
    const found = byHost.get(hostOf(submit.website)) ?? [];
    if (found.length > 1) {
      doubled++;
      problems.push(`doubled: ${submit.website} made ${found.length} listings (${found.join(', ')})`);
    } else if (submit.acked && found.length === 0) {
      lost++;
      problems.push(`lost: the submission of ${submit.website} was acknowledged but made no listing`);
    }
  }

  const { rows: decided } = await pool.query<{ feedback: string; n: number }>(
    'SELECT feedback, count(*)::int AS n FROM catalog.review_decisions WHERE feedback = ANY ($1::text[]) GROUP BY feedback',
    [ledger.decisions.map((d) => d.feedback)],
  );
  const decisions = new Map(decided.map((r) => [r.feedback, r.n]));
  for (const d of ledger.decisions) {
    const n = decisions.get(d.feedback) ?? 0;
    if (n > 1) {
      doubled++;
      problems.push(`doubled: the decision "${d.feedback}" on ${d.slug} was recorded ${n} times`);
    } else if (d.acked && n === 0) {
      lost++;
      problems.push(`lost: the decision "${d.feedback}" on ${d.slug} was acknowledged but not recorded`);
    }
  }

  // An update is lost when its listing does not show it, nor a later update that may have gone through.
  const slugs = [...new Set(ledger.updates.map((u) => u.slug))];
  const { rows: punchlines } = await pool.query<{ slug: string; punchline: string }>('SELECT slug, punchline FROM catalog.listings WHERE slug = ANY ($1::text[])', [slugs]);
  const shown = new Map(punchlines.map((r) => [r.slug, r.punchline]));
  for (const slug of slugs) {
    const updates = ledger.updates.filter((u) => u.slug === slug).sort((a, b) => a.order - b.order);
    const lastAcked = updates.filter((u) => u.acked).pop();
    if (!lastAcked) continue;
    const possible = updates.filter((u) => u.order >= lastAcked.order).map((u) => u.punchline);
    if (!possible.includes(shown.get(slug) ?? '')) {
      lost++;
      problems.push(`lost: ${slug} shows "${shown.get(slug)}", not its acknowledged update "${lastAcked.punchline}"`);
    }
  }
  return {
    lost,
    doubled,
    problems,
    acknowledged: {
      submits: ledger.submits.filter((s) => s.acked).length,
      updates: ledger.updates.filter((u) => u.acked).length,
      decisions: ledger.decisions.filter((d) => d.acked).length,
    },
  };
}

/** Resolves once the projector has projected every committed change (or rejects after timeoutMs). */
async function untilProjected(pool: Pool, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ behind: number }>(
      `SELECT count(*)::int AS behind FROM catalog.outbox o, projection.checkpoints c
        WHERE c.name = 'projection' AND (o.txid, o.seq) > (c.txid, c.seq)`,
    );
    if (rows[0]!.behind === 0) return;
    if (Date.now() > deadline) throw new Error(`the projection is still ${rows[0]!.behind} changes behind`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface ProjectionCheck {
  /** Category counts of the projection and of every API process equal GROUP BY on the write model, totals equal the live rows, documents equal a fresh projection. */
  exact: boolean;
  problems: string[];
  liveListings: number;
}

/**
 * The projection and every API process against the write model, once the projector caught up:
 * each process is given until `timeoutMs` to show the same counts and totals.
 */
export async function checkProjection(cluster: Cluster, timeoutMs = 30_000): Promise<ProjectionCheck> {
  const { pool } = cluster;
  await untilProjected(pool, timeoutMs);
  const problems: string[] = [];
  const expected = await expectedCategoryCounts(pool);
  const projected = await projectedCategoryCounts(pool);
  for (const slug of new Set([...Object.keys(expected), ...Object.keys(projected)])) {
    if (expected[slug] !== projected[slug]) problems.push(`projection.category_counts ${slug}: ${projected[slug]} where the write model has ${expected[slug]}`);
  }
  const { rows: site } = await pool.query<{ site_url: string }>('SELECT site_url FROM projection.state');
  const fresh = await recomputedDocs(pool, site[0]!.site_url, new Date().toISOString().slice(0, 10));
  const docs = await projectedDocs(pool);
  for (const [id, doc] of fresh) if (docs.get(id) !== doc) problems.push(`projection.products ${id}: ${docs.has(id) ? 'differs from' : 'missing,'} a fresh projection of the write model`);
  for (const id of docs.keys()) if (!fresh.has(id)) problems.push(`projection.products ${id}: projected but not live in the write model`);
  const live = fresh.size;

  for (const api of cluster.apis) {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      const headers = { 'x-forwarded-for': randomAddress() };
      const total = ((await (await fetch(`${api.url}/api/v1/search?limit=1`, { headers })).json()) as { total: number }).total;
      const listed = ((await (await fetch(`${api.url}/api/v1/categories`, { headers })).json()) as { categories: { slug: string; count: number }[] }).categories;
      const counts = Object.fromEntries(listed.map((c) => [c.slug, c.count]));
      const wrong = Object.keys(expected).filter((slug) => counts[slug] !== expected[slug]);
      if (total === live && wrong.length === 0 && listed.length === Object.keys(expected).length) break;
      last = `${api.name}: /search total ${total} for ${live} live listings; /categories differs for ${wrong.join(', ') || 'no category'} (${listed.length} categories)`;
      if (Date.now() > deadline) {
        problems.push(last);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { exact: problems.length === 0, problems, liveListings: live };
}

/**
 * Milliseconds from now until `visible` holds on every API process (each polled on its own,
 * every 10 ms), or rejects after timeoutMs.
 */
export async function untilVisibleEverywhere(
  cluster: Cluster,
  visible: (origin: string) => Promise<boolean>,
  timeoutMs: number,
  opts: { onlyRunning?: boolean } = {},
): Promise<number> {
  const started = performance.now();
  const deadline = Date.now() + timeoutMs;
  const each = await Promise.all(
    cluster.apis.map(async (api) => {
      for (;;) {
        // A process killed meanwhile shows nothing until it is back: with onlyRunning it is not waited for.
        if (opts.onlyRunning && !api.child) return 0;
        if (await visible(api.url!).catch(() => false)) return performance.now() - started;
        if (Date.now() > deadline) throw new Error(`not visible on ${api.name} within ${timeoutMs / 1000} s`);
        await new Promise((r) => setTimeout(r, 10));
      }
    }),
  );
  return Math.max(...each);
}

/** The nearest-rank percentile of `values` (p in 0..100). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
