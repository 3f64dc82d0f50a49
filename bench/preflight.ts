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

/** The JSON-RPC message of an MCP answer: what the bench reads of it. */
export interface McpMessage {
  result?: {
    isError?: boolean;
    structuredContent?: unknown;
    content?: unknown;
    contents?: unknown;
    tools?: unknown;
    resultType?: unknown;
    [member: string]: unknown;
  };
  error?: unknown;
}

/** The JSON-RPC message of an MCP answer, sent as JSON or as one server-sent event. */
export function mcpMessage(contentType: string | null, text: string): McpMessage {
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

/**
 * What is wrong with an MCP answer to the request `requestBody` (a JSON-RPC message), or
 * undefined when it is a real result: no JSON-RPC error; a tool call's result not a tool error
 * and with its structured content; a resource read's contents as text; tools/list's tools; and
 * for a 2026-07-28 request (an envelope in `params._meta`), `resultType: "complete"`.
 */
export function mcpProblem(requestBody: string, msg: McpMessage): string | undefined {
  const request = JSON.parse(requestBody) as { method?: unknown; params?: { _meta?: unknown } };
  if (msg.error !== undefined) return 'answered a JSON-RPC error';
  const result = msg.result;
  if (typeof result !== 'object' || result === null) return 'answered no result';
  switch (request.method) {
    case 'tools/call':
      if (result.isError) return 'the tool call failed';
      if (typeof result.structuredContent !== 'object' || result.structuredContent === null) return 'the tool call answered no structuredContent';
      if (!Array.isArray(result.content) || result.content.length === 0) return 'the tool call answered no content';
      break;
    case 'resources/read': {
      const contents = result.contents;
      if (!Array.isArray(contents) || contents.length === 0 || typeof (contents[0] as { text?: unknown }).text !== 'string') return 'the resource read answered no contents';
      break;
    }
    case 'tools/list':
      if (!Array.isArray(result.tools) || result.tools.length === 0) return 'tools/list answered no tools';
      break;
  }
  if (request.params?._meta !== undefined && result.resultType !== 'complete') return 'a 2026-07-28 request answered without resultType "complete"';
  return undefined;
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
  const where = `${scenario.id}: ${r.method ?? 'GET'} ${r.path}${r.body !== undefined ? ` ${r.body.slice(0, 200)}` : ''}`;
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
    let problem: string | undefined;
    try {
      problem = mcpProblem(r.body ?? '', mcpMessage(answer.type, answer.text));
    } catch (err) {
      problem = `not a JSON-RPC answer (${(err as Error).message})`;
    }
    if (problem) return `${where}: ${problem}: ${answer.text.slice(0, 300)}`;
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
