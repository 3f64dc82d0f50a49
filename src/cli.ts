/**
 * The `catalog` command. Each subcommand lives in src/cli/<name>.ts and exports a default
 * function taking its arguments and resolving to the exit code.
 */
import { describeFailure } from './cli/start-failure.ts';
import { handleStops, isStopping } from './util/process-stop.ts';
import { keepTickObjectShape } from './util/tick-shape.ts';
import { SERVICE_VERSION } from './util/version.ts';

const commands: Record<string, { summary: string; load: () => Promise<{ default: (args: string[]) => Promise<number> }> }> = {
  serve: { summary: 'run the whole service: migrations, API (REST + MCP) and projector in one process', load: () => import('./cli/serve.ts') },
  api: { summary: 'run an API process only (REST + MCP), for scale-out behind a proxy', load: () => import('./cli/api.ts') },
  projector: { summary: 'run the projector only (one active per database; others wait as standby)', load: () => import('./cli/projector.ts') },
  migrate: { summary: 'apply pending database migrations', load: () => import('./cli/migrate.ts') },
  status: { summary: 'one screen on the cluster: database, Redis, migrations, projector, lag, snapshot, change feed, API processes (--json); exit 1 when unhealthy', load: () => import('./cli/status.ts') },
  import: { summary: 'import an NDJSON catalog file (or - for stdin)', load: () => import('./cli/import.ts') },
  reindex: { summary: 'rebuild the projection and the search index from the write model', load: () => import('./cli/reindex.ts') },
  maker: { summary: 'print a fresh sign-in link for a maker (maker link EMAIL)', load: () => import('./cli/maker.ts') },
  admin: { summary: 'grant or revoke the admin role (admin grant|revoke EMAIL, admin list)', load: () => import('./cli/admin.ts') },
  keys: { summary: 'consumer keys by arrangement: keys create|list|set|rotate|revoke|usage (higher budgets per client)', load: () => import('./cli/keys.ts') },
  review: { summary: 'the review queue and decisions (review list, review approve|reject|hide|restore|feature SLUG)', load: () => import('./cli/review.ts') },
  mcp: { summary: 'what an MCP registry publishes of the server: mcp server-json prints its server.json for PUBLIC_URL', load: () => import('./cli/mcp.ts') },
  'demo-data': { summary: 'write a deterministic demo catalog as NDJSON to stdout', load: () => import('./cli/demo-data.ts') },
};

/**
 * Commands that stop cleanly on SIGTERM, SIGINT or SIGHUP in whatever state they are, starting
 * included (src/util/process-stop.ts; docs/signals.md).
 */
const LONG_RUNNING = new Set(['serve', 'api', 'projector']);

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  return [
    'usage: catalog <command> [options]   (catalog --version prints the version)',
    '',
    'commands:',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    "Run 'catalog <command> --help' for a command's options. Configuration comes from environment variables (see README).",
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v') {
    console.log(SERVICE_VERSION);
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    console.error(`catalog: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  if (LONG_RUNNING.has(name)) {
    // Signals are handled from the first moment: one arriving while the embedded PostgreSQL
    // starts stops the process (and the server) as cleanly as one arriving later.
    handleStops();
    // Before anything schedules work: keeps every later `process.nextTick` fast (see the module).
    keepTickObjectShape();
  } else {
    // A one-off command stopped by a signal exits at once; the 'exit' event still fires, so an
    // embedded PostgreSQL it started is told to stop, and an open transaction rolls back.
    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const) {
      process.once(signal, () => process.exit(code));
    }
  }
  const mod = await command.load();
  return mod.default(rest);
}

const argv = process.argv.slice(2);
main(argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // A start cut short by a stop fails in whatever it was doing; the stop says why and exits.
    if (isStopping()) return;
    // What the failure says, and the status it ends with (src/cli/start-failure.ts; docs/operating.md).
    const failure = describeFailure(err, { longRunning: LONG_RUNNING.has(argv[0] ?? '') });
    console.error(failure.lines.join('\n'));
    process.exitCode = failure.exitCode;
  },
);
