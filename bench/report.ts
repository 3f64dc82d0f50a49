import type { ExportResult, ExportRun, FeedResult } from './export-feed.ts';
import type { Footprint } from './footprint.ts';
import type { HeldResult } from './held-connections.ts';
import type { BulkImportResult } from './bulk-import.ts';
import type { FreshnessResult } from './freshness.ts';
import type { SnapshotMoveResult } from './snapshot-move.ts';
import type { LoadResult } from './load.ts';
import type { StartMeasure } from './startup.ts';
import type { Kind, McpEra, Target } from './scenarios.ts';
import type { ContextSizeResult, EraContext } from './context-size.ts';

/** Everything one run measured, as printed (text table) or as JSON (--json). */
export interface ScenarioRow extends LoadResult {
  id: string;
  title: string;
  kind: Kind;
  server: Target;
  /** Distinct requests the scenario walks through (1: one repeated request). */
  variants: number;
  bodyBytes: number;
  /** For an MCP scenario: the protocol revision its requests are written in. */
  era?: McpEra;
  baseline?: 'hello' | 'body';
  /** req/s of this scenario over req/s of its baseline. */
  ratio?: number;
}

export interface TargetCheck {
  name: string;
  goal: string;
  measured: string;
  /** null: not judged at this catalog size (or, with `informational`, never judged). */
  met: boolean | null;
  /** A figure shown beside the goals, with none of its own. */
  informational?: boolean;
}

export interface RunReport {
  machine: {
    cores: number;
    cpuModel: string;
    node: string;
    platform: string;
    memoryMB: number;
    /** 1-minute load average before the run and after the load phase: other work on the cores skews every figure. */
    loadAverage: { before: number; afterLoad: number };
  };
  settings: {
    size: number;
    connections: number;
    durationSeconds: number;
    warmupSeconds: number;
    cacheMisses: string;
    loadGenerator: string;
    cpuProfileDir?: string;
  };
  catalog: { liveListings: number; dataDir: string; importedThisRun: boolean; importSeconds?: number };
  scenarios: ScenarioRow[];
  freshness?: FreshnessResult;
  bulk?: BulkImportResult;
  export?: ExportResult;
  feed?: FeedResult;
  held?: HeldResult;
  move?: SnapshotMoveResult;
  /** What the MCP answers cost a model's context, per era (bench/context-size.ts). */
  context?: ContextSizeResult;
  /**
   * readyMs and atReady: the compiled `catalog serve` the load runs against; apiAfterLoad: the
   * cache-off `catalog api` (when a load scenario ran); starts: every start measured (serve and
   * api, compiled and sources).
   */
  footprint: { afterLoad: Footprint; readyMs: number; atReady: Footprint; apiAfterLoad?: Footprint; starts: StartMeasure[] };
  targets: TargetCheck[];
}

const ms = (v: number) => (Number.isFinite(v) ? (v < 10 ? v.toFixed(2) : v.toFixed(1)) : '-');
const pct = (v: number | undefined) => (v === undefined ? '' : `${Math.round(v * 100)} %`);
const cores = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(2));
const int = (v: number) => Math.round(v).toLocaleString('en-US');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? Number.NaN;

/** Server CPU time per answered request, in microseconds: less sensitive to other load than req/s. */
function serverMicrosPerRequest(row: LoadResult): number | undefined {
  return row.cpu.server === undefined || row.okPerSecond === 0 ? undefined : (row.cpu.server * 1e6) / row.okPerSecond;
}

/**
 * Ratios to the baselines. Each baseline runs first and again last; the mean of its runs is
 * the reference, so a drift of the machine during the run weighs on both sides.
 */
export function attachRatios(rows: ScenarioRow[]): void {
  const mean = (target: Target) => {
    const runs = rows.filter((r) => r.kind === 'baseline' && r.server === target).map((r) => r.okPerSecond);
    return runs.length ? runs.reduce((a, b) => a + b, 0) / runs.length : undefined;
  };
  const baseline = { hello: mean('hello'), body: mean('body') };
  for (const row of rows) {
    const b = row.baseline && baseline[row.baseline];
    if (b) row.ratio = row.okPerSecond / b;
  }
}

