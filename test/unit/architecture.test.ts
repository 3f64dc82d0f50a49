import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The code map of ARCHITECTURE.md, held against the code's own imports: every folder imports only
 * folders on the floors below it, no files import each other in a circle, no folder is crowded,
 * and each kind of table has its one writer.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const MAP = codeMapSection(readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8'));

/** ARCHITECTURE.md's "## Code map" section, up to the next heading of its level. */
function codeMapSection(markdown: string): string {
  const start = markdown.indexOf('\n## Code map\n');
  if (start < 0) throw new Error('ARCHITECTURE.md has no "## Code map" section');
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The paths a cell names in backticks, without a folder's trailing slash. */
function named(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, ''));
}

/** The code map's table: one row per room, top first, with its "May import" cell. */
const ROWS = MAP.split('\n')
  .filter((line) => line.startsWith('| `'))
  .map((line) => {
    const [rooms = '', , mayImport = ''] = line.split('|').slice(1).map((cell) => cell.trim());
    return { rooms: named(rooms), mayImport };
  });

/** The floors, top first: a room may import only rooms listed after it. */
const FLOORS = ROWS.flatMap((row) => row.rooms);

/**
 * The "May import" column: the complete list for each room, as the paths its cell names; a cell
 * that begins with "anything" (the command, the process, the composition) lists no limit but the floors.
 */
const MAY_IMPORT: Record<string, readonly string[]> = Object.fromEntries(
  ROWS.filter((row) => !row.mayImport.startsWith('anything') && !row.mayImport.startsWith('`src/http`, `src/mcp`, `src/web` and what they need')).flatMap((row) =>
    row.rooms.map((room) => [room, named(row.mayImport)]),
  ),
);

/** The most files a folder of src/ holds directly (its README among them, its subfolders' not). */
const MAX_FILES_IN_A_FOLDER = 20;

/** Every folder under `dir`, `dir` included, from the root. */
function foldersOf(dir: string): string[] {
  return [dir, ...readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? foldersOf(path.posix.join(dir, entry.name)) : []))];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(rel);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [rel] : [];
  });
}

const FILES = [...sourceFiles('src'), ...sourceFiles('projector')];
const SOURCES = new Map(FILES.map((file) => [file, readFileSync(path.join(ROOT, file), 'utf8')]));

/** Relative imports (static, dynamic and re-exports) of a file, as paths from the root. */
function importsOf(file: string): string[] {
  const out: string[] = [];
  for (const m of SOURCES.get(file)!.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    out.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!)));
  }
  return out;
}

function roomOf(file: string): string {
  const room = FLOORS.find((r) => file === r || file.startsWith(`${r}/`));
  if (!room) throw new Error(`${file} is in no room of the code map: add its folder to ARCHITECTURE.md and FLOORS`);
  return room;
}

