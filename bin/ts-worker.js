// A worker thread's start when the service runs from its TypeScript sources (src/util/worker.ts):
// registers tsx in this thread, then imports the worker's module (workerData.entry).
import { register } from 'tsx/esm/api';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { workerData } from 'node:worker_threads';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import(pathToFileURL(workerData.entry).href);
