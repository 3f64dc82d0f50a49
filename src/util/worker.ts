import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { projectPath } from './project-file.ts';

/**
 * A module run in a worker thread, named twice: its TypeScript source (from the project's root)
 * and the file the build makes of it (from dist/, an entry point of its own in bin/bundle.js).
 */
export interface WorkerModule {
  source: string;
  compiled: string;
}

/** Whether this code runs from the TypeScript sources (tsx, the tests) rather than the build. */
const FROM_SOURCES = import.meta.url.endsWith('.ts');

/**
 * Runs `module` in a worker thread with `data` as its `workerData`, and resolves with the first
 * message it posts; rejects with its error if it throws, or if it ends without posting. From the
 * sources the thread starts through `bin/ts-worker.js`, which registers tsx first; from the build
 * it runs the compiled file directly. The worker's heap is its own, and goes with it when it ends.
 */
export async function runInWorker<T>(module: WorkerModule, data: unknown): Promise<T> {
  const worker = FROM_SOURCES
    ? new Worker(projectPath('bin/ts-worker.js'), { workerData: { entry: projectPath(module.source), data } })
    : new Worker(projectPath(module.compiled), { workerData: { data } });
  const exited = once(worker, 'exit').then(([code]) => {
    throw new Error(`worker ${module.source} ended (exit code ${code}) without an answer`);
  });
  // 'error' carries what the thread threw; once() rejects with it.
  const answered = once(worker, 'message').then(([message]) => message as T);
  try {
    return await Promise.race([answered, exited]);
  } finally {
    exited.catch(() => undefined);
    answered.catch(() => undefined);
  }
}
