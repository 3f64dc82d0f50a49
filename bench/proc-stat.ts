import { readdirSync, readFileSync } from 'node:fs';

/** CPU time as Linux /proc counts it, for the benchmark's "server cores" and "other cores". */

/** Clock ticks per second of /proc figures (USER_HZ; 100 on Linux builds we know of). */
export const TICKS = 100;

/** Busy ticks of every core together (Linux /proc/stat), or undefined off Linux. */
export function machineBusyTicks(): number | undefined {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
    return total - cpu[3]! - cpu[4]!;
  } catch {
    return undefined;
  }
}

/**
 * utime + stime ticks of a process and of every process descended from it (an embedded
 * PostgreSQL and its backends under the `catalog serve` that started it), by pid, or undefined
 * off Linux. Compare two readings with ticksSpent: a process that ended in between took its
 * ticks with it.
 */
export function treeTicks(rootPid: number): Map<number, number> | undefined {
  try {
    const parent = new Map<number, number>();
    const ticks = new Map<number, number>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue; // gone meanwhile
      }
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(entry), Number(fields[1]));
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    }
    const inTree = (pid: number): boolean => {
      for (let p: number | undefined = pid, depth = 0; p !== undefined && p > 1 && depth < 64; p = parent.get(p), depth++) if (p === rootPid) return true;
      return false;
    };
    return new Map([...ticks].filter(([pid]) => inTree(pid)));
  } catch {
    return undefined;
  }
}

/** Ticks spent between two readings of treeTicks by the processes alive at the second (new ones in full). */
export function ticksSpent(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, t] of after) sum += t - Math.min(t, before.get(pid) ?? 0);
  return sum;
}

/** utime + stime ticks of one process, or undefined. */
export function processTicks(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** utime + stime ticks and the command name of every process now alive, by pid (Linux; empty elsewhere). */
export function everyProcessTicks(): Map<number, { name: string; ticks: number }> {
  const out = new Map<number, { name: string; ticks: number }>();
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        out.set(Number(entry), { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ticks: Number(fields[11]) + Number(fields[12]) });
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // not Linux
  }
  return out;
}

/** The processes that spent the most CPU between two readings of everyProcessTicks, as "name seconds". */
export function topSpenders(before: Map<number, { name: string; ticks: number }>, after: Map<number, { name: string; ticks: number }>, n: number, skip: ReadonlySet<number>): string[] {
  const byName = new Map<string, number>();
  for (const [pid, a] of after) {
    if (skip.has(pid)) continue;
    const spent = a.ticks - (before.get(pid)?.ticks ?? 0);
    if (spent > 0) byName.set(a.name, (byName.get(a.name) ?? 0) + spent);
  }
  return [...byName]
    .sort((x, y) => y[1] - x[1])
    .slice(0, n)
    .map(([name, t]) => `${name} ${(t / TICKS).toFixed(1)}`);
}