export function checkTargets(report: Omit<RunReport, 'targets'>): TargetCheck[] {
  const { size } = report.settings;
  const rows = report.scenarios;
  const checks: TargetCheck[] = [];

  const baselineMicros = (target: Target) => {
    const runs = rows.filter((r) => r.kind === 'baseline' && r.server === target).map(serverMicrosPerRequest);
    return runs.every((v) => v !== undefined) && runs.length ? (runs as number[]).reduce((a, b) => a + b, 0) / runs.length : undefined;
  };
  const cpuNote = (row: ScenarioRow, target: Target) => {
    const mine = serverMicrosPerRequest(row);
    const base = baselineMicros(target);
    return mine !== undefined && base !== undefined ? ` (server CPU ${mine.toFixed(0)} µs/request vs the baseline's ${base.toFixed(0)})` : '';
  };
  const cached = rows.filter((r) => r.kind === 'search-cached' && r.ratio !== undefined);
  if (cached.length) {
    const worst = cached.reduce((a, b) => (b.ratio! < a.ratio! ? b : a));
    checks.push({
      name: 'cached /search vs precomputed-body baseline',
      goal: '≥ 80 % of its req/s (every cached search)',
      measured: `lowest ${pct(worst.ratio)} (${worst.title})${cpuNote(worst, 'body')}; all: ${cached.map((r) => pct(r.ratio)).join(', ')}`,
      met: cached.every((r) => r.ratio! >= 0.8),
    });
  }
  const product = rows.find((r) => r.kind === 'product');
  if (product?.ratio !== undefined) {
    // The ceiling: Node alone writing the same headers and body, against the same hello-world.
    const bare = rows.find((r) => r.kind === 'baseline' && r.server === 'answer');
    const hello = rows.filter((r) => r.kind === 'baseline' && r.server === 'hello').map((r) => r.okPerSecond);
    const ceiling = bare && hello.length ? ` (bare Node writing the same answer: ${pct(bare.okPerSecond / (hello.reduce((a, b) => a + b, 0) / hello.length))}${cpuNote(bare, 'hello')})` : '';
    checks.push({ name: '/products/{slug} vs hello-world baseline', goal: '≥ 70 % of its req/s', measured: `${pct(product.ratio)}${cpuNote(product, 'hello')}${ceiling}`, met: product.ratio >= 0.7 });
  }
  // The budgets' cost: the same products with budgets in Redis (an address, then a key), side by side.
  const redisRow = rows.find((r) => r.id === 'product-redis');
  const keyRow = rows.find((r) => r.id === 'product-key');
  if (product && redisRow) {
    const ratio = redisRow.okPerSecond / product.okPerSecond;
    const micros = (row: ScenarioRow) => serverMicrosPerRequest(row)?.toFixed(0) ?? '-';
    checks.push({
      name: '/products/{slug} with budgets in Redis vs in memory',
      goal: '≥ 85 % of its req/s',
      measured: `${pct(ratio)} (${int(redisRow.okPerSecond)} vs ${int(product.okPerSecond)} req/s; server CPU ${micros(redisRow)} vs ${micros(product)} µs/request)`,
      met: ratio >= 0.85,
    });
    if (keyRow) {
      const keyed = keyRow.okPerSecond / redisRow.okPerSecond;
      checks.push({
        name: '/products/{slug} with a consumer key vs as an address (budgets in Redis)',
        goal: 'within 3 % of its req/s',
        measured: `${pct(keyed)} (${int(keyRow.okPerSecond)} vs ${int(redisRow.okPerSecond)} req/s; server CPU ${micros(keyRow)} vs ${micros(redisRow)} µs/request)`,
        met: keyed >= 0.97,
      });
    }
  }
  // Every MCP row, in both eras: the read tools (search_products against the precomputed page,
  // the others against hello-world) and a product's resource read (against hello-world).
  for (const row of rows.filter((r) => r.kind === 'mcp' && r.ratio !== undefined)) {
    const baseline = row.baseline === 'hello' ? 'hello-world' : 'precomputed-body';
    checks.push({
      name: `${row.title} vs ${baseline} baseline`,
      goal: `≥ ${pct(MCP_GOAL)} of its req/s`,
      measured: `${pct(row.ratio)}, p50 ${ms(row.p50)} ms at -c ${report.settings.connections}${row.non2xx ? `, ${int(row.non2xx)} not 2xx` : ''}${cpuNote(row, row.baseline!)}`,
      met: row.ratio! >= MCP_GOAL && row.non2xx === 0,
    });
  }
  // Each 2026-07-28 row beside its 2025-11-25 twin: what the newer revision's envelope and result members cost.
  for (const modern of rows.filter((r) => r.kind === 'mcp' && r.era === '2026-07-28')) {
    const legacy = rows.find((r) => r.kind === 'mcp' && r.era === '2025-11-25' && `${r.id}-2026` === modern.id);
    if (!legacy || legacy.okPerSecond === 0) continue;
    const micros = (row: ScenarioRow) => serverMicrosPerRequest(row)?.toFixed(0) ?? '-';
    checks.push({
      name: `${modern.title} vs its 2025-11-25 twin`,
      goal: 'none (shown for comparison)',
      measured: `${pct(modern.okPerSecond / legacy.okPerSecond)} (${int(modern.okPerSecond)} vs ${int(legacy.okPerSecond)} req/s; server CPU ${micros(modern)} vs ${micros(legacy)} µs/request)`,
      met: null,
      informational: true,
    });
  }
  if (report.context) checks.push(...contextChecks(report.context));
  // The directory's pages against hello-world: the listing and the cached search page have goals, the home page is shown beside them.
  const pageGoals: Record<string, number | undefined> = { 'page-listing': 0.5, 'page-search': 0.4, 'page-home': undefined };
  for (const row of rows.filter((r) => r.kind === 'page' && r.ratio !== undefined)) {
    const goal = pageGoals[row.id];
    checks.push({
      name: `${row.title} vs hello-world baseline`,
      goal: goal === undefined ? 'none (shown for comparison)' : `≥ ${pct(goal)} of its req/s`,
      measured: `${pct(row.ratio)}, p50 ${ms(row.p50)} ms at -c ${report.settings.connections}${row.non2xx ? `, ${int(row.non2xx)} not 2xx` : ''}${cpuNote(row, 'hello')}`,
      met: goal === undefined ? null : row.ratio! >= goal && row.non2xx === 0,
      ...(goal === undefined && { informational: true }),
    });
  }
  const uncached = rows.filter((r) => r.kind === 'search-uncached');
  if (uncached.length) {
    const limit = size <= 10_000 ? 5 : size <= 100_000 ? 15 : 10;
    const worst = uncached.reduce((a, b) => (b.p99 > a.p99 ? b : a));
    checks.push({
      name: `uncached /search p99 at ${int(size)} listings, -c ${report.settings.connections}`,
      goal: `≤ ${limit} ms (every uncached search)`,
      measured: `highest ${ms(worst.p99)} ms (${worst.title})`,
      met: worst.p99 <= limit,
    });
  }
  if (report.freshness) {
    const f = report.freshness;
    const worst = Math.max(f.product.p99, f.search.p99);
    const limit = size >= 1_000_000 ? 250 : 1000;
    checks.push({
      name: 'freshness p99 (commit → visible)',
      goal: `≤ ${limit} ms in /products/{slug} and /search`,
      measured: `/products ${ms(f.product.p99)} ms, /search ${ms(f.search.p99)} ms${f.product.missed + f.search.missed ? `, ${f.product.missed + f.search.missed} never seen` : ''}`,
      met: worst <= limit && f.product.missed + f.search.missed === 0,
    });
  }
  if (report.bulk) {
    const b = report.bulk;
    checks.push({
      name: `freshness during a bulk import (edits at ${b.edits.perSecond.toFixed(1)}/s while ${int(b.listings)} listings are imported)`,
      goal: '≤ 1,000 ms p99, commit → shown by both API processes',
      measured: `p50 ${ms(b.edits.p50)} ms, p99 ${ms(b.edits.p99)} ms, max ${ms(b.edits.max)} ms over ${b.edits.count} edits${b.edits.missed ? `, ${b.edits.missed} never seen` : ''}`,
      met: b.edits.p99 <= 1000 && b.edits.missed === 0,
    });
    checks.push({
      name: `projection throughput (${int(b.listings)} imported listings, import commit → its last shown by both API processes)`,
      goal: '≥ 10,000 listings/s (100,000 within 10 s); counts exact at every step; a feed consumer equals the catalog',
      measured:
        `${int(b.listingsPerSecond)} listings/s (${ms(Math.max(b.visibleAfterCommitMs.serve, b.visibleAfterCommitMs.api) / 1000)} s); ` +
        `counts ${b.countMismatches === 0 && b.categoriesExact ? 'exact' : 'WRONG'} in ${b.countSamples} samples; feed copy ${b.feedMirrorEqual ? 'equal' : 'DIFFERENT'}`,
      met: b.listingsPerSecond >= 10_000 && b.countMismatches === 0 && b.categoriesExact && b.feedMirrorEqual,
    });
  }
  const plain = report.export?.runs.filter((r) => r.coding === 'identity') ?? [];
  if (plain.length) {
    const worst = Math.max(...plain.map((r) => r.lastByteMs));
    checks.push({
      name: `export of the whole catalog, uncompressed (${int(size)} listings)`,
      goal: '≤ 1 s to last byte at 100,000 listings',
      measured: `${ms(median(plain.map((r) => r.lastByteMs)))} ms median, ${ms(worst)} ms slowest of ${plain.length}`,
      met: size >= 100_000 ? worst <= 1000 : null,
    });
  }
  if (report.feed) {
    const d = report.feed.delivery;
    checks.push({
      name: 'change feed delivery p99 (commit → long-polling consumer)',
      goal: '≤ 100 ms',
      measured: `${ms(d.p99)} ms (p50 ${ms(d.p50)} ms)${d.missed ? `, ${d.missed} never delivered` : ''}`,
      met: d.p99 <= 100 && d.missed === 0,
    });
  }
  if (report.held) {
    const h = report.held;
    const total = h.connections.idle + h.connections.halfSent + h.connections.longPolls;
    checks.push({
      name: `ordinary requests p99 with ${int(total)} connections held (idle, half-sent, long polls)`,
      goal: '≤ 50 ms, every one answered 200',
      measured: `${ms(h.held.p99)} ms (before: ${ms(h.quiet.p99)} ms), ${h.failed} not 200; RSS ${int(h.rssMB.before)} → ${int(h.rssMB.held)} MB`,
      met: h.held.p99 <= 50 && h.failed === 0,
    });
  }
  const rssLimit = size >= 1_000_000 ? 2048 : size >= 100_000 ? 300 : undefined;
  const fp = report.footprint;
  checks.push({
    name: 'RSS after load (serve; api)',
    goal: rssLimit ? `≤ ${int(rssLimit)} MB at ${int(size)} listings` : '≤ 300 MB at 100,000 listings, ≤ 2 GB at 1,000,000',
    measured: `serve ${int(fp.afterLoad.rssMB)} MB (peak ${int(fp.afterLoad.peakRssMB)})${fp.apiAfterLoad ? `; api ${int(fp.apiAfterLoad.rssMB)} MB (peak ${int(fp.apiAfterLoad.peakRssMB)})` : ''}`,
    met: rssLimit ? Math.max(fp.afterLoad.rssMB, fp.apiAfterLoad?.rssMB ?? 0) <= rssLimit : null,
  });
  if (report.move) {
    // The move must let the snapshot it moved from go: what serve holds after it is compared with
    // what it held before it, after the same load (the phases before the move, exports among
    // them, leave their own working memory, which is no part of this).
    const { before, after } = report.move;
    checks.push({
      name: 'serve after a move to a newer snapshot',
      goal: `RSS ≤ ${int(MOVE_RSS_GROWTH * 100)} % of its RSS before the move (the old snapshot let go)`,
      measured: `${int(before.rssMB)} → ${int(after.rssMB)} MB (peak ${int(after.peakRssMB)}), external memory ${int(before.externalMB)} → ${int(after.externalMB)} MB`,
      met: after.rssMB <= before.rssMB * MOVE_RSS_GROWTH,
    });
  }
  const readyLimit = size >= 1_000_000 ? 10_000 : size >= 100_000 ? 1000 : 5000;
  for (const command of ['serve', 'api'] as const) {
    const measured = fp.starts.filter((m) => m.command === command);
    const compiled = measured.find((m) => m.runtime === 'compiled');
    if (!compiled) continue;
    const wrong = measured.flatMap((m) => m.wrongAtReady);
    checks.push({
      name: `catalog ${command} → ready on an existing database, answering right`,
      goal: `≤ ${(readyLimit / 1000).toFixed(0)} s (compiled) at ${int(size)} listings, every first answer right`,
      measured: measured.map((m) => `${m.runtime} ${(m.readyMs / 1000).toFixed(2)} s`).join(', ') + (wrong.length ? `; wrong at ready: ${wrong.join('; ')}` : '; first answers right'),
      met: compiled.readyMs <= readyLimit && wrong.length === 0,
    });
  }
  return checks;
}

