/**
 * `npm run conformance`: the server scenarios of the official MCP conformance suite against a
 * real `catalog serve`, in the two versions package.json pins (devDependencies):
 *
 * - `@modelcontextprotocol/conformance` (0.1.x): every server scenario (`--suite all`), each at
 *   the protocol version the suite gives it (2025-11-25 and earlier, initialize handshake).
 *   Expected failures: test/conformance/expected-failures.yml.
 * - `@modelcontextprotocol/conformance-next` (an npm alias of the suite's next line, 0.2.x), once
 *   per protocol revision (NEXT_REVISIONS): every server scenario the suite has for that revision
 *   (`--suite all --spec-version REVISION`), all at that revision's wire: 2026-07-28 stateless,
 *   with `_meta` on every request; 2025-11-25 with the initialize handshake. The extension
 *   scenarios (tasks, skills), which no `--spec-version` selects, run each alone (a few at once)
 *   at the newest revision (`--scenario X --spec-version 2026-07-28 --force`). Expected
 *   failures: test/conformance/expected-failures-LINE-REVISION.yml (LINE: `0.2`).
 *
 * Each such run ("leg") is judged by the suite against its own list: it fails when a scenario
 * not listed there fails, and also when a listed one passes. A scenario that ends with an error
 * when run alone, before any check was written, counts as failed (listed: expected). Before
 * the service starts, every list is checked: each entry names a scenario of its leg and carries
 * its reason (`  - scenario  # why`).
 *
 * - The suite needs Node.js 22 or later. It runs on CONFORMANCE_NODE when that is set, on the
 *   Node.js running this script when that is 22 or later, and otherwise on Node.js 24 from the
 *   npm registry (scripts/registry-node.sh, cached). The script then runs itself again on that
 *   Node.js, so the service under test runs on it too.
 * - The service gets a database of its own: a fresh one on TEST_DATABASE_URL's server (dropped
 *   afterwards), or else the embedded PostgreSQL in a temporary data folder. It listens on a
 *   spare loopback port, with the demo catalog, without Redis, and with the per-IP budgets lifted
 *   (the suites make a few hundred calls in seconds from one address; the limits have tests of
 *   their own). Every leg runs against that one service, one after another.
 * - Arguments: `--only SEL` chooses legs (a suite version or its start such as `0.1` or `0.2`,
 *   `VERSION/REVISION`, or a revision alone such as `2026-07-28`); `--scenario NAME` runs that
 *   scenario in every chosen leg that has it (both repeatable, or comma lists). Any other option
 *   goes to the `server` command of each suite that has it (`--verbose`; `--timeout MS`, 0.2
 *   only). Each scenario's checks are saved under test-artifacts/conformance/node-MAJOR/LEG/.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startCatalog, type CatalogProcess } from '../bench/catalog-process.ts';
import { REPO_ROOT, stopAll } from '../bench/processes.ts';
import { freePort } from '../src/db/embedded.ts';
import {
  lineOf,
  parseArgs,
  parseScenarioList,
  parseServerOptions,
  readBaseline,
  scenariosPerLeg,
  selectLegs,
  unknownEntries,
  type BaselineEntry,
  type LegPlan,
  type PassedOption,
} from './conformance-plan.ts';

const MIN_MAJOR = 22;
const REGISTRY_MAJOR = '24';
const BASELINES = path.join(REPO_ROOT, 'test/conformance');
const STABLE_PACKAGE = '@modelcontextprotocol/conformance';
const NEXT_PACKAGE = '@modelcontextprotocol/conformance-next';
/** The revisions the next suite runs at, newest first; its extension scenarios run at the first. */
const NEXT_REVISIONS = ['2026-07-28', '2025-11-25'];
const DEMO_COUNT = 200;

const args = process.argv.slice(2);

const USAGE = `usage: npm run conformance [-- OPTIONS]

Runs the MCP conformance suite's server scenarios against a fresh \`catalog serve\`:
  ${STABLE_PACKAGE}, every server scenario;
  ${NEXT_PACKAGE}, every server scenario for ${NEXT_REVISIONS.join(', then for ')}.

  --only SEL        only these runs: a suite version or its start (0.1, 0.2), VERSION/REVISION
                    (0.2/2026-07-28), or a revision alone (2026-07-28); repeatable, or a comma list
  --scenario NAME   only this scenario, in every chosen run that has it; repeatable, or a comma list
  OTHER OPTIONS     passed to the server command of each suite that has them (--verbose,
                    --timeout MS)

Expected failures: test/conformance/expected-failures*.yml. Artifacts:
test-artifacts/conformance/node-MAJOR/RUN/. docs/development.md, "MCP conformance".`;

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

