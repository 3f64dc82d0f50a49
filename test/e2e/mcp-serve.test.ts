import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { LIVE_SLUGS_NEWEST_FIRST, seedFixtureCatalog } from '../helpers/fixtures.ts';
import { connectMcp, ERAS } from '../helpers/mcp-clients.ts';

/**
 * `catalog serve` as its own process, reached by the official MCP clients of both protocol eras
 * as an MCP host would reach it: the read tools and resources answer what REST answers,
 * completions come from the live catalog, the prompt lists the categories, and a foreign browser
 * origin is refused.
 */
const CLI = path.resolve('bin/catalog.js');

let db: TestDatabase;
let child: ChildProcessWithoutNullStreams | undefined;
let baseUrl: string;
let output = '';

function startServe(env: NodeJS.ProcessEnv): Promise<string> {
  const proc = spawn(process.execPath, [CLI, 'serve', '--no-demo'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  child = proc;
  proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in time:\n${output}`)), 90_000);
    const onData = () => {
      const m = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        proc.stdout.off('data', onData);
        resolve(m[1]!);
      }
    };
    proc.stdout.on('data', onData);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${output}`));
    });
  });
}

/** Until the projector has published the seeded catalog. */
async function untilCatalogLive(): Promise<void> {
  for (;;) {
    const res = await fetch(`${baseUrl}/api/v1/search`);
    if (res.ok && ((await res.json()) as { total: number }).total === LIVE_SLUGS_NEWEST_FIRST.length) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  await seedFixtureCatalog(db.pool);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    MCP_ALLOWED_ORIGINS: 'https://inspector.example',
    RATE_LIMIT_SEARCH_PER_MIN: '1000',
    RATE_LIMIT_OTHER_PER_MIN: '1000',
  };
  delete env.REDIS_URL;
  delete env.MEILI_URL;
  delete env.PUBLIC_URL;
  baseUrl = await startServe(env);
  await untilCatalogLive();
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const proc = child;
    proc.removeAllListeners('exit');
    await new Promise((resolve) => {
      proc.on('exit', resolve);
      proc.kill('SIGTERM');
    });
  }
  await db?.drop();
});

describe('MCP on catalog serve', () => {
  it.each(ERAS)('serves the read tools, resources and completions to a %s client, each answering what REST answers', async (era) => {
    const client = await connectMcp(era, baseUrl);
    expect(client.serverInfo()).toMatchObject({ name: 'catalog', title: 'Product catalog' });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'search_products', 'list_categories', 'get_product', 'submit_product', 'my_listings', 'update_listing', 'check_badge', 'upgrade_listing',
    ]);

    const pairs: Array<[string, Record<string, unknown>, string]> = [
      ['search_products', { tag: 'ai', limit: 2, page: 1 }, '/search?tag=ai&limit=2&page=1'],
      ['search_products', { q: 'notes' }, '/search?q=notes'],
      ['list_categories', {}, '/categories'],
      ['get_product', { slug: 'code-lantern' }, '/products/code-lantern'],
    ];
    for (const [name, args, restPath] of pairs) {
      const result = await client.callTool(name, args);
      const expected = await (await fetch(`${baseUrl}/api/v1${restPath}`)).text();
      expect(result.isError, name).toBeFalsy();
      expect(result.structuredContent).toEqual(JSON.parse(expected));
      expect(result.content[0]?.type).toBe('text');
    }
    // Every hit links its product's resource, which reads as REST's Product.
    const search = await client.callTool('search_products', { tag: 'ai', limit: 2 });
    const links = search.content.filter((c) => c.type === 'resource_link') as Array<{ uri: string }>;
    expect(links).toHaveLength(2);
    const read = await client.readResource(links[0]!.uri);
    const slug = links[0]!.uri.slice('catalog://products/'.length);
    expect(read.contents).toEqual([{ uri: links[0]!.uri, mimeType: 'application/json', text: await (await fetch(`${baseUrl}/api/v1/products/${slug}`)).text() }]);
    expect((await client.complete({ type: 'ref/resource', uri: 'catalog://products/{slug}' }, { name: 'slug', value: 'co' })).completion).toMatchObject({ values: ['code-lantern'], total: 1, hasMore: false });

    const missing = await client.callTool('get_product', { slug: 'hidden-gem' });
    expect(missing.isError).toBe(true);
    expect(missing.content).toEqual([{ type: 'text', text: JSON.stringify({ code: 'NOT_FOUND', message: "No live listing has the slug 'hidden-gem'." }) }]);
    await client.close();
  });

  it('lists the categories in the prompt', async () => {
    const client = new Client({ name: 'catalog-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/api/mcp', baseUrl)));
    const prompt = await client.getPrompt({ name: 'submit_to_directory', arguments: { website: 'https://acme.example.com' } });
    const content = prompt.messages[0]?.content;
    expect(content?.type === 'text' && content.text).toContain('- developer-tools:');
    await client.close();
  });

  it('refuses a foreign browser origin and serves an allowed one', async () => {
    const init = (origin: string) =>
      fetch(`${baseUrl}/api/mcp`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser', version: '1.0.0' } },
        }),
      });
    expect((await init('https://evil.example')).status).toBe(403);
    const ok = await init('https://inspector.example');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://inspector.example');
  });
});
