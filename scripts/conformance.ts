/**
 * `npm run conformance`: the server scenarios of the official MCP conformance suite
 * (`@modelcontextprotocol/conformance`, pinned in package.json) against a real `catalog serve`.
 *
 * - The suite needs Node.js 22 or later. It runs on CONFORMANCE_NODE when that is set, on the
 *   Node.js running this script when that is 22 or later, and otherwise on Node.js 24 from the
 *   npm registry (scripts/registry-node.sh, cached). The script then runs itself again on that
 *   Node.js, so the service under test runs on it too.
 * - The service gets a database of its own: a fresh one on TEST_DATABASE_URL's server (dropped
 *   afterwards), or else the embedded PostgreSQL in a temporary data folder. It listens on a
 *   spare loopback port, with the demo catalog, without Redis, and with the per-IP budgets lifted
 *   (the suite makes over a hundred calls in seconds from one address; the limits have tests of
 *   their own).
 * - Every server scenario runs (`--suite all`); the scenarios that do not apply to this server
 *   are listed, with the reason, in test/conformance/expected-failures.yml. The suite fails
 *   when any other scenario fails, and also when a listed one starts to pass.
 * - Arguments are passed on to the suite's `server` command: `npm run conformance -- --scenario
 *   ping`, `-- --verbose`. Each scenario's checks are saved under
 *   test-artifacts/conformance/node-MAJOR/.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { realpathSync } from 'node:fs';
import pg from 'pg';
import { startCatalog, type CatalogProcess } from '../bench/catalog-process.ts';
import { REPO_ROOT, stopAll } from '../bench/processes.ts';
import { freePort } from '../src/db/embedded.ts';

const MIN_MAJOR = 22;
const REGISTRY_MAJOR = '24';
const BASELINE = path.join(REPO_ROOT, 'test/conformance/expected-failures.yml');
const DEMO_COUNT = 200;

const args = process.argv.slice(2);

function fail(message: string): never {
  console.error(`conformance: ${message}`);
  process.exit(2);
}

function majorOf(node: string): number {
  const version = execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  return Number(version.split('.')[0]);
}

/** The Node.js binary the suite and the service run on. */
function chooseNode(): string {
  const given = process.env.CONFORMANCE_NODE;
  if (given) {
    let major: number;
    try {
      major = majorOf(given);
    } catch (err) {
      fail(`CONFORMANCE_NODE=${given} does not run: ${(err as Error).message}`);
    }
    if (major < MIN_MAJOR) fail(`CONFORMANCE_NODE=${given} is Node.js ${major}; the suite needs ${MIN_MAJOR} or later`);
    return realpathSync(given);
  }
  if (Number(process.versions.node.split('.')[0]) >= MIN_MAJOR) return process.execPath;
  console.error(`conformance: this is Node.js ${process.versions.node}; the suite needs ${MIN_MAJOR} or later, so it runs on Node.js ${REGISTRY_MAJOR} from the npm registry`);
  const script = path.join(REPO_ROOT, 'scripts/registry-node.sh');
  return execFileSync('bash', [script, REGISTRY_MAJOR], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/** The command running in the foreground, and whether Ctrl-C (or a SIGTERM) came. */
let foreground: ChildProcess | undefined;
let interrupted = false;

/**
 * Ctrl-C or SIGTERM: the command in the foreground is stopped, and the run ends through its
 * cleanup (the service stopped, its database dropped, its folder removed).
 */
function stopOnSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      interrupted = true;
      foreground?.kill(signal);
    });
  }
}

/** Runs a command with this terminal, resolving with its exit code. */
function run(command: string, argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd: REPO_ROOT, env, stdio: 'inherit' });
    foreground = child;
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      foreground = undefined;
      resolve(code ?? (signal ? 130 : 1));
    });
  });
}

/** A database of its own on TEST_DATABASE_URL's server, or undefined for the embedded one. */
async function createDatabase(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) return undefined;
  const name = `catalog_conformance_${randomBytes(4).toString('hex')}`;
  const query = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await query(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function main(): Promise<number> {
  stopOnSignals();
  const node = chooseNode();
  if (node !== realpathSync(process.execPath)) {
    // Again on the chosen Node.js, first on PATH for anything that asks for `node`.
    const env = { ...process.env, CONFORMANCE_NODE: node, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` };
    return run(node, [path.join(REPO_ROOT, 'bin/run-ts.js'), path.join(REPO_ROOT, 'scripts/conformance.ts'), ...args], env);
  }

  const require = createRequire(import.meta.url);
  const suiteManifest = require.resolve('@modelcontextprotocol/conformance/package.json');
  const suite = JSON.parse(await readFile(suiteManifest, 'utf8')) as { version: string; bin: { conformance: string } };
  const cli = path.join(path.dirname(suiteManifest), suite.bin.conformance);

  // The service under test is configured here alone: nothing of the caller's deployment leaks in.
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'MEILI_URL', 'MEILI_KEY', 'PUBLIC_URL', 'SITE_URL', 'SMTP_URL', 'STRIPE_SECRET_KEY']) {
    delete process.env[name];
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-conformance-'));
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let service: CatalogProcess | undefined;
  try {
    database = await createDatabase();
    console.log(`conformance: starting catalog serve on Node.js ${process.version} (${database ? 'a fresh database on TEST_DATABASE_URL' : 'embedded PostgreSQL in a temporary folder'})`);
    service = await startCatalog({
      command: 'serve',
      dataDir,
      demo: true,
      demoCount: DEMO_COUNT,
      // A port of its own rather than PORT=0: the default PUBLIC_URL, whose origin the MCP
      // endpoint accepts, then names the port the service really listens on.
      env: { PORT: String(await freePort()), ...(database && { DATABASE_URL: database.url }) },
    });
    if (interrupted) return 130;
    const url = `${service.url}/api/mcp`;
    const given = new Set(args);
    const suiteArgs = given.has('--scenario') || given.has('--suite') ? [] : ['--suite', 'all'];
    const outputDir = path.join(REPO_ROOT, 'test-artifacts/conformance', `node-${process.versions.node.split('.')[0]}`);
    await rm(outputDir, { recursive: true, force: true });
    console.log(`conformance: @modelcontextprotocol/conformance ${suite.version}, server scenarios against ${url}`);
    return await run(process.execPath, [cli, 'server', '--url', url, ...suiteArgs, '--expected-failures', BASELINE, '--output-dir', outputDir, ...args]);
  } finally {
    await service?.stop();
    await stopAll();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
