import { describe, expect, it } from 'vitest';
import { checkTargets, type RunReport, type ScenarioRow } from '../../../bench/report.ts';

/** The targets the bench judges for MCP: the load rows of both eras. */

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
  const report = (scenarios: ScenarioRow[]): Omit<RunReport, 'targets'> => ({
    machine: { cores: 2, cpuModel: 'test', node: 'v20', platform: 'linux', memoryMB: 1024, loadAverage: { before: 0, afterLoad: 0 } },
    settings: { size: 2000, connections: 10, durationSeconds: 3, warmupSeconds: 1, cacheMisses: '', loadGenerator: '' },
    catalog: { liveListings: 1688, dataDir: '/tmp/x', importedThisRun: false },
    scenarios,
    footprint,
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
});