describe('the code map', () => {
  it('is read from ARCHITECTURE.md: every room with its floor and its list', () => {
    expect(FLOORS.slice(0, 4)).toEqual(['src/cli.ts', 'src/cli', 'src/service.ts', 'src/app.ts']);
    expect(FLOORS).toContain('projector');
    expect(MAY_IMPORT['src/contract']).toEqual([]);
    expect(MAY_IMPORT['src/ops']).toContain('projector/lag.ts');
    for (const [room, allowed] of Object.entries(MAY_IMPORT)) {
      for (const target of allowed) expect(FLOORS.indexOf(roomOf(target)), `${room} may import ${target}`).toBeGreaterThan(FLOORS.indexOf(room));
    }
  });

  it('names every folder of src/ and every top-level folder', () => {
    const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
    const folders = new Set<string>();
    for (const file of tracked) {
      const parts = file.split('/');
      if (parts.length > 1 && !parts[0]!.startsWith('.')) folders.add(parts[0]!);
      if (parts[0] === 'src' && parts.length > 2) folders.add(`src/${parts[1]}`);
    }
    const mentioned = new Set(named(MAP));
    expect([...folders].filter((folder) => !mentioned.has(folder)).sort()).toEqual([]);
  });

  it('reads the environment in src/config, and only where ARCHITECTURE.md says why elsewhere', () => {
    const elsewhere = FILES.filter((file) => !file.startsWith('src/config/') && /(?<!\.\.\.)\bprocess\.env\b/.test(SOURCES.get(file)!));
    expect(elsewhere.sort()).toEqual(['src/cli/common.ts', 'src/cli/mcp.ts', 'src/cli/run-service.ts', 'src/util/tracing-sdk.ts', 'src/util/tracing.ts']);
  });

  it('every source file belongs to a room of the code map', () => {
    for (const file of FILES) expect(() => roomOf(file)).not.toThrow();
  });

  it('no import runs back up a floor', () => {
    const upward: string[] = [];
    for (const file of FILES) {
      for (const target of importsOf(file)) {
        if (!SOURCES.has(target)) continue;
        const from = FLOORS.indexOf(roomOf(file));
        const to = FLOORS.indexOf(roomOf(target));
        if (to < from) upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('each folder imports only what its row of the code map allows', () => {
    const outside: string[] = [];
    for (const file of FILES) {
      const room = roomOf(file);
      const allowed = MAY_IMPORT[room];
      if (!allowed) continue;
      for (const target of importsOf(file)) {
        if (!SOURCES.has(target) || roomOf(target) === room) continue;
        if (!allowed.some((a) => target === a || target.startsWith(`${a}/`))) outside.push(`${file} -> ${target}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('no files import each other in a circle', () => {
    const graph = new Map(FILES.map((f) => [f, importsOf(f).filter((t) => SOURCES.has(t))]));
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      stack.push(file);
      for (const next of graph.get(file)!) {
        if (state.get(next) === 'open') circles.push([...stack.slice(stack.indexOf(next)), next].join(' -> '));
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of FILES) if (!state.has(file)) visit(file);
    expect(circles).toEqual([]);
  });

  it(`no folder of src/ holds more than ${MAX_FILES_IN_A_FOLDER} files directly`, () => {
    const crowded = foldersOf('src')
      .map((dir) => `${dir}: ${readdirSync(path.join(ROOT, dir), { withFileTypes: true }).filter((entry) => entry.isFile()).length}`)
      .filter((line) => Number(line.split(': ')[1]) > MAX_FILES_IN_A_FOLDER);
    expect(crowded).toEqual([]);
  });

  it('http and mcp share the composition type and never import each other, pages or the composition', () => {
    const crossing = FILES.filter((f) => f.startsWith('src/http/') || f.startsWith('src/mcp/')).flatMap((file) =>
      importsOf(file)
        .filter((t) => t === 'src/app.ts' || t.startsWith('src/web/') || (file.startsWith('src/http/') ? t.startsWith('src/mcp/') : t.startsWith('src/http/app')))
        .map((t) => `${file} -> ${t}`),
    );
    expect(crossing).toEqual([]);
  });

  it('reads never import the write model', () => {
    const reads = FILES.filter((f) => /^src\/(read|search|http)\//.test(f));
    const writeSide = reads.flatMap((file) => importsOf(file).filter((t) => t.startsWith('src/catalog/')).map((t) => `${file} -> ${t}`));
    expect(writeSide).toEqual([]);
  });
});

describe('who writes which tables', () => {
  const writes = (schema: string) => new RegExp(`\\b(?:INSERT\\s+INTO|UPDATE|DELETE\\s+FROM|TRUNCATE)\\s+${schema}\\.(\\w+)`, 'gi');
  const writers = (schema: string) =>
    FILES.flatMap((file) => [...SOURCES.get(file)!.matchAll(writes(schema))].map((m) => `${file}: ${m[1]}`));

  it('only the projector writes the projection', () => {
    expect(writers('projection').filter((w) => !w.startsWith('projector/'))).toEqual([]);
    expect(writers('projection').length).toBeGreaterThan(0);
  });

  it('only the catalog and accounts write the write model; the projector only prunes the outbox it consumed', () => {
    const others = writers('catalog').filter((w) => {
      if (w.startsWith('src/catalog/') || w.startsWith('src/auth/')) return false;
      return !/^projector\/[\w-]+\.ts: outbox$/.test(w);
    });
    expect(others).toEqual([]);
  });

  it('only accounts write the authorization records', () => {
    expect(writers('auth').filter((w) => !w.startsWith('src/auth/'))).toEqual([]);
  });

  it("only the processes' heartbeats write the operators' records", () => {
    expect(writers('ops').filter((w) => !w.startsWith('src/ops/heartbeat.ts'))).toEqual([]);
    expect(writers('ops').length).toBeGreaterThan(0);
  });
});
