import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * SECURITY.md's threat model names, for each threat, the test that shows it is stopped: as
 * `test/…/file.test.ts › describe › test name`, several separated by `;`, a name cut short with
 * `…`. Held here against the suite: every file it names exists, and every name is found in it.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(path.join(ROOT, 'SECURITY.md'), 'utf8');
const TEST_FILE = /test\/[\w./-]+\.test\.tsx?/g;

/** The threat table rows: the lines of a table under "Threats", header and rule left out. */
function threatRows(): string[][] {
  const section = doc.slice(doc.indexOf('## Threats'), doc.indexOf('## Out of scope'));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Asset |'))
    .map((line) =>
      line
        .slice(2, -2)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

/** Each test file a cell names, with the names given after it (› … up to `;` or the next file). */
function references(cell: string): { file: string; names: string[] }[] {
  const found = [...cell.matchAll(TEST_FILE)];
  return found.map((match, i) => {
    const after = cell.slice(match.index + match[0].length, found[i + 1]?.index ?? cell.length);
    // A `;` inside a name (or a note after it) does not start a new one: only `; ›` does.
    const pieces: string[] = [];
    for (const piece of after.split(';')) {
      if (piece.trim().startsWith('›') || pieces.length === 0) pieces.push(piece);
      else pieces[pieces.length - 1] += `;${piece}`;
    }
    const names = pieces
      .filter((piece) => piece.trim().startsWith('›'))
      .flatMap((piece) => piece.split('›').slice(1))
      .map((name) => name.replace(/[`]/g, '').split('…')[0]!.replace(/[\s;]+$/, '').trim())
      .filter((name) => name.length > 0);
    return { file: match[0], names };
  });
}

/** A test file's text as its names read: escaped quotes undone, every run of spaces one space. */
function testText(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8').replace(/\\'/g, "'").replace(/\s+/g, ' ');
}

/**
 * The names of a file's tests and groups as patterns: a name made at run time (a template
 * literal's `${…}`, or it.each's `%s`) matches whatever stands in its place.
 */
function namePatterns(text: string): RegExp[] {
  const literal = /\b(?:it|test|describe)(?:\.each\(\[[\s\S]*?\]\s*\)|\.each\([^()]*(?:\([^()]*\))?[^()]*\))?\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g;
  return [...text.matchAll(literal)].map(
    ([, , name]) => new RegExp(`^${name!.split(/\$\{[^}]*\}|%[sdijo]/).map((piece) => piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.+?')}$`),
  );
}

describe('SECURITY.md', () => {
  const rows = threatRows();

  it('has a threat table whose every row names an asset, a threat, what stops it and a test', () => {
    expect(rows.length).toBeGreaterThanOrEqual(40);
    for (const row of rows) {
      expect(row, row.join(' | ')).toHaveLength(4);
      expect(row.every((cell) => cell.length > 0), row.join(' | ')).toBe(true);
      expect(references(row[3]!).length, `no test named for: ${row[1]}`).toBeGreaterThan(0);
    }
  });

  it('names only test files that exist, and test names found in them', () => {
    const missing: string[] = [];
    for (const row of rows) {
      for (const { file, names } of references(row[3]!)) {
        if (!existsSync(path.join(ROOT, file))) {
          missing.push(`${file} (no such file)`);
          continue;
        }
        const text = testText(file);
        const patterns = namePatterns(text);
        for (const name of names.map((n) => n.replace(/\s+/g, ' '))) {
          // A note in parentheses may follow a name.
          const readings = [name, name.replace(/\s*\((?:[^()]|\([^()]*\))*\)$/, '')];
          if (!readings.some((n) => text.includes(n) || patterns.some((pattern) => pattern.test(n)))) missing.push(`${file} › ${name}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('says how to report a vulnerability and what is out of scope', () => {
    expect(doc).toMatch(/## Reporting a vulnerability\n\n.*private vulnerability reporting/);
    expect(doc.slice(doc.indexOf('## Out of scope')).match(/^- /gm)?.length ?? 0).toBeGreaterThanOrEqual(10);
  });
});
