import { runService } from './run-service.ts';

const HELP = `usage: catalog api [--data-dir DIR]

Runs an API process only (REST /api/v1 and MCP /api/mcp, reading the projection), for running
several behind a proxy while one 'catalog projector' keeps the projection current. Usually
with DATABASE_URL, REDIS_URL (shared rate limits) and MEILI_URL (shared search index).
Stops cleanly on SIGTERM, SIGINT or SIGHUP (within 8 s; a second signal exits at once), and when
its standard output is closed (docs/signals.md).`;

export default function api(args: string[]): Promise<number> {
  return runService(args, HELP, { projector: false, demoFlag: false });
}
