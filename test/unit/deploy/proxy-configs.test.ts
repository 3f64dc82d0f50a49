import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caddySite, deployFile, nginxSite, program } from '../../helpers/deploy-configs.ts';

/**
 * deploy/'s configurations pass their own tools' checks: `nginx -t` (Debian's nginx-light),
 * `caddy validate` (Debian's caddy), `systemd-analyze verify` (systemd). .ci/run installs the
 * first two; without one a test fails under CI and is skipped elsewhere, saying so in one line.
 */
const ci = process.env.CI;
const isCi = ci !== undefined && ci !== '' && ci !== '0' && ci !== 'false';
const dir = mkdtempSync(path.join(os.tmpdir(), 'catalog-deploy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function checked(name: string, install: string): string | undefined {
  const file = program(name);
  if (!file && !isCi) console.warn(`[${name} tests skipped] ${name} is not installed: ${install}`);
  return file;
}

const nginx = checked('nginx', 'apt-get install -y nginx-light');
const caddy = checked('caddy', 'apt-get install -y caddy');
const systemdAnalyze = checked('systemd-analyze', 'apt-get install -y systemd');

function run(file: string, args: string[], env: Record<string, string> = {}): string {
  const r = spawnSync(file, args, { encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${path.basename(file)} ${args.join(' ')} failed (${r.status}):\n${r.stdout}${r.stderr}`);
  return `${r.stdout}${r.stderr}`;
}

describe.skipIf(!nginx && !isCi)('deploy/nginx/catalog.conf', () => {
  it('passes nginx -t', () => {
    if (!nginx) throw new Error('nginx is not installed');
    const site = nginxSite(dir, { tls: 8443, plain: 8080, upstream: 3000 });
    expect(run(nginx, ['-t', '-c', site.config, '-p', dir])).toContain('test is successful');
  });

  it('sets X-Forwarded-For to the address it saw, and logs no query string or token', () => {
    const conf = deployFile('nginx/catalog.conf');
    expect(conf).toMatch(/proxy_set_header X-Forwarded-For \$remote_addr;/);
    const format = conf.slice(conf.indexOf('log_format'), conf.indexOf(';', conf.indexOf('log_format')));
    expect(format).toContain('$catalog_logged_path');
    for (const secretBearing of ['$request ', '$request_uri', '$args', '$query_string', '$uri', '$http_authorization', '$http_cookie']) expect(format).not.toContain(secretBearing);
  });

  it('fails nginx -t when broken (the check reads the file)', () => {
    if (!nginx) throw new Error('nginx is not installed');
    const site = nginxSite(dir, { tls: 8443, plain: 8080, upstream: 3000 });
    writeFileSync(path.join(dir, 'catalog.conf'), `${deployFile('nginx/catalog.conf')}\nserver { listen nowhere }\n`);
    expect(() => run(nginx, ['-t', '-c', site.config, '-p', dir])).toThrow(/failed/);
  });
});

describe.skipIf(!caddy && !isCi)('deploy/caddy/Caddyfile', () => {
  it('passes caddy validate as committed', () => {
    if (!caddy) throw new Error('caddy is not installed');
    const copy = path.join(dir, 'Caddyfile.committed');
    writeFileSync(copy, deployFile('caddy/Caddyfile'));
    expect(run(caddy, ['validate', '--adapter', 'caddyfile', '--config', copy], { XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir })).toContain('Valid configuration');
  });

  it('passes caddy validate as the tests run it', () => {
    if (!caddy) throw new Error('caddy is not installed');
    const site = caddySite(dir, 8081, 3000);
    expect(run(caddy, ['validate', '--adapter', 'caddyfile', '--config', site.config], { XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir })).toContain('Valid configuration');
  });
});

describe.skipIf(!systemdAnalyze && !isCi)('deploy/systemd units', () => {
  it('pass systemd-analyze verify without a word', () => {
    if (!systemdAnalyze) throw new Error('systemd-analyze is not installed');
    const units = ['catalog.service', 'catalog-backup.service', 'catalog-backup.timer'];
    const node = process.execPath;
    for (const unit of units) {
      const target = path.join(dir, unit);
      copyFileSync(path.join(process.cwd(), 'deploy', 'systemd', unit), target);
      // The units name /usr/bin/node (Debian's); where Node is elsewhere the check is given its path.
      if (node !== '/usr/bin/node') writeFileSync(target, deployFile(`systemd/${unit}`).replaceAll('/usr/bin/node', node));
    }
    const r = spawnSync(systemdAnalyze, ['verify', ...units.map((u) => path.join(dir, u))], { encoding: 'utf8' });
    expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
    expect(r.status).toBe(0);
  });

  it('back up with `catalog backup FILE` and keep 14', () => {
    const unit = deployFile('systemd/catalog-backup.service');
    expect(unit).toMatch(/bin\/catalog\.js backup "\/var\/lib\/catalog\/backups\/catalog-/);
    expect(unit).toContain('tail -n +15');
    expect(execFileSync('sh', ['-n', '-c', "ls -1t /x/catalog-*.backup | tail -n +15 | xargs -r rm -f --"]).toString()).toBe('');
  });
});
