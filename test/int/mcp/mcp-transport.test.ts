import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_CATEGORIES } from '../../helpers/fixtures.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * The MCP endpoint as HTTP: stateless Streamable HTTP on POST only, origin checks, CORS for
 * browser clients; the server's identity; and the submit_to_directory prompt.
 */
const ALLOWED = 'https://inspector.example';
let stack: TestStack;
let endpoint: URL;

beforeAll(async () => {
  // PUBLIC_URL is http://catalog.test in test stacks; one more origin is allowed by configuration.
  stack = await startTestStack({ env: { MCP_ALLOWED_ORIGINS: `${ALLOWED}, https://other.example/` } });
  endpoint = new URL('/api/mcp', stack.baseUrl);
});

afterAll(async () => {
  await stack?.stop();
});

async function connect(headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'catalog-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } }));
  return client;
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } },
};

function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('transport', () => {
  it('answers a POST without Origin (a server-side client) in plain JSON, with no session', async () => {
    const res = await post(INITIALIZE);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const body = (await res.json()) as { id: number; result: { serverInfo: { name: string } } };
    expect(body.id).toBe(1);
    expect(body.result.serverInfo.name).toBe('catalog');
  });

  it('serves a tool call without any prior initialize on the same connection (stateless)', async () => {
    const res = await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_product', arguments: { slug: 'pixel-forge' } } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: number; result: { structuredContent: { slug: string } } };
    expect(body.result.structuredContent.slug).toBe('pixel-forge');
  });

  it.each(['GET', 'DELETE'])('answers %s with 405 and a JSON-RPC error', async (method) => {
    const res = await fetch(endpoint, { method, headers: { accept: 'application/json, text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
  });

  it('refuses a foreign Origin with 403 and a JSON-RPC error, before reading the request', async () => {
    const res = await post(INITIALIZE, { origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string }; id: null };
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    expect(body.error.message).toMatch(/https:\/\/evil\.example/);
    // A page on a host name rebound to this server still sends its own origin.
    expect((await post(INITIALIZE, { origin: 'http://127.0.0.1.nip.example:8080' })).status).toBe(403);
    expect((await post(INITIALIZE, { origin: 'null' })).status).toBe(403);
    await expect(connect({ origin: 'https://evil.example' })).rejects.toThrow();
  });

  it('accepts the public origin and configured origins, with CORS headers', async () => {
    for (const origin of ['http://catalog.test', ALLOWED, 'https://other.example', 'HTTPS://INSPECTOR.EXAMPLE:443']) {
      const res = await post(INITIALIZE, { origin });
      expect(res.status, origin).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('vary')).toMatch(/origin/i);
      const exposed = res.headers.get('access-control-expose-headers') ?? '';
      expect(exposed).toMatch(/x-ratelimit-remaining/);
      expect(exposed).toMatch(/retry-after/);
    }
    const client = await connect({ origin: ALLOWED });
    expect((await client.listTools()).tools).toHaveLength(8);
    await client.close();
  });

  it('carries the request id over to the MCP answer and lets browsers read it', async () => {
    const res = await post(INITIALIZE, { origin: ALLOWED, 'x-request-id': 'trace-42' });
    expect(res.headers.get('x-request-id')).toBe('trace-42');
    expect(res.headers.get('access-control-expose-headers')).toMatch(/x-request-id/);
  });

  it('answers a CORS preflight for an allowed origin and refuses one for a foreign origin', async () => {
    const preflight = (origin: string) =>
      fetch(endpoint, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-protocol-version' },
      });
    const ok = await preflight(ALLOWED);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(ok.headers.get('access-control-allow-methods')).toMatch(/POST/);
    const allowedHeaders = (ok.headers.get('access-control-allow-headers') ?? '').split(/,\s*/);
    expect(allowedHeaders).toEqual(expect.arrayContaining(['content-type', 'accept', 'mcp-protocol-version', 'authorization']));
    expect(ok.headers.get('access-control-max-age')).toBeTruthy();
    const refused = await preflight('https://evil.example');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers an unreadable body with a JSON-RPC parse error', async () => {
    const res = await post('{"jsonrpc": "2.0", "id": 1, ');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: expect.any(String) }, id: null });
  });

  it('refuses a body over 1 MB with 413 and a JSON-RPC error', async () => {
    const huge = { ...INITIALIZE, params: { ...INITIALIZE.params, padding: 'x'.repeat(1024 * 1024 + 1) } };
    const res = await post(huge);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32000);
  });

  it('refuses a body that is not JSON with 415', async () => {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', accept: 'application/json, text/event-stream' },
      body: 'hello',
    });
    expect(res.status).toBe(415);
    expect(((await res.json()) as { jsonrpc: string }).jsonrpc).toBe('2.0');
  });
});

