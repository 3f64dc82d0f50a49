import type { LoadRequest } from './load.ts';
import type { Scenario, Target } from './scenarios.ts';

/**
 * Before any load: every request of every scenario is sent once and must answer 200 with a
 * real result (a benchmark of 400s, 404s or 429s measures nothing). A search variant that
 * matches nothing is dropped, since it would measure an empty answer. Throws with every
 * problem listed.
 */
export interface PreflightReport {
  /** Per scenario id: variants dropped for matching nothing. */
  dropped: Record<string, number>;
  /** Per scenario id: the mean body size in bytes. */
  bodyBytes: Record<string, number>;
}

/** The JSON-RPC message of an MCP answer, sent as JSON or as one server-sent event. */
export function mcpMessage(contentType: string | null, text: string): { result?: { isError?: boolean; structuredContent?: unknown }; error?: unknown } {
  if (contentType?.includes('text/event-stream')) {
    const data = text
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .join('');
    return JSON.parse(data);
  }
  return JSON.parse(text);
}

async function send(origin: string, r: LoadRequest): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(`${origin}${r.path}`, {
    method: r.method ?? 'GET',
    ...(r.headers && { headers: r.headers }),
    ...(r.body !== undefined && { body: r.body }),
  });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

function problemWith(scenario: Scenario, r: LoadRequest, answer: { status: number; type: string | null; text: string }): string | 'empty' | undefined {
  const where = `${scenario.id}: ${r.method ?? 'GET'} ${r.path}`;
  if (answer.status !== 200) return `${where} answered ${answer.status}: ${answer.text.slice(0, 200)}`;
  if (scenario.kind === 'search-cached' || scenario.kind === 'search-uncached') {
    const body = JSON.parse(answer.text) as { total?: number; products?: unknown[] };
    if (!Array.isArray(body.products)) return `${where}: no products array in ${answer.text.slice(0, 200)}`;
    if (!body.total) return 'empty';
  }
  if (scenario.kind === 'page') {
    if (!answer.type?.startsWith('text/html') || !answer.text.startsWith('<!doctype html>')) return `${where}: not an HTML page (${answer.type}): ${answer.text.slice(0, 200)}`;
  }
  if (scenario.kind === 'mcp') {
    const msg = mcpMessage(answer.type, answer.text);
    if (msg.error || !msg.result || msg.result.isError) return `${where}: the tool call failed: ${answer.text.slice(0, 300)}`;
  }
  return undefined;
}

export async function preflight(scenarios: Scenario[], origins: Record<Target, string>): Promise<PreflightReport> {
  const problems: string[] = [];
  const report: PreflightReport = { dropped: {}, bodyBytes: {} };
  for (const scenario of scenarios) {
    const kept: LoadRequest[] = [];
    let bytes = 0;
    for (const r of scenario.requests) {
      let answer;
      try {
        answer = await send(origins[scenario.target], r);
      } catch (err) {
        problems.push(`${scenario.id}: ${r.path}: ${(err as Error).message}`);
        continue;
      }
      const problem = problemWith(scenario, r, answer);
      if (problem === 'empty') continue;
      if (problem) {
        problems.push(problem);
        continue;
      }
      kept.push(r);
      bytes += Buffer.byteLength(answer.text);
    }
    const dropped = scenario.requests.length - kept.length;
    if (kept.length === 0 && problems.length === 0) problems.push(`${scenario.id}: every request matched nothing`);
    if (dropped > 0) report.dropped[scenario.id] = dropped;
    report.bodyBytes[scenario.id] = kept.length ? Math.round(bytes / kept.length) : 0;
    scenario.requests = kept;
  }
  if (problems.length > 0) {
    throw new Error(`preflight failed; nothing was measured:\n  ${problems.slice(0, 20).join('\n  ')}${problems.length > 20 ? `\n  … and ${problems.length - 20} more` : ''}`);
  }
  return report;
}
