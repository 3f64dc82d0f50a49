import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig, type Config } from '../config/config.ts';

/**
 * Parses a subcommand's options with node's parseArgs; on bad options prints the problem and
 * the command's help. Returns undefined when the caller should exit with `exitCode`.
 */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
  help: string,
  opts: { allowPositionals?: boolean } = {},
): { values: ReturnType<typeof parseArgs<{ options: T; allowPositionals: true }>>['values']; positionals: string[] } | { exitCode: number } {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: opts.allowPositionals ?? false, strict: true });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${help}`);
    return { exitCode: 2 };
  }
  if ((parsed.values as Record<string, unknown>).help) {
    console.log(help);
    return { exitCode: 0 };
  }
  return { values: parsed.values as never, positionals: parsed.positionals };
}

/** The configuration, with `--data-dir` (when given) taking the place of DATA_DIR. */
export function configFromArgs(values: { 'data-dir'?: string | boolean | undefined }): Config {
  const dataDir = typeof values['data-dir'] === 'string' ? values['data-dir'] : undefined;
  return loadConfig(process.env, dataDir ? { DATA_DIR: dataDir } : {});
}
