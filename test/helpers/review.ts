import { spawn } from 'node:child_process';
import type http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { projectPath } from '../../src/util/project-file.ts';
import { Browser } from './oauth.ts';
import type { TestStack } from './stack.ts';

/**
 * What the review tests share: a maker's MCP client, makers' sites on loopback, the admin's
 * decision form posted as a browser would, and the `catalog` command run as an operator would.
 */

export type Json = Record<string, unknown>;

let ipCounter = 0;

/** An MCP client with the maker's token; each from an address of its own (the draft limits count per address). */
export async function makerClient(stack: TestStack, token: string): Promise<Client> {
  ipCounter++;
  const client = new Client({ name: 'review-test', version: '1.0.0' });
  const headers = { authorization: `Bearer ${token}`, 'x-forwarded-for': `198.51.100.${ipCounter % 250}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/api/mcp`), { requestInit: { headers } }));
  return client;
}

/** A tool's answer: its structured result, or its error object (the text of a tool error). */
export async function tool(client: Client, name: string, args: Json): Promise<{ ok: boolean; body: Json }> {
  const result = await client.callTool({ name, arguments: args });
  if (!result.isError) return { ok: true, body: result.structuredContent as Json };
  const text = (result.content as { type: string; text: string }[])[0]!.text;
  return { ok: false, body: JSON.parse(text) as Json };
}

export interface MakerListingJson {
  slug: string;
  status: string;
  hidden_reason: string | null;
  feedback: string | null;
  listed_at: string | null;
  edit_url: string;
}

export async function myListing(client: Client, slug: string): Promise<MakerListingJson> {
  const answer = await tool(client, 'my_listings', { slug });
  if (!answer.ok) throw new Error(`my_listings failed: ${JSON.stringify(answer.body)}`);
  return (answer.body.listings as MakerListingJson[])[0]!;
}

/**
 * A maker's site for each host name: a title, a description, an https cover and an icon, so a
 * submission is a listing (not a draft); `badges` holds the HTML each host shows in its body.
 */
export function siteHandler(badges: Map<string, string> = new Map(), broken: Set<string> = new Set()) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    const host = (req.headers.host ?? '').split(':')[0]!;
    if (broken.has(host)) {
      res.writeHead(503, { 'content-type': 'text/html' }).end('<p>Down for maintenance</p>');
      return;
    }
    if (req.url === '/favicon.ico') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html><head><title>${host} home</title><meta name="description" content="What ${host} does for you">` +
        `<meta property="og:image" content="https://cdn.${host}/cover.png"><link rel="apple-touch-icon" href="/touch.png"></head>` +
        `<body><h1>${host}</h1>${badges.get(host) ?? ''}</body></html>`,
    );
  };
}

/** Posts one decision through the admin's form on the page it is offered from; answers the response, not followed. */
export async function decideInBrowser(browser: Browser, slug: string, action: string, opts: { feedback?: string; from?: 'queue' | 'listing' } = {}): Promise<Response> {
  const from = opts.from ?? 'queue';
  const page = await browser.request(from === 'queue' ? '/admin/review' : `/admin/listings/${slug}`);
  const csrf = Browser.csrfOf(await page.text());
  return browser.request(`/admin/listings/${slug}/decisions`, { form: { _csrf: csrf, action, from, feedback: opts.feedback ?? '' } });
}

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `catalog …` (bin/catalog.js) against the stack's database, as an operator would. */
export function runCatalog(stack: TestStack, args: string[], env: Record<string, string> = {}): Promise<CommandRun> {
  return runCatalogCommand(args, {
    DATABASE_URL: stack.db.url,
    PUBLIC_URL: stack.service.config.publicUrl,
    SITE_URL: stack.service.config.siteUrl,
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    SMTP_URL: '',
    ...env,
  });
}

/** Runs `catalog …` (bin/catalog.js) with this environment added to the test's own. */
export function runCatalogCommand(args: string[], env: Record<string, string>): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(path.dirname(projectPath('package.json')), 'bin/catalog.js'), ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The e-mails a command logged (without SMTP_URL it writes each to its log). */
export function loggedMails(run: CommandRun): { to: string; subject: string; text: string }[] {
  return run.stderr
    .split('\n')
    .flatMap((line) => {
      try {
        const entry = JSON.parse(line) as { mail?: { to: string; subject: string; text: string } };
        return entry.mail ? [entry.mail] : [];
      } catch {
        return [];
      }
    });
}
