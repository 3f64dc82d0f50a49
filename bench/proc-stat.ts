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
 * utime + stime ticks of a process and every process descended from it (an embedded PostgreSQL
 * and its backends under the `catalog serve` that started it), or undefined off Linux. Only the
 * processes alive now count, each with all its time so far.
 */
export function treeTicks(rootPid: number): number | undefined {
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
    let sum = 0;
    for (const [pid, t] of ticks) if (inTree(pid)) sum += t;
    return sum;
  } catch {
    return undefined;
  }
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
