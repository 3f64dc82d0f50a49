import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where a process spent its time, from a V8 CPU profile (`node --cpu-prof`): self time per
 * function and per source (a package under node_modules, a file of ours, or node itself).
 *
 *   node bin/run-ts.js bench/profile-summary.ts FILE.cpuprofile [--top N] [--requests N]
 *
 * With --requests (how many requests the process served while profiled), also the time per
 * request of each family of work (familyCosts).
 */
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CallFrame {
  functionName: string;
  url: string;
  /** Zero-based, in the file the process ran. */
  lineNumber: number;
  columnNumber?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  functions: Array<{ name: string; where: string; selfMs: number; share: number }>;
  sources: Array<{ source: string; selfMs: number; share: number }>;
  /** Time with a source anywhere on the stack (a package or a file of ours), as a share of busy time. */
  inclusive: Array<{ source: string; ms: number; share: number }>;
}

function sourceOf(url: string): string {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const repo = file.indexOf('/src/') >= 0 ? file.slice(file.indexOf('/src/') + 1) : file.indexOf('/projector/') >= 0 ? file.slice(file.indexOf('/projector/') + 1) : path.basename(file);
  return repo;
}

const sourceMaps = new Map<string, SourceMap | null>();

/**
 * Where a frame's code was written: for the compiled build (dist/, bundled, with a source map
 * beside each file) the original file and line, so that the catalog's modules and the packages
 * bundled with them are told apart as when the sources run; otherwise the frame's own.
 */
function original(frame: CallFrame): { url: string; line: number } {
  const { url, lineNumber } = frame;
  if (!url.startsWith('file://') || !url.endsWith('.js')) return { url, line: lineNumber };
  const file = fileURLToPath(url);
  let map = sourceMaps.get(file);
  if (map === undefined) {
    map = existsSync(`${file}.map`) ? new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]) : null;
    sourceMaps.set(file, map);
  }
  const entry = map?.findEntry(lineNumber, frame.columnNumber ?? 0) as { originalSource?: string; originalLine?: number } | undefined;
  if (!entry?.originalSource) return { url, line: lineNumber };
  return { url: path.resolve(path.dirname(file), entry.originalSource), line: entry.originalLine ?? lineNumber };
}

export function summarizeProfile(profile: CpuProfile, top = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const fn = new Map<string, { name: string; where: string; us: number }>();
  const src = new Map<string, number>();
  let idle = 0;
  let total = 0;
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    const { functionName } = node.callFrame;
    const { url, line: lineNumber } = original(node.callFrame);
    total += us;
    if (functionName === '(idle)' || functionName === '(program)' || functionName === '(garbage collector)') {
      if (functionName === '(idle)') idle += us;
      const key = functionName;
      const entry = fn.get(key) ?? { name: functionName, where: '', us: 0 };
      entry.us += us;
      fn.set(key, entry);
      if (functionName !== '(idle)') src.set(functionName, (src.get(functionName) ?? 0) + us);
      continue;
    }
    const source = sourceOf(url);
    const key = `${functionName}@${url}:${lineNumber}`;
    const entry = fn.get(key) ?? { name: functionName || '(anonymous)', where: `${source}:${lineNumber + 1}`, us: 0 };
    entry.us += us;
    fn.set(key, entry);
    src.set(source, (src.get(source) ?? 0) + us);
  }
  const busy = total - idle;

  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const frame = byId.get(cur)!.callFrame;
      if (frame.functionName === '(idle)') break;
      const { url } = original(frame);
      if (url) seen.add(sourceOf(url));
    }
    for (const source of seen) inclusive.set(source, (inclusive.get(source) ?? 0) + us);
  }
  return {
    totalMs: total / 1000,
    idleMs: idle / 1000,
    functions: [...fn.values()]
      .filter((f) => f.name !== '(idle)')
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, selfMs: f.us / 1000, share: f.us / busy })),
    sources: [...src]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([source, us]) => ({ source, selfMs: us / 1000, share: us / busy })),
    inclusive: [...inclusive]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([source, us]) => ({ source, ms: us / 1000, share: us / busy })),
  };
}

/**
 * Where each request's time went, by family of work, when the profile covers one kind of
 * request (a run with one scenario on the process): every sample goes to the innermost frame
 * on its stack that belongs to a family, so the families add up to the busy time. The hooks
 * and header families are our code together with the library code and Fastify header calls
 * they make; what no family claims is Fastify's and Node's own request handling.
 */
