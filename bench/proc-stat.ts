import { readFileSync } from 'node:fs';

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
