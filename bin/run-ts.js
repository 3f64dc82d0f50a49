#!/usr/bin/env node
// Runs one TypeScript entry file (first argument) with the remaining arguments.
import { register } from 'tsx/esm/api';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const [entry, ...rest] = process.argv.slice(2);
if (!entry) {
  console.error('usage: run-ts.js FILE.ts [args...]');
  process.exit(2);
}
process.argv = [process.argv[0], path.resolve(entry), ...rest];
register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import(pathToFileURL(path.resolve(entry)).href);
