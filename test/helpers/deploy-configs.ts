import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The deploy/ configurations as the tests run them: the committed file with only its addresses,
 * ports, certificate and log paths moved to a folder and ports of the test's own on loopback.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const deployFile = (name: string) => readFileSync(path.join(ROOT, 'deploy', name), 'utf8');

/** A program's path when installed (`nginx`, `caddy`, `systemd-analyze`), else undefined. */
export function program(name: string): string | undefined {
  for (const dir of ['/usr/sbin', '/usr/bin', '/usr/local/bin', '/sbin', '/bin']) {
    const file = path.join(dir, name);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** A self-signed certificate for 127.0.0.1 in `dir`. */
function selfSignedCertificate(dir: string): { cert: string; key: string } {
  const cert = path.join(dir, 'catalog.crt');
  const key = path.join(dir, 'catalog.key');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', key, '-out', cert], { stdio: 'ignore' });
  return { cert, key };
}

export interface NginxSite {
  /** The whole nginx.conf to give `nginx -c`. */
  config: string;
  accessLog: string;
}

/** deploy/nginx/catalog.conf, listening on 127.0.0.1 (https on `tlsPort`, http on `plainPort`), proxying to `upstreamPort`. */
export function nginxSite(dir: string, ports: { tls: number; plain: number; upstream: number }): NginxSite {
  const { cert, key } = selfSignedCertificate(dir);
  const accessLog = path.join(dir, 'access.log');
  const site = deployFile('nginx/catalog.conf')
    .replace('listen 443 ssl http2;', `listen 127.0.0.1:${ports.tls} ssl http2;`)
    .replace('listen 80;', `listen 127.0.0.1:${ports.plain};`)
    .replace(/^\s*listen \[::\]:\d+.*$/gm, '')
    .replace('server 127.0.0.1:3000;', `server 127.0.0.1:${ports.upstream};`)
    .replace('/etc/nginx/tls/catalog.crt', cert)
    .replace('/etc/nginx/tls/catalog.key', key)
    .replaceAll('/var/log/nginx/catalog.access.log', accessLog);
  const sitePath = path.join(dir, 'catalog.conf');
  writeFileSync(sitePath, site);
  const config = path.join(dir, 'nginx.conf');
  writeFileSync(
    config,
    [
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log warn;`,
      'daemon off;',
      'worker_processes 1;',
      'events { worker_connections 256; }',
      'http {',
      `  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
      `  include ${sitePath};`,
      '}',
    ].join('\n'),
  );
  return { config, accessLog };
}

export interface CaddySite {
  config: string;
  accessLog: string;
}

/** deploy/caddy/Caddyfile on plain http at 127.0.0.1:`port` (its own certificates need a public name), proxying to `upstreamPort`. */
export function caddySite(dir: string, port: number, upstreamPort: number): CaddySite {
  const accessLog = path.join(dir, 'caddy-access.log');
  const site = deployFile('caddy/Caddyfile')
    .replace('catalog.example.com {', `{\n\tadmin off\n\tauto_https off\n}\n\nhttp://127.0.0.1:${port} {`)
    .replace('reverse_proxy 127.0.0.1:3000', `reverse_proxy 127.0.0.1:${upstreamPort}`)
    .replace('/var/log/caddy/catalog.access.log', accessLog);
  const config = path.join(dir, 'Caddyfile');
  writeFileSync(config, site);
  return { config, accessLog };
}

/** Starts a proxy program in the foreground; resolves once `ready` answers. */
export async function startProgram(file: string, args: string[], env: Record<string, string>, ready: () => Promise<boolean>): Promise<ChildProcess> {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`${path.basename(file)} exited (${child.exitCode}): ${output}`);
    if (await ready().catch(() => false)) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`${path.basename(file)} did not answer: ${output}`);
}

/** Stops a program the test started and waits for it. */
export async function stopProgram(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}
