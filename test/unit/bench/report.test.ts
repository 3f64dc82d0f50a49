import { describe, expect, it } from 'vitest';
import type { ContextSizeResult, EraContext } from '../../../bench/context-size.ts';
import { checkTargets, CONTEXT_GOALS, contextChecks, formatContext, type RunReport, type ScenarioRow } from '../../../bench/report.ts';

/** The targets the bench judges for MCP: the load rows of both eras, and the context-size figures. */

function era(name: EraContext['era'], over: { toolsListBytes?: number; searchShare?: number; searchRatio?: number; productWorst?: number; productShare?: number; missing?: string[] } = {}): EraContext {
  return {
    era: name,
    toolsList: { bytes: over.toolsListBytes ?? 12_000, tokens: 3_000, tools: 8 },
    search: {
      hits: 20,
      total: 1688,
      bytes: 38_000,
      restBytes: 27_000,
      ratio: over.searchRatio ?? 1.4,
      textTokens: 1_700,
      contentTokens: 2_400,
      restTokens: 7_300,
      textShare: over.searchShare ?? 0.23,
      contentShare: 0.33,
      missing: over.missing ?? [],
    },
    product: { products: 50, ratio: { median: 1.47, worst: over.productWorst ?? 1.5, worstOf: 'x' }, textShare: { median: over.productShare ?? 0.34, worst: 0.43, worstOf: 'y' } },
    resource: { products: 50, ratio: { median: 1.16, worst: 1.19, worstOf: 'z' } },
  };
}

function context(modern: Parameters<typeof era>[1] = {}, differing: string[] = [], restDiffering: string[] = []): ContextSizeResult {
  return {
    tokenizer: 'o200k_base',
    products: 50,
    eras: [era('2025-11-25'), era('2026-07-28', modern)],
    agreement: { compared: 102, differing },
    rest: { compared: 202, differing: restDiffering },
  };
}

const judged = (c: ContextSizeResult) => contextChecks(c).filter((t) => !t.informational);

describe('contextChecks', () => {
  it('meets every goal when each era is within it', () => {
    const checks = contextChecks(context());
    expect(judged(context()).map((t) => t.met)).toEqual([true, true, true, true, true, true, true]);
    expect(checks.find((t) => t.informational)?.met).toBeNull();
  });

  it('judges the goals at their limits', () => {
    const g = CONTEXT_GOALS;
    expect(judged(context({ toolsListBytes: g.toolsListBytes, searchShare: g.textShare, searchRatio: g.answerRatio, productWorst: g.answerRatio, productShare: g.textShare })).every((t) => t.met)).toBe(true);
    const failing = (over: Parameters<typeof era>[1]) => judged(context(over)).filter((t) => !t.met).map((t) => t.name);
    expect(failing({ toolsListBytes: g.toolsListBytes + 1 })).toEqual(['MCP tools/list, anonymous: answer size']);
    expect(failing({ searchShare: 0.451 })).toEqual(["MCP search_products, no arguments: text tokens vs the REST body's"]);
    expect(failing({ missing: ['alpha: website'] })).toEqual(["MCP search_products, no arguments: text tokens vs the REST body's"]);
    expect(failing({ searchRatio: 1.601 })).toEqual(["MCP search_products, no arguments: answer bytes vs the REST body's"]);
    expect(failing({ productWorst: 1.606 })).toEqual(["MCP get_product over 50 products: answer bytes vs the REST body's"]);
    expect(failing({ productShare: 0.46 })).toEqual(["MCP get_product over 50 products: text tokens vs the REST body's"]);
    expect(judged(context({}, ['tools/list'])).filter((t) => !t.met).map((t) => t.name)).toEqual(['MCP eras give the same answers']);
    expect(judged(context({}, [], ['2026-07-28 get_product x'])).filter((t) => !t.met).map((t) => t.name)).toEqual(['MCP read results carry the REST bodies']);
  });

  it('names each era in what it measured, to three decimals for ratios', () => {
    const check = contextChecks(context({ productWorst: 1.6049 })).find((t) => t.name.startsWith('MCP get_product') && t.name.endsWith("answer bytes vs the REST body's"))!;
    expect(check.measured).toContain('2025-11-25 median 1.470 ×, worst 1.500 ×');
    expect(check.measured).toContain('2026-07-28 median 1.470 ×, worst 1.605 ×');
    expect(check.met).toBe(false);
    expect(formatContext(context())).toContain('| tools/list: bytes / tokens');
  });
});