/** Every MCP row's goal: this share of its baseline's req/s. */
const MCP_GOAL = 0.5;

/**
 * The context-size goals (bench/context-size.ts), in both eras: the anonymous tools/list at most
 * this many bytes; the text of a 20-result search and (median) of get_product at most this share
 * of the REST body's tokens; the whole answer of either at most this multiple of the REST body's
 * bytes (for get_product, its worst product).
 */
export const CONTEXT_GOALS = { toolsListBytes: 14_000, textShare: 0.45, answerRatio: 1.6 } as const;

/** A ratio of bytes, to three decimals: a goal of 1.6 × is not met by 1.604. */
const times = (v: number) => `${v.toFixed(3)} ×`;

/** The context-size targets, each judged over both eras. */
export function contextChecks(c: ContextSizeResult): TargetCheck[] {
  const each = (f: (e: EraContext) => string) => c.eras.map((e) => `${e.era} ${f(e)}`).join('; ');
  const all = (f: (e: EraContext) => boolean) => c.eras.length > 0 && c.eras.every(f);
  const g = CONTEXT_GOALS;
  return [
    {
      name: 'MCP tools/list, anonymous: answer size',
      goal: `≤ ${int(g.toolsListBytes)} bytes (each era)`,
      measured: each((e) => `${int(e.toolsList.bytes)} B (${int(e.toolsList.tokens)} tokens, ${e.toolsList.tools} tools)`),
      met: all((e) => e.toolsList.bytes <= g.toolsListBytes),
    },
    {
      name: 'MCP search_products, no arguments: text tokens vs the REST body\'s',
      goal: `≤ ${pct(g.textShare)} (each era), every hit named (slug, tagline, description, website, pricing) and the total`,
      measured: each(
        (e) =>
          `${pct(e.search.textShare)} (${int(e.search.textTokens)} of ${int(e.search.restTokens)}; with the links ${pct(e.search.contentShare)})` +
          (e.search.missing.length ? `, missing ${e.search.missing.length}: ${e.search.missing.slice(0, 3).join(', ')}` : ''),
      ),
      met: all((e) => e.search.textShare <= g.textShare && e.search.missing.length === 0),
    },
    {
      name: 'MCP search_products, no arguments: answer bytes vs the REST body\'s',
      goal: `≤ ${g.answerRatio} × (each era)`,
      measured: each((e) => `${times(e.search.ratio)} (${int(e.search.bytes)} vs ${int(e.search.restBytes)} B)`),
      met: all((e) => e.search.ratio <= g.answerRatio),
    },
    {
      name: `MCP get_product over ${c.products} products: answer bytes vs the REST body's`,
      goal: `worst ≤ ${g.answerRatio} × (each era)`,
      measured: each((e) => `median ${times(e.product.ratio.median)}, worst ${times(e.product.ratio.worst)} (${e.product.ratio.worstOf})`),
      met: all((e) => e.product.ratio.worst <= g.answerRatio),
    },
    {
      name: `MCP get_product over ${c.products} products: text tokens vs the REST body's`,
      goal: `median ≤ ${pct(g.textShare)} (each era)`,
      measured: each((e) => `median ${pct(e.product.textShare.median)}, worst ${pct(e.product.textShare.worst)} (${e.product.textShare.worstOf})`),
      met: all((e) => e.product.textShare.median <= g.textShare),
    },
    {
      name: `MCP resources/read of a product over ${c.products} products: answer bytes vs the REST body's`,
      goal: 'none (shown for comparison)',
      measured: each((e) => `median ${times(e.resource.ratio.median)}, worst ${times(e.resource.ratio.worst)}`),
      met: null,
      informational: true,
    },
    {
      name: 'MCP read results carry the REST bodies',
      goal: 'every tool\'s structuredContent equal to the REST body, every resource\'s text the REST body byte for byte (each era)',
      measured: `${c.rest.compared - c.rest.differing.length} of ${c.rest.compared} equal${c.rest.differing.length ? `; differing: ${c.rest.differing.slice(0, 5).join(', ')}` : ''}`,
      met: c.rest.compared > 0 && c.rest.differing.length === 0,
    },
    {
      name: 'MCP eras give the same answers',
      goal: 'every result of 2026-07-28 equal to 2025-11-25\'s, apart from resultType, _meta, ttlMs and cacheScope',
      measured: `${c.agreement.compared - c.agreement.differing.length} of ${c.agreement.compared} equal${c.agreement.differing.length ? `; differing: ${c.agreement.differing.slice(0, 5).join(', ')}` : ''}`,
      met: c.agreement.compared > 0 && c.agreement.differing.length === 0,
    },
  ];
}

