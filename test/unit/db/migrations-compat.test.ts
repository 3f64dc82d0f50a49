import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A rolling upgrade migrates first and then replaces the processes one at a time
 * (docs/deploying.md), so the processes of the version before must keep working on a migrated
 * schema: every migration after the last one of the release that made this rule only adds.
 * One that removes, renames or narrows something says so on its first line (`-- contract: …`,
 * shipped only after no running version uses what it removes).
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MIGRATIONS = path.join(ROOT, 'migrations');
/** Migrations up to this number were written before the rule. */
const LAST_BEFORE_THE_RULE = 15;

/** What an older process could trip over, each with the reason. */
const BREAKING: [RegExp, string][] = [
  [/\bDROP\s+(TABLE|COLUMN|VIEW|SCHEMA|TYPE|FUNCTION|INDEX|TRIGGER|CONSTRAINT|SEQUENCE)\b/i, 'drops something'],
  [/\bRENAME\b/i, 'renames something'],
  [/\bALTER\s+COLUMN\s+\S+\s+(SET\s+DATA\s+)?TYPE\b/i, "changes a column's type"],
  [/\bALTER\s+COLUMN\s+\S+\s+SET\s+NOT\s+NULL\b/i, 'makes a column required'],
  [/\bADD\s+COLUMN\s+(IF\s+NOT\s+EXISTS\s+)?\S+\s+[^,;]*\bNOT\s+NULL\b(?![^,;]*\bDEFAULT\b)/i, 'adds a required column without a default'],
  [/\bTRUNCATE\b/i, 'empties a table'],
];

/** The SQL without its comments. */
const code = (sql: string) => sql.replace(/--[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');

function breakingChanges(sql: string): string[] {
  if (/^--\s*contract:/i.test(sql.trimStart())) return [];
  const text = code(sql);
  return BREAKING.filter(([pattern]) => pattern.test(text)).map(([, why]) => why);
}

describe('migrations', () => {
  const files = readdirSync(MIGRATIONS).filter((f) => /^\d+_.*\.sql$/.test(f));

  it.each(files.filter((f) => Number(f.slice(0, f.indexOf('_'))) > LAST_BEFORE_THE_RULE).map((f) => [f]))('%s only adds, or says it contracts', (file) => {
    expect(breakingChanges(readFileSync(path.join(MIGRATIONS, file), 'utf8'))).toEqual([]);
  });

  it('the check finds what breaks an older process, and lets additions and declared contractions pass', () => {
    expect(breakingChanges('ALTER TABLE catalog.listings DROP COLUMN punchline;')).toEqual(['drops something']);
    expect(breakingChanges('ALTER TABLE a RENAME COLUMN b TO c;')).toEqual(['renames something']);
    expect(breakingChanges('ALTER TABLE a ALTER COLUMN b TYPE bigint;')).toEqual(["changes a column's type"]);
    expect(breakingChanges('ALTER TABLE a ADD COLUMN b text NOT NULL;')).toEqual(['adds a required column without a default']);
    expect(breakingChanges("ALTER TABLE a ADD COLUMN b text NOT NULL DEFAULT '';")).toEqual([]);
    expect(breakingChanges('CREATE TABLE x (id bigint PRIMARY KEY, n text NOT NULL); CREATE INDEX x_n ON x (n);')).toEqual([]);
    expect(breakingChanges('-- drop nothing: a comment\nALTER TABLE a ADD COLUMN c int;')).toEqual([]);
    expect(breakingChanges('-- contract: punchline unused since 2.0\nALTER TABLE a DROP COLUMN punchline;')).toEqual([]);
  });
});
