// Whether dist/ holds a build of the sources as they are now. `npm run build` records a
// fingerprint of every file the compiler reads (bin/build.js); `catalog` compares it with the
// sources before it runs dist/, so a changed source is never answered by older compiled code.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DIST_CLI = path.join(ROOT, 'dist', 'src', 'cli.js');
export const STAMP = path.join(ROOT, 'dist', 'build-stamp.json');

/** Folders compiled to dist/, and the files that steer the compiler (the lock file: the bundle holds the packages). */
const SOURCE_DIRS = ['src', 'projector'];
const SOURCE_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];
const COMPILED = /\.(ts|tsx|mts|cts)$/;

function sourceFiles() {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (COMPILED.test(entry.name)) files.push(full);
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(path.join(ROOT, dir))) walk(path.join(ROOT, dir));
  for (const file of SOURCE_FILES) if (existsSync(path.join(ROOT, file))) files.push(path.join(ROOT, file));
  return files.sort();
}

/**
 * Two fingerprints of the sources: `stat` (names, sizes, modification times; a few
 * milliseconds) and `content` (names and bytes), checked only when `stat` differs, so a file
 * touched but unchanged, or a checkout that reset times, still counts as built.
 */
export function fingerprint(kind) {
  const hash = createHash('sha256');
  for (const file of sourceFiles()) {
    hash.update(path.relative(ROOT, file)).update('\0');
    if (kind === 'stat') {
      const s = statSync(file);
      hash.update(`${s.size}:${s.mtimeMs}`);
    } else {
      hash.update(readFileSync(file));
    }
    hash.update('\n');
  }
  return hash.digest('hex');
}

/** Whether the sources are present at all (an image that ships only dist/ has none). */
export function sourcesPresent() {
  return existsSync(path.join(ROOT, 'src', 'cli.ts'));
}

/**
 * 'current' when dist/ was built from the sources as they are, 'missing' when there is no
 * complete build, 'stale' when a source changed since it was built.
 */
export function buildState() {
  if (!existsSync(DIST_CLI) || !existsSync(STAMP)) return 'missing';
  if (!sourcesPresent()) return 'current';
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return 'missing';
  }
  if (stamp.stat === fingerprint('stat')) return 'current';
  return stamp.content === fingerprint('content') ? 'current' : 'stale';
}
