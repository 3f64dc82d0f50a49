import { open, type FileHandle } from 'node:fs/promises';
import readline from 'node:readline';
import type { Readable } from 'node:stream';
import cliProgress from 'cli-progress';
import { importCatalog } from '../catalog/import/import-catalog.ts';
import { formatLineError } from '../catalog/listings/listing-input.ts';
import { migrate } from '../db/migrate.ts';
import { openDatabase } from '../db/open.ts';
import { createPool } from '../db/pool.ts';
import { configFromArgs, parseCommandArgs } from './common.ts';

const HELP = `usage: catalog import FILE|- [--data-dir DIR]

Imports an NDJSON catalog (one JSON object per line; - reads stdin):
  {"kind":"category","slug":"design","name":"Design","noun":"resources"}
  {"kind":"listing","slug":"pixel-forge","name":"Pixel Forge","punchline":"...","description":"<p>...</p>",
   "website":"https://pixelforge.example","category":"design", ...}
Categories and listings are inserted or updated by slug. Every line is validated; if any line is
invalid nothing is imported, each problem is printed as "line N: field: message" and the exit
code is 1. Otherwise everything is written in one transaction and a summary line is printed.
Uses DATABASE_URL, or the embedded PostgreSQL under DIR (default ./.data, or DATA_DIR).`;

function plural(n: number, word: string, words = `${word}s`): string {
  return `${n} ${n === 1 ? word : words}`;
}

export default async function importCommand(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(args, { 'data-dir': { type: 'string' } }, HELP, { allowPositionals: true });
  if ('exitCode' in parsed) return parsed.exitCode;
  if (parsed.positionals.length !== 1) {
    process.stderr.write(`catalog import: name one file, or - for stdin\n\n${HELP}\n`);
    return 2;
  }
  const source = parsed.positionals[0]!;
  const config = configFromArgs(parsed.values);

  // Open the file before the database, so a mistyped name fails at once.
  let file: FileHandle | undefined;
  let input: Readable;
  let size: number | undefined;
  if (source === '-') {
    input = process.stdin;
  } else {
    try {
      file = await open(source, 'r');
      const stat = await file.stat();
      if (stat.isDirectory()) {
        await file.close();
        process.stderr.write(`catalog import: cannot read ${source}: it is a directory, not an NDJSON file\n`);
        return 1;
      }
      size = stat.isFile() ? stat.size : undefined;
    } catch (err) {
      process.stderr.write(`catalog import: cannot read ${source}: ${(err as Error).message}\n`);
      return 1;
    }
    input = file.createReadStream({ highWaterMark: 256 * 1024 });
  }
  const name = source === '-' ? 'stdin' : source;

  const database = await openDatabase(config, (line) => process.stderr.write(`${line}\n`));
  const pool = createPool(database.connectionString, { max: 2, applicationName: 'catalog import' });
  const bar =
    process.stderr.isTTY && size !== undefined
      ? new cliProgress.SingleBar(
          { format: 'importing [{bar}] {percentage}% | {lines} lines | {errors} errors', stream: process.stderr, hideCursor: true },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
  const started = performance.now();
  try {
    await migrate(database.connectionString, { log: (line) => process.stderr.write(`${line}\n`) });
    bar?.start(size!, 0, { lines: 0, errors: 0 });
    const result = await importCatalog(pool, linesOf(input), {
      onProgress: (p) => bar?.update((input as Readable & { bytesRead?: number }).bytesRead ?? 0, { lines: p.lines, errors: p.errors }),
    });
    bar?.update(size!, {});
    bar?.stop();
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (!result.ok) {
      process.stderr.write(result.errors.map((e) => `${formatLineError(e)}\n`).join(''));
      const badLines = new Set(result.errors.map((e) => e.line)).size;
      process.stdout.write(
        `imported nothing from ${name}: ${plural(result.errors.length, 'error')} on ${plural(badLines, 'line')} ` +
          `(${plural(result.lines, 'line')} checked in ${seconds} s)\n`,
      );
      return 1;
    }
    const { created, updated } = result.listings;
    process.stdout.write(
      `imported ${plural(created + updated, 'listing')} (${created} new, ${updated} updated) and ` +
        `${plural(result.categories, 'category', 'categories')} from ${name} in ${seconds} s\n`,
    );
    return 0;
  } finally {
    bar?.stop();
    await file?.close();
    await pool.end();
    await database.close();
  }
}

/**
 * The lines of a stream, created only when the import starts reading: a readline interface
 * emits lines as soon as it exists, and lines emitted before anyone iterates are lost.
 */
async function* linesOf(input: Readable): AsyncGenerator<string> {
  yield* readline.createInterface({ input, crlfDelay: Infinity });
}
