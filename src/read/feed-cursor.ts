import { CURSOR_PATTERN } from '../contract/schemas.ts';

/**
 * Cursors of the change feed. A cursor names a position in the change log of one catalog
 * database: `<log>-<position>`, where `log` is the 8 hex digits that database's log was given
 * when it was created (migration 009) and `position` the last change the holder has applied.
 * Clients treat cursors as opaque (docs/api.md: "Export and change feed"); the log part lets the feed tell
 * a cursor of another database, or of a database recreated since, from one of its own.
 */
export interface ChangeLogPosition {
  /** Names the change log (one per catalog database). */
  readonly log: string;
  /** The last change included; 0 before any change. */
  readonly position: number;
}

export function formatCursor(p: ChangeLogPosition): string {
  return `${p.log}-${p.position}`;
}

/** The position a cursor names, or undefined when the text is not a cursor. */
export function parseCursor(text: string): ChangeLogPosition | undefined {
  const m = CURSOR_PATTERN.exec(text);
  if (!m) return undefined;
  const position = Number(m[2]);
  return Number.isSafeInteger(position) ? { log: m[1]!, position } : undefined;
}

/**
 * The export's entity tag: the export at a position is the same bytes on every API process
 * (the projection at that position, in a fixed order and format), so the tag derives from the
 * position alone; each content coding has its own tag. The `1` names the layout of the answer
 * (one Product per line, newest first): a new layout gets a new number.
 */
export function exportEtag(p: ChangeLogPosition, encoding: 'identity' | 'gzip' | 'br' = 'identity'): string {
  const base = `export-1-${p.log}-${p.position}`;
  return `"${encoding === 'identity' ? base : `${base}-${encoding}`}"`;
}