/** After a move, serve's RSS may exceed its RSS before it by this factor at most (noise, the new snapshot's delta). */
const MOVE_RSS_GROWTH = 1.1;

function table(header: string[], rows: string[][], rightAligned: Set<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (rightAligned.has(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** The context-size figures, one column per era. */
export function formatContext(c: ContextSizeResult): string {
  const row = (what: string, f: (e: EraContext) => string, goal: string) => [what, ...c.eras.map(f), goal];
  const g = CONTEXT_GOALS;
  const s = (e: EraContext) => e.search;
  return [
    `Context size: MCP answers beside the REST bodies they carry (bytes as sent; tokens in ${c.tokenizer}); get_product and resources/read over ${c.products} products:`,
    table(
      ['measured', ...c.eras.map((e) => e.era), 'goal'],
      [
        row('tools/list: bytes / tokens', (e) => `${int(e.toolsList.bytes)} / ${int(e.toolsList.tokens)}`, `≤ ${int(g.toolsListBytes)} bytes`),
        row(`search_products, no arguments (${c.eras[0]?.search.hits ?? 0} hits): answer / REST bytes`, (e) => `${int(s(e).bytes)} / ${int(s(e).restBytes)} (${times(s(e).ratio)})`, `≤ ${g.answerRatio} ×`),
        row('search_products: tokens of the text / all content / REST body', (e) => `${int(s(e).textTokens)} / ${int(s(e).contentTokens)} / ${int(s(e).restTokens)}`, ''),
        row('search_products: text share of the REST tokens (all content)', (e) => `${pct(s(e).textShare)} (${pct(s(e).contentShare)})`, `≤ ${pct(g.textShare)}`),
        row('search_products: missing from the text', (e) => (s(e).missing.length ? String(s(e).missing.length) : 'nothing'), 'nothing'),
        row('get_product: answer / REST bytes, median / worst', (e) => `${times(e.product.ratio.median)} / ${times(e.product.ratio.worst)}`, `worst ≤ ${g.answerRatio} ×`),
        row('get_product: text share of the REST tokens, median / worst', (e) => `${pct(e.product.textShare.median)} / ${pct(e.product.textShare.worst)}`, `median ≤ ${pct(g.textShare)}`),
        row('resources/read of a product: answer / REST bytes, median / worst', (e) => `${times(e.resource.ratio.median)} / ${times(e.resource.ratio.worst)}`, ''),
      ],
      new Set(c.eras.map((_, i) => i + 1)),
    ),
    `Eras: ${c.agreement.compared - c.agreement.differing.length} of ${c.agreement.compared} results equal apart from the 2026-07-28 members (resultType, _meta, ttlMs, cacheScope)${c.agreement.differing.length ? `; differing: ${c.agreement.differing.join(', ')}` : ''}. ` +
      `REST bodies: ${c.rest.compared - c.rest.differing.length} of ${c.rest.compared} results carry theirs${c.rest.differing.length ? `; differing: ${c.rest.differing.join(', ')}` : ''}.`,
  ].join('\n');
}

const SERVER: Record<Target, string> = { serve: 'serve', api: 'api, cache off', redis: 'api, Redis', hello: 'baseline', body: 'baseline', answer: 'baseline' };

export function formatReport(r: RunReport): string {
  const out: string[] = [];
  out.push(
    `Machine: ${r.machine.cores} cores, ${r.machine.cpuModel}, ${int(r.machine.memoryMB)} MB RAM, Node ${r.machine.node} (${r.machine.platform}); ` +
      `1-min load average ${r.machine.loadAverage.before.toFixed(2)} before the run, ${r.machine.loadAverage.afterLoad.toFixed(2)} after the load phase` +
      (r.machine.loadAverage.before > 0.5 ? ' (other work was running: figures are lower than on a quiet machine)' : ''),
    `Catalog: ${int(r.catalog.liveListings)} live listings (--size ${r.settings.size}), data in ${r.catalog.dataDir}${r.catalog.importedThisRun ? `, imported this run in ${r.catalog.importSeconds?.toFixed(1)} s` : ', reused'}`,
    `Load: ${r.settings.loadGenerator}, ${r.settings.connections} connections, ${r.settings.durationSeconds} s measured after ${r.settings.warmupSeconds} s warm-up per scenario, on 127.0.0.1`,
    `Cache misses: ${r.settings.cacheMisses}`,
    '',
  );
  if (r.scenarios.length > 0) {
    out.push(
      table(
        ['scenario', 'server', 'variants', 'body B', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'vs baseline', 'server cores', 'server µs/req', 'other cores'],
        r.scenarios.map((s) => [
          s.title,
          SERVER[s.server],
          String(s.variants),
          int(s.bodyBytes),
          int(s.okPerSecond),
          ms(s.p50),
          ms(s.p99),
          int(s.non2xx),
          int(s.errors),
          s.ratio === undefined ? '' : `${pct(s.ratio)} of ${s.baseline === 'hello' ? 'hello' : 'body'}`,
          cores(s.cpu.server),
          serverMicrosPerRequest(s)?.toFixed(0) ?? '-',
          cores(s.cpu.other),
        ]),
        new Set([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
      ),
      '',
    );
  }
  if (r.context) out.push(formatContext(r.context), '');
  if (r.freshness) {
    const f = r.freshness;
    out.push(
      `Freshness: ${f.updates} listing updates at ${f.updatesPerSecond.toFixed(1)}/s through the write model, polled every ${f.pollMs} ms:`,
      table(
        ['visible in', 'p50 ms', 'p99 ms', 'max ms', 'never seen'],
        [
          ['GET /products/{slug}', ms(f.product.p50), ms(f.product.p99), ms(f.product.max), String(f.product.missed)],
          ['GET /search?q=word', ms(f.search.p50), ms(f.search.p99), ms(f.search.max), String(f.search.missed)],
        ],
        new Set([1, 2, 3, 4]),
      ),
      '',
    );
  }
  if (r.bulk) {
    const b = r.bulk;
    out.push(
      `Bulk import: ${int(b.listings)} listings (${int(b.liveListings)} live) through catalog import in ${b.importSeconds.toFixed(1)} s, into a catalog served by serve and an api beside it, while a maker edits ${b.edits.perSecond.toFixed(1)} times a second:`,
      table(
        ['measured', 'value'],
        [
          ['edit commit → shown by both processes, p50 / p99 / max', `${ms(b.edits.p50)} / ${ms(b.edits.p99)} / ${ms(b.edits.max)} ms (${b.edits.count} edits${b.edits.missed ? `, ${b.edits.missed} never seen` : ''})`],
          ['import commit → its last listing shown (serve / api)', `${(b.visibleAfterCommitMs.serve / 1000).toFixed(2)} / ${(b.visibleAfterCommitMs.api / 1000).toFixed(2)} s`],
          ['projection throughput', `${int(b.listingsPerSecond)} listings/s`],
          ...(b.cpuSecondsDuringBacklog
            ? [
                [
                  'CPU meanwhile: serve (projector + its copy) / api / PostgreSQL / the bench / whole machine',
                  `${b.cpuSecondsDuringBacklog.serve.toFixed(1)} / ${b.cpuSecondsDuringBacklog.api.toFixed(1)} / ${b.cpuSecondsDuringBacklog.postgres.toFixed(1)} / ${b.cpuSecondsDuringBacklog.bench.toFixed(1)} / ${b.cpuSecondsDuringBacklog.machine.toFixed(1)} s of ${(b.cpuSecondsDuringBacklog.seconds * b.cpuSecondsDuringBacklog.cores).toFixed(1)} (${b.cpuSecondsDuringBacklog.cores} cores × ${b.cpuSecondsDuringBacklog.seconds.toFixed(1)} s); busiest others: ${b.cpuSecondsDuringBacklog.busiestOther.join(', ') || '-'}`,
                ],
              ]
            : []),
          ['category counts vs the projection, sampled', `${b.countMismatches} wrong in ${b.countSamples} samples; at the end ${b.categoriesExact ? 'equal to' : 'DIFFERENT from'} a GROUP BY of the write model`],
          ['change-feed consumer after the import', `${int(b.feedChanges)} changes; copy ${b.feedMirrorEqual ? 'equal to' : 'DIFFERENT from'} the export`],
        ],
        new Set([1]),
      ),
      '',
    );
  }
  if (r.export) {
    const e = r.export;
    const byCoding = (coding: ExportRun['coding']) => e.runs.filter((run) => run.coding === coding);
    const rows = (['identity', 'br', 'gzip'] as const)
      .map((coding) => [coding, byCoding(coding)] as const)
      .filter(([, runs]) => runs.length > 0)
      .map(([coding, runs]) => {
        const last = runs.map((run) => run.lastByteMs);
        return [
          coding === 'identity' ? 'uncompressed' : coding,
          String(runs.length),
          `${(runs[0]!.bytes / 1e6).toFixed(1)}`,
          ms(runs[0]!.lastByteMs),
          ms(median(last)),
          ms(Math.max(...last)),
          ms(median(runs.map((run) => run.firstByteMs))),
          ms(median(runs.map((run) => run.serverCpuMs))),
          `${((runs[0]!.bytes / 1e6) / (median(last) / 1000)).toFixed(0)}`,
          cores(Math.max(...runs.map((run) => run.otherCores))),
        ];
      });
    out.push(
      `Export: GET /api/v1/export read whole by one client, one request at a time (the first uncompressed one also orders the catalog at its version); serve RSS ${int(e.footprint.before.rssMB)} MB before, ${int(e.footprint.after.rssMB)} MB after (peak ${int(e.footprint.after.peakRssMB)} MB), ${int(e.footprint.settled.rssMB)} MB 5 s later:`,
      table(
        ['coding', 'runs', 'MB on the wire', 'first run ms', 'last byte p50 ms', 'slowest ms', 'first byte p50 ms', 'server CPU p50 ms', 'wire MB/s', 'other cores (max)'],
        rows,
        new Set([1, 2, 3, 4, 5, 6, 7, 8, 9]),
      ),
      '',
    );
  }
  if (r.feed) {
    const f = r.feed;
    out.push(
      `Change feed: ${f.updates} listing updates at ${f.updatesPerSecond.toFixed(1)}/s through the write model, followed by one consumer long-polling /changes (wait=30, asking again at once; ${f.answers} answers):`,
      table(
        ['delivered', 'p50 ms', 'p99 ms', 'max ms', 'never delivered', 'server cores', 'other cores (PostgreSQL included)'],
        [['commit → consumer holds the change', ms(f.delivery.p50), ms(f.delivery.p99), ms(f.delivery.max), String(f.delivery.missed), cores(f.serverCores), cores(f.otherCores)]],
        new Set([1, 2, 3, 4, 5, 6]),
      ),
      '',
    );
  }
  if (r.held) {
    const h = r.held;
    const total = h.connections.idle + h.connections.halfSent + h.connections.longPolls;
    const row = (name: string, d: typeof h.quiet) => [name, String(d.count), ms(d.p50), ms(d.p99), ms(d.max)];
    out.push(
      `Held connections: ${int(total)} held open on serve with its default settings (${int(h.connections.idle)} idle keep-alive, ${int(h.connections.halfSent)} with headers stopped half-way, ` +
        `${int(h.connections.longPolls)} long polls from ${h.connections.pollAddresses} addresses), opened in ${h.openSeconds.toFixed(1)} s; ${int(h.descriptorsHeld)} descriptors open in serve; ` +
        `${int(h.halfSentCut)} half-sent cut at the header deadline and opened again; ${h.longPollsRefused} long polls refused or answered. ` +
        `Serve RSS ${int(h.rssMB.before)} MB before, ${int(h.rssMB.held)} MB held, ${int(h.rssMB.after)} MB 5 s after they were let go. Ordinary requests (products, categories, searches) at ${h.concurrency} at a time:`,
      table(['while', 'requests', 'p50 ms', 'p99 ms', 'max ms'], [row('nothing held', h.quiet), row(`${int(total)} held`, h.held)], new Set([1, 2, 3, 4])),
      '',
    );
  }
  if (r.move) {
    const m = r.move;
    const load = (l: typeof m.products.quiet) => `${int(l.okPerSecond)} req/s, p99 ${ms(l.p99)} ms, max ${ms(l.max)} ms`;
    out.push(
      `Move to a newer snapshot: ${int(m.changed)} live listings changed (and put back); the projector's new snapshot complete after ${m.writtenSeconds.toFixed(1)} s, serve on it after ${m.movedSeconds.toFixed(1)} s.`,
      `  /products/{slug} meanwhile: ${load(m.products.during)} (before the changes: ${load(m.products.quiet)}).`,
      `  serve after the same load, before → after the move: RSS ${int(m.before.rssMB)} → ${int(m.after.rssMB)} MB (peak ${int(m.after.peakRssMB)} MB), external memory ${int(m.before.externalMB)} → ${int(m.after.externalMB)} MB.`,
      '',
    );
  }
  out.push(
    `Footprint: serve RSS ${int(r.footprint.afterLoad.rssMB)} MB after load (peak ${int(r.footprint.afterLoad.peakRssMB)} MB)` +
      (r.footprint.apiAfterLoad ? `, api ${int(r.footprint.apiAfterLoad.rssMB)} MB (peak ${int(r.footprint.apiAfterLoad.peakRssMB)} MB).` : '.'),
    'Start-up on the existing database, spawn to the first 200 on /readyz:',
    table(
      ['command', 'runs', 'catalog from', 'ready s', 'RSS at ready MB', 'first answers'],
      r.footprint.starts.map((m) => [
        `catalog ${m.command}`,
        m.runtime === 'compiled' ? 'compiled (dist/)' : 'sources (tsx)',
        m.loadedFrom ?? '',
        (m.readyMs / 1000).toFixed(2),
        int(m.atReady.rssMB),
        m.wrongAtReady.length ? m.wrongAtReady.join('; ') : 'right',
      ]),
      new Set([3, 4]),
    ),
    '',
    'Targets:',
    table(
      ['target', 'goal', 'measured', 'met'],
      r.targets.map((t) => [t.name, t.goal, t.measured, t.met === null ? (t.informational ? '-' : 'n/a at this size') : t.met ? 'met' : 'NOT met']),
      new Set(),
    ),
  );
  if (r.settings.cpuProfileDir) out.push('', `CPU profiles: ${r.settings.cpuProfileDir}`);
  return out.join('\n');
}