/** The commands running, and whether Ctrl-C (or a SIGTERM) came. */
const running = new Set<ChildProcess>();
let interrupted = false;

/**
 * Ctrl-C or SIGTERM: the commands running are stopped, and the run ends through its cleanup
 * (the service stopped, its database dropped, its folder removed).
 */
function stopOnSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      interrupted = true;
      for (const child of running) child.kill(signal);
    });
  }
}

/**
 * Runs a command, resolving with its exit code. It writes to this terminal, or, with `capture`,
 * into the strings it resolves with (for a command run beside others, shown when it is done).
 */
function run(command: string, argv: string[], options: { env?: NodeJS.ProcessEnv; capture?: boolean } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd: REPO_ROOT, env: options.env ?? process.env, stdio: options.capture ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (err) => {
      running.delete(child);
      reject(err);
    });
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({ code: code ?? (signal ? 130 : 1), stdout, stderr });
    });
  });
}

/** At most `limit` of the calls at once; the others wait their turn. */
function limiter(limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    while (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await work();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
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

/** One installed version of the suite. */
interface Suite {
  /** The name package.json gives it (the alias for the next line). */
  alias: string;
  version: string;
  cli: string;
  /** Its `server` command's options: name → whether it takes a value. */
  options: Map<string, boolean>;
}

interface Leg extends LegPlan {
  suite: Suite;
  baseline: string;
  entries: BaselineEntry[];
}

/** What a suite's CLI prints for these arguments (run on this Node.js). */
async function ask(cli: string, argv: string[]): Promise<string> {
  const { code, stdout, stderr } = await run(process.execPath, [cli, ...argv], { capture: true });
  if (code !== 0) fail(`${path.relative(REPO_ROOT, cli)} ${argv.join(' ')} exited with ${code}: ${stderr.trim()}`);
  return stdout;
}

async function loadSuite(alias: string): Promise<Suite> {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve(`${alias}/package.json`);
  const pkg = JSON.parse(await readFile(manifest, 'utf8')) as { version: string; bin: { conformance: string } };
  const cli = path.join(path.dirname(manifest), pkg.bin.conformance);
  return { alias, version: pkg.version, cli, options: parseServerOptions(await ask(cli, ['server', '--help'])) };
}

/** The legs, in the order they run: the 0.1 suite, then the next one at each revision. */
async function planLegs(stable: Suite, next: Suite): Promise<Leg[]> {
  if (lineOf(stable.version) === lineOf(next.version)) {
    fail(`${STABLE_PACKAGE} ${stable.version} and ${NEXT_PACKAGE} ${next.version} are the same line; their expected-failures files would be one`);
  }
  // Each answer takes the suite a few seconds to start: all at once.
  const [stableList, nextAll, ...perRevision] = await Promise.all([
    ask(stable.cli, ['list', '--server']),
    ask(next.cli, ['list', '--server']),
    ...NEXT_REVISIONS.map((revision) => ask(next.cli, ['list', '--server', '--spec-version', revision])),
  ]);
  const extensions = parseScenarioList(nextAll!).filter((s) => s.tags.includes('extension')).map((s) => s.name);
  return [
    {
      id: stable.version,
      version: stable.version,
      suite: stable,
      baseline: path.join(BASELINES, 'expected-failures.yml'),
      timeline: parseScenarioList(stableList!).map((s) => s.name),
      extensions: [],
      entries: [],
    },
    ...NEXT_REVISIONS.map((revision, i) => ({
      id: `${next.version}/${revision}`,
      version: next.version,
      revision,
      suite: next,
      baseline: path.join(BASELINES, `expected-failures-${lineOf(next.version)}-${revision}.yml`),
      timeline: parseScenarioList(perRevision[i]!).map((s) => s.name),
      extensions: i === 0 ? extensions : [],
      entries: [],
    })),
  ];
}

/** Each chosen leg's expected-failures list, read and checked; every problem at once, then out. */
async function checkBaselines(legs: Leg[]): Promise<void> {
  const problems: string[] = [];
  for (const leg of legs) {
    const shown = path.relative(REPO_ROOT, leg.baseline);
    if (!existsSync(leg.baseline)) {
      problems.push(`${shown} is missing (the expected failures of ${leg.id})`);
      continue;
    }
    const { entries, problems: own } = readBaseline(await readFile(leg.baseline, 'utf8'));
    leg.entries = entries;
    for (const p of own) problems.push(`${shown}, ${p}`);
    for (const e of unknownEntries(entries, leg)) {
      problems.push(`${shown}, line ${e.line}: ${e.scenario} is no scenario of ${leg.id}`);
    }
  }
  if (problems.length > 0) fail(`the expected-failures lists do not hold:\n  ${problems.join('\n  ')}`);
}

/** The options given on the command line that this suite's `server` command has. */
function passedTo(suite: Suite, passed: PassedOption[]): string[] {
  return passed.filter((o) => suite.options.has(o.name)).flatMap((o) => o.argv);
}

/** The result folders of a leg's folder, by scenario (`server-SCENARIO-TIMESTAMP`). */
async function resultDirs(dir: string): Promise<{ name: string; scenario: string }[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.flatMap((name) => {
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(name);
    return match ? [{ name, scenario: match[1]! }] : [];
  });
}

/** How many scenarios run alone at once (each is a process of the suite, mostly starting up). */
const ALONE_AT_ONCE = 4;

/**
 * Scenarios one at a time (`--scenario`), a few at once, each one's output shown in order once it
 * is done. When the suite ends with an error before writing a scenario's checks (it then exits 1
 * without judging it against the list), the scenario counts as failed: the script saves that as
 * its checks.json and judges it as the suite does a scenario of a whole run. Resolves with
 * whether every one was as the list expects.
 */
async function runAlone(leg: Leg, scenarios: string[], dir: string, common: string[]): Promise<boolean> {
  const before = new Set((await resultDirs(dir)).map((d) => d.name));
  const limit = limiter(ALONE_AT_ONCE);
  const jobs = scenarios.map((scenario) => {
    const force = leg.extensions.includes(scenario) ? ['--force'] : [];
    return limit(() => (interrupted ? Promise.resolve({ code: 130, stdout: '', stderr: '' }) : run(process.execPath, [leg.suite.cli, 'server', '--scenario', scenario, ...force, ...common], { capture: true })));
  });
  let held = true;
  for (const [i, job] of jobs.entries()) {
    const scenario = scenarios[i]!;
    const { code, stdout, stderr } = await job;
    process.stdout.write(`\n=== Running scenario: ${scenario} (alone) ===\n${stdout}`);
    process.stderr.write(stderr);
    if (interrupted) return false;
    if (code === 0) continue;
    const fresh = (await resultDirs(dir)).filter((d) => d.scenario === scenario && !before.has(d.name));
    if (fresh.some((d) => existsSync(path.join(dir, d.name, 'checks.json')))) {
      held = false;
      continue;
    }
    const folder = path.join(dir, fresh[0]?.name ?? `server-${scenario}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    await mkdir(folder, { recursive: true });
    const message = stderr.trim().split('\n')[0]?.slice(0, 500) || `the suite exited with ${code}`;
    const check = { id: scenario, name: scenario, description: 'Failed to run scenario', status: 'FAILURE', timestamp: new Date().toISOString(), errorMessage: message };
    await writeFile(path.join(folder, 'checks.json'), `${JSON.stringify([check], null, 2)}\n`);
    const list = path.relative(REPO_ROOT, leg.baseline);
    const listed = leg.entries.some((e) => e.entry === scenario);
    console.log(`conformance: ${scenario} ended with an error before its checks: ${message}`);
    console.log(`conformance: ${scenario} is ${listed ? '' : 'not '}listed in ${list}: an ${listed ? 'expected' : 'unexpected'} failure`);
    if (!listed) held = false;
  }
  return held;
}

/** A leg's scenarios: the whole leg, or the requested ones it has. Resolves with whether it held. */
async function runLeg(leg: Leg, url: string, outputRoot: string, passed: PassedOption[], requested: string[] | undefined): Promise<boolean> {
  const dir = path.join(outputRoot, leg.id);
  await mkdir(dir, { recursive: true });
  const common = [
    '--url', url,
    ...(leg.revision ? ['--spec-version', leg.revision] : []),
    '--expected-failures', leg.baseline,
    '--output-dir', dir,
    ...passedTo(leg.suite, passed),
  ];
  const what = leg.revision ? `${leg.suite.alias} ${leg.version} at ${leg.revision}` : `${leg.suite.alias} ${leg.version}`;
  if (requested) {
    console.log(`\nconformance: ${what}: ${requested.join(', ')} against ${url}`);
    return runAlone(leg, requested, dir, common);
  }
  const extra = leg.extensions.length > 0 ? `, then its ${leg.extensions.length} extension scenarios alone` : '';
  console.log(`\nconformance: ${what}: every server scenario${leg.revision ? ` for ${leg.revision}` : ''} (${leg.timeline.length})${extra}, against ${url}`);
  let held = true;
  if (leg.timeline.length > 0) {
    const { code } = await run(process.execPath, [leg.suite.cli, 'server', '--suite', 'all', ...common]);
    if (code !== 0) held = false;
  }
  if (leg.extensions.length > 0 && !interrupted) {
    console.log(`\nconformance: ${what}: the extension scenarios, each alone at ${leg.revision} (--force): ${leg.extensions.join(', ')}`);
    if (!(await runAlone(leg, leg.extensions, dir, common))) held = false;
  }
  return held && !interrupted;
}

/** Pass and fail counts of a leg's saved checks (a scenario fails on a FAILURE or a WARNING, as the suite judges). */
async function tally(dir: string): Promise<{ passed: number; failed: number }> {
  let passed = 0;
  let failed = 0;
  for (const d of await resultDirs(dir)) {
    const file = path.join(dir, d.name, 'checks.json');
    if (!existsSync(file)) continue;
    const checks = JSON.parse(await readFile(file, 'utf8')) as { status: string }[];
    if (checks.some((c) => c.status === 'FAILURE' || c.status === 'WARNING')) failed++;
    else passed++;
  }
  return { passed, failed };
}

async function main(): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  stopOnSignals();
  const node = chooseNode();
  if (node !== realpathSync(process.execPath)) {
    // Again on the chosen Node.js, first on PATH for anything that asks for `node`.
    const env = { ...process.env, CONFORMANCE_NODE: node, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` };
    return (await run(node, [path.join(REPO_ROOT, 'bin/run-ts.js'), path.join(REPO_ROOT, 'scripts/conformance.ts'), ...args], { env })).code;
  }

  const [stable, next] = await Promise.all([loadSuite(STABLE_PACKAGE), loadSuite(NEXT_PACKAGE)]);
  const request = parseArgs(args, (name) => stable.options.get(name) ?? next.options.get(name));
  if ('error' in request) fail(request.error);
  const chosen = selectLegs(await planLegs(stable, next), request.only);
  if ('error' in chosen) fail(chosen.error);
  const legs = chosen;
  for (const option of request.passed) {
    if (!legs.some((leg) => leg.suite.options.has(option.name))) fail(`${option.argv[0]} is an option of no chosen suite's server command`);
  }
  let perLeg: Map<Leg, string[]> | undefined;
  if (request.scenarios.length > 0) {
    const found = scenariosPerLeg(legs, request.scenarios);
    if (found.unknown.length > 0) fail(`no chosen run has the scenario ${found.unknown.join(', ')} (runs: ${legs.map((l) => l.id).join(', ')})`);
    perLeg = found.perLeg;
  }
  await checkBaselines(legs);

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
    const outputRoot = path.join(REPO_ROOT, 'test-artifacts/conformance', `node-${process.versions.node.split('.')[0]}`);
    await rm(outputRoot, { recursive: true, force: true });

    const outcomes: { leg: Leg; held: boolean | undefined }[] = [];
    for (const leg of legs) {
      const requested = perLeg?.get(leg);
      if (requested?.length === 0) {
        outcomes.push({ leg, held: undefined });
        continue;
      }
      outcomes.push({ leg, held: await runLeg(leg, url, outputRoot, request.passed, requested) });
      if (interrupted) return 130;
    }

    console.log(`\nconformance: summary (each scenario's checks: ${path.relative(REPO_ROOT, outputRoot)}/RUN/)`);
    const width = Math.max(...legs.map((l) => l.id.length));
    for (const { leg, held } of outcomes) {
      const list = path.relative(REPO_ROOT, leg.baseline);
      if (held === undefined) {
        console.log(`  ${leg.id.padEnd(width)}  not run (has none of the scenarios asked for)`);
        continue;
      }
      const { passed, failed } = await tally(path.join(outputRoot, leg.id));
      const verdict = held ? `as expected by ${list}` : `NOT as expected by ${list} (see above)`;
      console.log(`  ${leg.id.padEnd(width)}  ${String(passed).padStart(3)} pass, ${String(failed).padStart(3)} fail: ${verdict}`);
    }
    return outcomes.every((o) => o.held !== false) ? 0 : 1;
  } finally {
    await service?.stop();
    await stopAll();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