function row(id: string, over: Partial<ScenarioRow>): ScenarioRow {
  return {
    id,
    title: id,
    kind: 'mcp',
    server: 'serve',
    variants: 1,
    bodyBytes: 100,
    seconds: 3,
    responses: 3000,
    requestsPerSecond: 1000,
    okPerSecond: 1000,
    p50: 1,
    p90: 2,
    p99: 3,
    max: 4,
    non2xx: 0,
    statusCodes: { 200: 3000 },
    errors: 0,
    timeouts: 0,
    bytesPerResponse: 300,
    cpu: { server: 0.5, loadGenerator: 0.4 },
    ...over,
  };
}

describe('checkTargets for the MCP rows', () => {
  const footprint = { afterLoad: { rssMB: 100, peakRssMB: 120 }, readyMs: 1000, atReady: { rssMB: 90, peakRssMB: 90 }, starts: [] };
  const report = (scenarios: ScenarioRow[], c?: ContextSizeResult): Omit<RunReport, 'targets'> => ({
    machine: { cores: 2, cpuModel: 'test', node: 'v20', platform: 'linux', memoryMB: 1024, loadAverage: { before: 0, afterLoad: 0 } },
    settings: { size: 2000, connections: 10, durationSeconds: 3, warmupSeconds: 1, cacheMisses: '', loadGenerator: '' },
    catalog: { liveListings: 1688, dataDir: '/tmp/x', importedThisRun: false },
    scenarios,
    footprint,
    ...(c && { context: c }),
  });

  it('holds every MCP row, of either era, resource reads included, to half its baseline', () => {
    const rows = [
      row('mcp-product', { title: 'MCP 2025-11-25 get_product', era: '2025-11-25', baseline: 'hello', ratio: 0.55, okPerSecond: 5500 }),
      row('mcp-product-2026', { title: 'MCP 2026-07-28 get_product', era: '2026-07-28', baseline: 'hello', ratio: 0.49, okPerSecond: 4900 }),
      row('mcp-resource-product', { title: 'MCP 2025-11-25 resources/read', era: '2025-11-25', baseline: 'hello', ratio: 0.5, okPerSecond: 5000 }),
      row('mcp-resource-product-2026', { title: 'MCP 2026-07-28 resources/read', era: '2026-07-28', baseline: 'hello', ratio: 0.6, okPerSecond: 6000, non2xx: 3 }),
    ];
    const checks = checkTargets(report(rows));
    const goal = (title: string) => checks.find((t) => t.name === `${title} vs hello-world baseline`)!;
    expect(goal('MCP 2025-11-25 get_product')).toMatchObject({ goal: '≥ 50 % of its req/s', met: true });
    expect(goal('MCP 2026-07-28 get_product').met).toBe(false);
    expect(goal('MCP 2025-11-25 resources/read').met).toBe(true);
    // Answers that were not 2xx fail the row whatever its rate.
    expect(goal('MCP 2026-07-28 resources/read').met).toBe(false);
    // Each 2026-07-28 row is shown beside its 2025-11-25 twin, without a goal.
    const twin = checks.find((t) => t.name === 'MCP 2026-07-28 get_product vs its 2025-11-25 twin')!;
    expect(twin).toMatchObject({ met: null, informational: true });
    expect(twin.measured).toMatch(/^89 % \(4,900 vs 5,500 req\/s/);
  });

  it('adds the context-size targets when the phase ran', () => {
    expect(checkTargets(report([])).some((t) => t.name.startsWith('MCP tools/list'))).toBe(false);
    expect(checkTargets(report([], context())).filter((t) => t.name.startsWith('MCP ')).length).toBe(contextChecks(context()).length);
  });
});

