import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A file or folder shipped at the top of the project (migrations/, search-config/,
 * package.json), found by walking up from this module: the same call works from the sources
 * (src/util) and from the compiled output (dist/src/util, whose dist/ holds its own
 * package.json). Only folders holding a package.json are looked in, so a folder's own README.md
 * never stands in for the project's.
 */
export function projectPath(name: string): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, name);
    if (existsSync(path.join(dir, 'package.json')) && existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${name} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}