const FAMILIES: Array<[family: string, frame: RegExp]> = [
  ['kernel: socket write (writev)', /^writev (native|node:)/],
  ['garbage collection', /^\(garbage collector\)/],
  ['Node: response header serialization (writeHead)', /^(writeHead|_storeHeader) node:_http/],
  ['Fastify: sending the body (Reply.send)', /^(Reply\.send|onSendEnd|writePayload) fastify/],
  ['request id (genReqId)', /^requestIdFor /],
  ['request logger (child per request)', /^createChildLogger fastify/],
  ['metrics (prom-client)', /prom-client|^observeRequest /],
  ['CORS (@fastify/cors)', /@fastify\/cors/],
  ['rate limit (hook, budgets, limiter, headers)', /budget-hook\.ts|src\/budgets\/|rate-limiter-flexible|^spendBudget |^spendNow |^onRateDecision /],
  ['request id + nosniff headers, onResponse (infrastructure.ts)', /src\/http\/infrastructure\.ts/],
  ['ETag, Cache-Control, If-None-Match (caching.ts)', /src\/http\/caching\.ts/],
  ['parameter validation (params.ts, zod)', /src\/read\/params\.ts|zod/],
  ['read service (cache, mirror)', /src\/read\/|lru-cache/],
  ['MCP: JSON body parsing', /secure-json-parse|^defaultJsonParser /],
  ['MCP: SDK server and transport', /@modelcontextprotocol|@hono/],
  ['MCP: route and fast path (src/mcp)', /src\/mcp\//],
  ['REST handlers (rest.ts)', /src\/http\/rest\.ts/],
  ['direct reads: request glue, headers (direct-reads.ts)', /src\/http\/direct-reads\.ts/],
  ['pages: rendering (preact, src/web/directory, components)', /preact|src\/web\/directory\/|src\/web\/components\//],
  ['pages: security headers (page-security.ts, helmet)', /src\/web\/page-security\.ts|helmet/],
  ['pages: page cache (page-cache.ts)', /src\/web\/page-cache\.ts/],
  ['routing (find-my-way)', /find-my-way/],
  ['Node: HTTP request parsing', /^(parserOnHeadersComplete|parserOnIncoming) /],
];

export interface FamilyCosts {
  requests: number;
  busyMicrosPerRequest: number;
  families: Array<{ family: string; microsPerRequest: number }>;
}

export function familyCosts(profile: CpuProfile, requests: number): FamilyCosts {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frameKey = (id: number) => {
    const { functionName } = byId.get(id)!.callFrame;
    const { url } = original(byId.get(id)!.callFrame);
    return `${functionName || '(anonymous)'} ${url ? sourceOf(url) === 'node internals' ? url : url.includes('node_modules/') ? url.slice(url.lastIndexOf('node_modules/') + 13) : sourceOf(url) : 'native'}`;
  };
  const familyOf = new Map<number, string>();
  const classify = (leaf: number): string => {
    const known = familyOf.get(leaf);
    if (known) return known;
    let found: string | undefined;
    let source: string | undefined;
    for (let cur: number | undefined = leaf; cur !== undefined && !found; cur = parent.get(cur)) {
      const key = frameKey(cur);
      const { url } = original(byId.get(cur)!.callFrame);
      if (source === undefined && url) source = sourceOf(url);
      for (const [family, frame] of FAMILIES) {
        if (frame.test(key)) {
          found = family;
          break;
        }
      }
    }
    const family = found ?? `other: ${source ?? '(native / V8)'}`;
    familyOf.set(leaf, family);
    return family;
  };
  const totals = new Map<string, number>();
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    const us = profile.timeDeltas[i] ?? 0;
    busy += us;
    const family = classify(id);
    totals.set(family, (totals.get(family) ?? 0) + us);
  }
  return {
    requests,
    busyMicrosPerRequest: busy / requests,
    families: [...totals]
      .map(([family, us]) => ({ family, microsPerRequest: us / requests }))
      .sort((a, b) => b.microsPerRequest - a.microsPerRequest),
  };
}

export function formatFamilyCosts(c: FamilyCosts, min = 0.05): string {
  const lines = [`  per request (${Math.round(c.requests).toLocaleString('en-US')} requests, ${c.busyMicrosPerRequest.toFixed(1)} µs of profiled time each):`];
  for (const f of c.families) if (f.microsPerRequest >= min) lines.push(`    ${f.microsPerRequest.toFixed(2).padStart(7)} µs  ${f.family}`);
  return lines.join('\n');
}

export function formatProfileSummary(title: string, s: ProfileSummary): string {
  const lines = [`${title}: ${(s.totalMs / 1000).toFixed(1)} s profiled, ${((s.totalMs - s.idleMs) / 1000).toFixed(1)} s busy`, '  self time by source (share of busy time):'];
  for (const x of s.sources) lines.push(`    ${(x.share * 100).toFixed(1).padStart(5)} %  ${x.source}`);
  lines.push('  time with the source on the stack (inclusive):');
  for (const x of s.inclusive) lines.push(`    ${(x.share * 100).toFixed(1).padStart(5)} %  ${x.source}`);
  lines.push('  self time by function:');
  for (const f of s.functions) lines.push(`    ${(f.share * 100).toFixed(1).padStart(5)} %  ${f.name}  ${f.where}`);
  return lines.join('\n');
}

export async function readProfile(file: string): Promise<CpuProfile> {
  return JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const requestsAt = args.indexOf('--requests');
  const file = args.find((a, i) => !a.startsWith('--') && (topAt < 0 || i !== topAt + 1) && (requestsAt < 0 || i !== requestsAt + 1));
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 25;
  if (!file) {
    console.error('usage: profile-summary.ts FILE.cpuprofile [--top N] [--requests N]');
    process.exit(2);
  }
  const profile = await readProfile(file);
  console.log(formatProfileSummary(path.basename(file), summarizeProfile(profile, top)));
  if (requestsAt >= 0) console.log(formatFamilyCosts(familyCosts(profile, Number(args[requestsAt + 1]))));
}
