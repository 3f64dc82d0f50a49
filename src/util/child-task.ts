import { fork } from 'node:child_process';
import { projectPath } from './project-file.ts';

/**
 * A module run as a child process for one task, named twice: its TypeScript source (from the
 * project's root) and the file the build makes of it (from dist/, an entry point of its own in
 * bin/bundle.js). The module calls `serveChildTask` with the work to do.
 */
export interface ChildTaskModule {
  source: string;
  compiled: string;
}

/** Whether this code runs from the TypeScript sources (tsx, the tests) rather than the build. */
const FROM_SOURCES = import.meta.url.endsWith('.ts');

type Answer<T> = { result: T } | { error: string };

/**
 * Runs `module` as a child process, hands it `data` and resolves with its result; rejects with
 * its error, or when it ends without an answer. From the sources the child starts through
 * `bin/run-ts.js` (tsx), from the build it runs the compiled file. A process rather than a
 * thread: everything the task allocated is given back to the system when it exits (a thread's
 * allocations stay in this process's allocator), and this process's own heap, resident size and
 * event loop are untouched. The child inherits no Node options (a profiler, say) and stops when
 * this process does.
 */
export function runChildTask<T>(module: ChildTaskModule, data: unknown): Promise<T> {
  const [file, args] = FROM_SOURCES ? [projectPath('bin/run-ts.js'), [projectPath(module.source)]] : [projectPath(module.compiled), []];
  const child = fork(file, args, { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
  return new Promise<T>((resolve, reject) => {
    let answered = false;
    child.once('message', (message: Answer<T>) => {
      answered = true;
      if ('error' in message) reject(new Error(message.error));
      else resolve(message.result);
    });
    child.once('error', (err) => {
      answered = true;
      reject(err);
    });
    child.once('exit', (code, signal) => {
      if (!answered) reject(new Error(`${module.source} ended (${signal ?? `exit code ${code}`}) without an answer`));
    });
    child.send({ data });
  });
}

/**
 * The child's side: waits for the task's data, runs `work` on it, sends back its result or its
 * error, and lets the process end. If the parent goes first, the child stops at once.
 */
export function serveChildTask<D, R>(work: (data: D) => Promise<R>): void {
  let done = false;
  process.once('disconnect', () => {
    if (!done) process.exit(1);
  });
  process.once('message', (message: { data: D }) => {
    const reply = (answer: Answer<R>) => {
      done = true;
      process.send?.(answer, () => process.disconnect());
    };
    work(message.data).then(
      (result) => reply({ result }),
      (err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }),
    );
  });
}
