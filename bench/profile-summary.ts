import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where a process spent its time, from a V8 CPU profile (`node --cpu-prof`): self time per
 * function and per source (a package under node_modules, a file of ours, or node itself).
 *
 *   node bin/run-ts.js bench/profile-summary.ts FILE.cpuprofile [--top N]
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
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
    const { functionName, url, lineNumber } = node.callFrame;
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
      const { url, functionName } = byId.get(cur)!.callFrame;
      if (functionName === '(idle)') break;
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
  const file = args.find((a, i) => !a.startsWith('--') && (topAt < 0 || i !== topAt + 1));
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 25;
  if (!file) {
    console.error('usage: profile-summary.ts FILE.cpuprofile [--top N]');
    process.exit(2);
  }
  console.log(formatProfileSummary(path.basename(file), summarizeProfile(await readProfile(file), top)));
}
