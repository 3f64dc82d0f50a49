import { readFile } from 'node:fs/promises';

/**
 * Memory of a process as the kernel counts it (Linux /proc): VmRSS is what it holds in RAM now,
 * VmHWM the most it ever held.
 */
export interface Footprint {
  rssMB: number;
  peakRssMB: number;
}

function field(status: string, name: string): number {
  const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
  if (!m) throw new Error(`no ${name} in /proc status`);
  return Number(m[1]) / 1024;
}

export async function footprintOf(pid: number): Promise<Footprint> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return { rssMB: field(status, 'VmRSS'), peakRssMB: field(status, 'VmHWM') };
}
