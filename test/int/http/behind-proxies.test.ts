import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { caddySite, nginxSite, program, startProgram, stopProgram } from '../../helpers/deploy-configs.ts';
import { freePort, startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * deploy/'s nginx and Caddy configurations in front of a running service with the TRUST_PROXY
 * docs/deploying.md gives them (the proxy's address, 127.0.0.1): clients on other loopback
 * addresses (127.0.0.2, .3) send forged X-Forwarded-For headers through the proxy; each is counted
 * as itself. And the proxies' access logs hold no sign-in token and no query string.
 */
const ci = process.env.CI;
const isCi = ci !== undefined && ci !== '' && ci !== '0' && ci !== 'false';
const nginx = program('nginx');
const caddy = program('caddy');
if (!nginx && !isCi) console.warn('[nginx proxy tests skipped] nginx is not installed: apt-get install -y nginx-light');
if (!caddy && !isCi) console.warn('[Caddy proxy tests skipped] caddy is not installed: apt-get install -y caddy');

const BUDGET = 5;
let stack: TestStack;
const dir = mkdtempSync(path.join(os.tmpdir(), 'catalog-proxies-'));

beforeAll(async () => {
  stack = await startTestStack({ env: { TRUST_PROXY: '127.0.0.1', RATE_LIMIT_SEARCH_PER_MIN: String(BUDGET), SITE_URL: '' } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const upstreamPort = () => Number(new URL(stack.baseUrl).port);

/** A GET through the proxy from `from`, with the headers given. */
function get(url: string, from: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(target, { localAddress: from, headers, rejectUnauthorized: false, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

let forged = 0;
/** Searches BUDGET + 2 times from `from`, each time claiming another address; the statuses. */
async function searches(base: string, from: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < BUDGET + 2; i++) {
    forged++;
    const answer = await get(`${base}/api/v1/search?q=proxy${forged}`, from, { 'x-forwarded-for': `203.0.113.${forged % 250}, 198.51.100.${forged % 250}` });
    statuses.push(answer.status);
  }
  return statuses;
}
const HELD = [...Array<number>(BUDGET).fill(200), 429, 429];
const SECRET = 'Zq8secretSignInTokenValue';

describe.each([
  { name: 'nginx', file: nginx, client: '127.0.0.2' },
  { name: 'Caddy', file: caddy, client: '127.0.0.4' },
])('behind $name, as deploy/ configures it', ({ name, file, client }) => {
  let proxy: ChildProcess | undefined;
  let base = '';
  let accessLog = '';

  beforeAll(async () => {
    if (!file) return;
    const own = mkdtempSync(path.join(dir, `${name}-`));
    if (name === 'nginx') {
      const [tls, plain] = [await freePort(), await freePort()];
      const site = nginxSite(own, { tls, plain, upstream: upstreamPort() });
      base = `https://127.0.0.1:${tls}`;
      accessLog = site.accessLog;
      proxy = await startProgram(file, ['-c', site.config, '-p', own], {}, async () => (await get(`${base}/healthz`, '127.0.0.1')).status === 200);
    } else {
      const port = await freePort();
      const site = caddySite(own, port, upstreamPort());
      base = `http://127.0.0.1:${port}`;
      accessLog = site.accessLog;
      proxy = await startProgram(file, ['run', '--adapter', 'caddyfile', '--config', site.config], { XDG_DATA_HOME: own, XDG_CONFIG_HOME: own }, async () => (await get(`${base}/healthz`, '127.0.0.1')).status === 200);
    }
  }, 30_000);
  afterAll(async () => {
    await stopProgram(proxy);
  });

  test.skipIf(!file && !isCi)('a client is counted as itself, whatever X-Forwarded-For it sends', async () => {
    if (!file) throw new Error(`${name} is not installed`);
    expect(await searches(base, client)).toEqual(HELD);
    // Another client through the same proxy has its own budget.
    const other = client.replace(/\d+$/, (n) => String(Number(n) + 1));
    expect((await get(`${base}/api/v1/search?q=another`, other, { 'x-forwarded-for': '203.0.113.250' })).status).toBe(200);
  });

  test.skipIf(!file && !isCi)('its access log holds neither a sign-in token nor a query string', async () => {
    if (!file) throw new Error(`${name} is not installed`);
    await get(`${base}/signin/link/${SECRET}`, client);
    await get(`${base}/claim/${SECRET}`, client);
    await get(`${base}/oauth/callback?code=${SECRET}&state=${SECRET}`, client);
    // Logs are written as requests end: wait for the last one's line.
    let log = '';
    for (let i = 0; i < 100 && !log.includes('/oauth/callback'); i++) {
      await new Promise((r) => setTimeout(r, 50));
      log = readFileSync(accessLog, 'utf8');
    }
    expect(log).toContain('/signin/link/');
    expect(log).toContain('/oauth/callback');
    expect(log).not.toContain(SECRET);
  });
});
