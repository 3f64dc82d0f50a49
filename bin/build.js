#!/usr/bin/env node
// `npm run build`: compiles src/ and projector/ to dist/ with tsc (which checks the types),
// bundles the command with esbuild into dist/src/cli.js and its chunks (see bundle.js), then
// stamps the build with a fingerprint of the sources it compiled (see build-state.js). With --at-install (the `prepare`
// script of `npm install`), a checkout without sources or without the compiler is left unbuilt:
// `catalog` then runs the sources through tsx.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fingerprint, ROOT, sourcesPresent, STAMP } from './build-state.js';
import { bundle } from './bundle.js';

const atInstall = process.argv.includes('--at-install');

let tsc;
try {
  tsc = createRequire(path.join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  tsc = undefined;
}
if (atInstall && (!sourcesPresent() || !tsc)) {
  console.error(`catalog: not compiling at install (${tsc ? 'no sources here' : 'TypeScript is not installed'}); the catalog command runs the sources through tsx`);
  process.exit(0);
}
if (!tsc) {
  console.error('catalog: cannot build: TypeScript is not installed (npm install without --omit=dev)');
  process.exit(1);
}

// Fingerprints first: a source edited while tsc runs leaves the build stale, never wrongly current.
const stamp = { stat: fingerprint('stat'), content: fingerprint('content') };
rmSync(STAMP, { force: true });
// Compiled files of sources since deleted must not linger in dist/.
for (const dir of ['src', 'projector']) rmSync(path.join(ROOT, 'dist', dir), { recursive: true, force: true });
const result = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
if (result.status !== 0) {
  console.error('catalog: the build failed; the catalog command runs the sources through tsx until a build succeeds');
  process.exit(atInstall ? 0 : (result.status ?? 1));
}
if (!existsSync(path.join(ROOT, 'dist', 'src', 'cli.js'))) {
  console.error('catalog: the build wrote no dist/src/cli.js');
  process.exit(1);
}
try {
  await bundle();
} catch (err) {
  // The modules tsc wrote run as they are (slower to start): a failed bundle costs time, not service.
  console.error(`catalog: the bundle failed (${err instanceof Error ? err.message : String(err)}); dist/ runs the modules as compiled`);
  if (!atInstall) process.exit(1);
}
writeFileSync(STAMP, `${JSON.stringify(stamp)}\n`);
