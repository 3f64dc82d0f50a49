#!/usr/bin/env node
// The `catalog` command. Runs the compiled JavaScript in dist/ when it was built from the
// sources as they are now (`npm run build`, done by `npm install`); otherwise (no build yet, or
// a source changed since the build) the TypeScript sources through tsx's loader, so a change is
// never answered by older compiled code. CATALOG_RUNTIME=sources forces the sources.
import module from 'node:module';
import { pathToFileURL } from 'node:url';
import { buildState, DIST_CLI } from './build-state.js';

if (process.env.CATALOG_RUNTIME !== 'sources' && buildState() === 'current') {
  // Node 22.1 and later keep V8's compiled code of the modules between starts (in
  // NODE_COMPILE_CACHE, by default a folder under the temporary one), so a start compiles only
  // what changed; Node 20 has no such cache and compiles every start.
  module.enableCompileCache?.();
  await import(pathToFileURL(DIST_CLI).href);
} else {
  const { register } = await import('tsx/esm/api');
  const { fileURLToPath } = await import('node:url');
  // The project's tsconfig (JSX settings included) applies whatever the working directory.
  register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
  await import('../src/cli.ts');
}
