import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DEMO_ANCHOR_DAY, DEMO_DEFAULT_COUNT, DEMO_DEFAULT_SEED, demoCatalogLines } from '../demo/demo-data.ts';
import { parseCommandArgs } from './common.ts';

const HELP = `usage: catalog demo-data [--count N] [--seed S]

Writes a demo catalog as NDJSON to stdout: about 30 categories, then N listings (default
${DEMO_DEFAULT_COUNT}) with believable names, copy, tags, labels, plans, promos and a mix of statuses.
The same N and S (default ${DEMO_DEFAULT_SEED}) always give byte-identical output; dates are placed
relative to ${DEMO_ANCHOR_DAY}, never today. Import it with: catalog demo-data | catalog import -`;

const MAX_COUNT = 10_000_000;

function wholeNumber(value: string | undefined, name: string, fallback: number, max: number): number | string {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) > max) return `--${name} must be a whole number from 0 to ${max}`;
  return Number(value);
}

export default async function demoDataCommand(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(args, { count: { type: 'string' }, seed: { type: 'string' } }, HELP);
  if ('exitCode' in parsed) return parsed.exitCode;
  const count = wholeNumber(parsed.values.count, 'count', DEMO_DEFAULT_COUNT, MAX_COUNT);
  const seed = wholeNumber(parsed.values.seed, 'seed', DEMO_DEFAULT_SEED, 0xffff_ffff);
  for (const v of [count, seed]) {
    if (typeof v === 'string') {
      process.stderr.write(`${v}\n\n${HELP}\n`);
      return 2;
    }
  }

  const lines = demoCatalogLines({ count: count as number, seed: seed as number });
  try {
    await pipeline(Readable.from(chunks(lines)), process.stdout);
  } catch (err) {
    // A reader that stops early (catalog demo-data | head) is not an error.
    if ((err as NodeJS.ErrnoException).code !== 'EPIPE') throw err;
  }
  return 0;
}

/** Lines joined into chunks of about 64 KB: far fewer writes than one per line. */
function* chunks(lines: Iterable<string>): Generator<string> {
  let chunk = '';
  for (const line of lines) {
    chunk += `${line}\n`;
    if (chunk.length >= 64 * 1024) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}
