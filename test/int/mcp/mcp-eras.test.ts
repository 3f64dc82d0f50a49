import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../../src/auth/consumer-keys/consumer-keys.ts';
import { serviceIcons } from '../../../src/contract/service-identity.ts';
import { connectMcp, ERAS } from '../../helpers/mcp-clients.ts';
import { makerToken } from '../../helpers/oauth.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * The two protocol eras on one endpoint, as the official clients meet them: the v2 client finds
 * 2026-07-28 whether it negotiates or pins it; the server names itself; the cache fields say
 * `public` to an anonymous caller and `private` to a consumer key or a maker's sign-in; a maker's
 * access token works at 2026-07-28 as at 2025-11-25, and a maker tool without one is a 401 with
 * the challenge in either era.
 */
let stack: TestStack;
let key: string;

const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A 2026-07-28 request, raw. */
async function modern(method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  const res = await fetch(new URL('/api/mcp', stack.baseUrl), {
    method: 'POST',
    headers: { ...HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name !== undefined && { 'mcp-name': name }), ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: ENVELOPE } }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

beforeAll(async () => {
  // The service's own address as PUBLIC_URL: the sign-in flow follows the links it sends.
  stack = await startTestStack({ realPublicUrl: true, env: { RATE_LIMIT_SEARCH_PER_MIN: '1000', RATE_LIMIT_OTHER_PER_MIN: '1000' } });
  key = (await createKey(stack.db.pool, { name: `eras-${Date.now().toString(36)}`, limits: { search: 1000, other: 1000 } })).key;
  while (!stack.service.budgets.keys.check(`Bearer ${key}`).ok) await new Promise((r) => setTimeout(r, 20));
});

afterAll(async () => {
  await stack?.stop();
});

describe('finding the era', () => {
  it('the v2 client lands on 2026-07-28 when it negotiates, and the server names itself', async () => {
    const client = new ModernClient({ name: 'eras-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new ModernTransport(new URL('/api/mcp', stack.baseUrl)));
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getServerVersion()).toMatchObject({
      name: 'catalog',
      title: 'Product catalog',
      description: expect.stringContaining('directory'),
      websiteUrl: stack.service.config.publicUrl,
      icons: serviceIcons(stack.service.config.publicUrl),
    });
    expect(client.getInstructions()).toContain('catalog://products/{slug}');
    await client.close();
  });

  it('the v2 client in its default mode speaks 2025-11-25 and sees the same server', async () => {
    const client = new ModernClient({ name: 'eras-test', version: '1.0.0' });
    await client.connect(new ModernTransport(new URL('/api/mcp', stack.baseUrl)));
    expect(client.getProtocolEra()).toBe('legacy');
    expect(client.getServerVersion()).toMatchObject({ name: 'catalog', title: 'Product catalog', icons: serviceIcons(stack.service.config.publicUrl) });
    await client.close();
  });

  it('server/discover lists 2026-07-28, the capabilities, and no change notifications', async () => {
    const { status, body } = await modern('server/discover');
    expect(status).toBe(200);
    const result = body.result as Record<string, unknown>;
    expect(result.supportedVersions).toEqual(['2026-07-28']);
    expect(result.capabilities).toEqual({ tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false }, completions: {} });
    expect(result).toMatchObject({ resultType: 'complete', ttlMs: 3_600_000, cacheScope: 'public' });
  });
});

describe('cache fields', () => {
  const cases: Array<[string, Record<string, string>, 'public' | 'private']> = [
    ['anonymous', {}, 'public'],
    ['a consumer key', {}, 'private'],
  ];
  it.each(cases)('%s: lists and reads say how long and by whom they may be kept', async (who, _h, scope) => {
    const headers: Record<string, string> = who === 'a consumer key' ? { authorization: `Bearer ${key}` } : {};
    for (const method of ['tools/list', 'prompts/list', 'resources/templates/list']) {
      const { body } = await modern(method, {}, headers);
      expect(body.result, method).toMatchObject({ ttlMs: 3_600_000, cacheScope: scope });
    }
    const maxAge = stack.service.config.cache.maxAgeSeconds * 1000;
    expect((await modern('resources/list', {}, headers)).body.result).toMatchObject({ ttlMs: maxAge, cacheScope: scope });
    // A read on the fast path and one the SDK serves (a percent-encoded slug) say the same.
    for (const uri of ['catalog://products/pixel-forge', 'catalog://products/pixel%2Dforge']) {
      const read = await modern('resources/read', { uri }, headers);
      expect(read.body.result, uri).toMatchObject({ ttlMs: maxAge, cacheScope: scope, resultType: 'complete' });
    }
    // A tool's result is no cacheable result: no cache fields.
    const call = await modern('tools/call', { name: 'get_product', arguments: { slug: 'pixel-forge' } }, headers);
    expect(call.body.result).not.toHaveProperty('ttlMs');
  });
});

describe('a maker in both eras', () => {
  it.each(ERAS)('%s: a maker tool without sign-in is a 401 with the challenge; with a token it answers', async (era) => {
    const anonymous = await connectMcp(era, stack.baseUrl);
    await expect(anonymous.callTool('my_listings', {})).rejects.toThrow();
    await anonymous.close();
    const raw = era === 'modern' ? await modern('tools/call', { name: 'my_listings', arguments: {} }) : undefined;
    if (raw) {
      expect(raw.status).toBe(401);
      expect(raw.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=".*\/\.well-known\/oauth-protected-resource\/api\/mcp", scope="listings:read listings:write offline_access"/);
    }
    const { accessToken } = await makerToken(stack, `eras-${era}@example.com`);
    const maker = await connectMcp(era, stack.baseUrl, { headers: { authorization: `Bearer ${accessToken}` } });
    const listings = await maker.callTool('my_listings', {});
    expect(listings.isError).toBeFalsy();
    expect(listings.structuredContent).toEqual({ listings: [] });
    // A signed-in maker's reads are private to its client.
    if (era === 'modern') expect((await modern('tools/list', {}, { authorization: `Bearer ${accessToken}` })).body.result).toMatchObject({ cacheScope: 'private' });
    await maker.close();
  });
});
