import { runService } from './run-service.ts';

const HELP = `usage: catalog serve [--no-demo] [--data-dir DIR]

Runs the whole service in one process: applies migrations, imports a demo catalog into an empty
database (unless --no-demo), runs the projector, and serves the REST API (/api/v1) and the MCP
endpoint (/api/mcp). Without DATABASE_URL it starts an embedded PostgreSQL with its data in
DIR (default ./.data, or DATA_DIR). Stops cleanly on SIGTERM, SIGINT or SIGHUP (within 8 s; a
second signal exits at once), and when its standard output is closed (docs/signals.md).`;

export default function serve(args: string[]): Promise<number> {
  return runService(args, HELP, { projector: true, demoFlag: true });
}
