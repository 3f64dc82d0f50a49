import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Freezing a server the run started (SIGSTOP, then SIGCONT): its processes stay, its sockets
 * stay open, and nothing answers, as with a stalled disk or a machine that stopped. Only ever
 * for processes the run itself started (its own PostgreSQL, its own redis-server).
 */

/** `pid` and every process below it, parents before children (read from /proc). */
function processTree(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    out.push(p);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${p}/task/${task}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean)) visit(Number(child));
    }
  };
  visit(pid);
  return out;
}

/** The postmaster of a PostgreSQL data folder (its postmaster.pid), or undefined when none runs. */
export function postmasterPid(pgDataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(pgDataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export interface Freeze {
  /** The processes stopped. */
  readonly pids: readonly number[];
  /** SIGCONT to every one of them (children first); safe to call twice. */
  thaw(): void;
}

/**
 * SIGSTOPs `root` and everything below it: the parent first, so that it forks nothing new
 * meanwhile, then its children (looked for again once it is stopped). The caller thaws in a
 * `finally`; a process exit thaws too.
 */
export function freezeTree(root: number): Freeze {
  process.kill(root, 'SIGSTOP');
  const pids = processTree(root);
  for (const pid of pids.slice(1)) {
    try {
      process.kill(pid, 'SIGSTOP');
    } catch {
      // Gone meanwhile.
    }
  }
  let thawed = false;
  const thaw = () => {
    if (thawed) return;
    thawed = true;
    process.off('exit', thaw);
    for (const pid of [...pids].reverse()) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Gone meanwhile.
      }
    }
  };
  process.on('exit', thaw);
  return { pids, thaw };
}