describe('malformed calls', () => {
  it.each([
    ['arguments as an array', { name: 'search_products', arguments: [1] }, 'params.arguments must be an object'],
    ['arguments as a string', { name: 'get_product', arguments: 'x' }, 'params.arguments must be an object'],
    ['no name', { arguments: {} }, 'needs params.name'],
    ['no params', undefined, 'needs params'],
  ])('%s is an invalid-params error with a plain message', async (_what, params, message) => {
    const res = await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', ...(params !== undefined && { params }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: number; error: { code: number; message: string } };
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain(message);
    expect(body.error.message).not.toMatch(/\n|expected|received/);
  });
});

describe('server identity', () => {
  it('names itself, gives the package version and instructions', async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'catalog', version: '1.0.0' });
    const instructions = client.getInstructions() ?? '';
    for (const word of ['search_products', 'list_categories', 'get_product', 'newest first', '`url`', 'TOO_MANY_REQUESTS']) {
      expect(instructions).toContain(word);
    }
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, prompts: {} });
    await client.close();
  });
});

describe('prompt submit_to_directory', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect();
  });
  afterAll(async () => {
    await client?.close();
  });

  it('is listed with its required website argument', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toMatchObject({ name: 'submit_to_directory', arguments: [{ name: 'website', required: true }] });
    expect(prompts[0]?.description).toMatch(/submit_product/);
  });

  it('guides the drafting of a listing with the live category slugs', async () => {
    const result: GetPromptResult = await client.getPrompt({ name: 'submit_to_directory', arguments: { website: 'https://acme.example.com/' } });
    expect(result.messages).toHaveLength(1);
    const message = result.messages[0];
    expect(message?.role).toBe('user');
    if (message?.content.type !== 'text') throw new Error('expected a text message');
    const text = message.content.text;
    expect(text).toContain('https://acme.example.com/');
    const rest = (await (await fetch(new URL('/api/v1/categories', stack.baseUrl))).json()) as { categories: Array<{ slug: string }> };
    expect(rest.categories.map((c) => c.slug).sort()).toEqual(FIXTURE_CATEGORIES.map((c) => c.slug).sort());
    for (const { slug } of rest.categories) expect(text).toContain(`- ${slug}:`);
    for (const word of ['free', 'freemium', 'paid', 'open_source', 'software', 'digital_product', 'without the leading @', 'approve', 'submit_product']) {
      expect(text).toContain(word);
    }
    // Saving comes after the approval.
    expect(text.indexOf('approve')).toBeLessThan(text.lastIndexOf('submit_product'));
  });

  it.each(['not a url', 'ftp://acme.example.com', 'acme.example.com', 'javascript:alert(1)', ''])(
    'refuses website %j with an invalid-params error naming the argument',
    async (website) => {
      const error = await client.getPrompt({ name: 'submit_to_directory', arguments: { website } }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(-32602);
      expect((error as McpError).message).toMatch(/'website' must be/);
      expect((error as McpError).data).toEqual({
        code: 'BAD_REQUEST',
        message: expect.any(String),
        data: { issues: [{ path: ['website'], message: expect.any(String) }] },
      });
    },
  );

  it('refuses a missing website', async () => {
    await expect(client.getPrompt({ name: 'submit_to_directory', arguments: {} })).rejects.toThrow(/'website' must be the product's public http\(s\) address/);
  });
});

describe('MCP_ALLOWED_ORIGINS=*', () => {
  let open: TestStack;
  beforeAll(async () => {
    open = await startTestStack({ env: { MCP_ALLOWED_ORIGINS: '*' } });
  });
  afterAll(async () => {
    await open?.stop();
  });

  it('accepts any origin, echoing it in Access-Control-Allow-Origin', async () => {
    for (const origin of ['https://anywhere.example', 'http://localhost:6274']) {
      const res = await fetch(new URL('/api/mcp', open.baseUrl), {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(INITIALIZE),
      });
      expect(res.status, origin).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    }
  });
});
