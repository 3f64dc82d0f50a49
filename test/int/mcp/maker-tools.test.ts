import type http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makerToken } from '../../helpers/oauth.ts';
import { startSite, tableResolver, watchSockets, type TestSite } from '../../helpers/site-network.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * The five maker tools through the official MCP SDK client, over real HTTP, against makers'
 * sites served on loopback under real-looking names (an injected resolver maps them to
 * 127.0.0.1; nothing leaves the machine). Every maker action an MCP client can drive (submit,
 * update, list, upgrade, delete), the draft and field limits at their boundaries, scopes, other
 * makers' listings, bad input,
 * and writes reaching REST through the projector.
 */
let stack: TestStack;
let site: TestSite;
const resolver = tableResolver({
  'good.example': ['127.0.0.1'],
  'www.good.example': ['127.0.0.1'],
  'second.example': ['127.0.0.1'],
  'third.example': ['127.0.0.1'],
  'twice.example': ['127.0.0.1'],
  'bare.example': ['127.0.0.1'],
  'badge.example': ['127.0.0.1'],
  'json.example': ['127.0.0.1'],
  'inside.example': ['10.0.0.5'],
  'metadata.example': ['169.254.169.254'],
});
let badgeHtml = '';

function page(req: http.IncomingMessage, res: http.ServerResponse) {
  const host = (req.headers.host ?? '').split(':')[0]!;
  if (req.url === '/favicon.ico') {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': host === 'json.example' ? 'application/json' : 'text/html; charset=utf-8' });
  if (host === 'json.example') {
    res.end('{"not":"a page"}');
    return;
  }
  if (host === 'bare.example') {
    res.end('<!doctype html><title>Bare</title><p>No images here.</p>');
    return;
  }
  if (host === 'badge.example') {
    res.end(`<!doctype html><title>Badge site</title><link rel="icon" href="/icon.png"><body>${badgeHtml}</body>`);
    return;
  }
  res.end(
    `<!doctype html><html><head><title>${host} app</title><meta name="description" content="What ${host} does">` +
      `<meta property="og:image" content="https://cdn.${host}/cover.png"><link rel="apple-touch-icon" href="/touch.png"></head><body>Hello</body></html>`,
  );
}

function web(host: string, path = '/'): string {
  return `http://${host}:${site.port}${path}`;
}

beforeAll(async () => {
  site = await startSite(page);
  stack = await startTestStack({
    realPublicUrl: true,
    env: { FETCH_ALLOW_LOOPBACK: 'true', TRUST_PROXY: 'true', DRAFT_CAP_PER_DAY: '1000', RATE_LIMIT_OTHER_PER_MIN: '10000', RATE_LIMIT_SEARCH_PER_MIN: '10000' },
    fetchOptions: { resolver },
  });
});

afterAll(async () => {
  await stack?.stop();
  await site?.close();
});

let ipCounter = 0;
/** A client address of its own per test, so the per-IP draft limit starts at zero. */
function freshIp(): string {
  ipCounter++;
  return `203.0.113.${ipCounter}`;
}

async function connect(opts: { token?: string; ip?: string } = {}) {
  const headers: Record<string, string> = { 'x-forwarded-for': opts.ip ?? freshIp() };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const client = new Client({ name: 'maker-tools-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/api/mcp`), { requestInit: { headers } }));
  return client;
}

type Json = Record<string, unknown>;

async function call(client: Client, name: string, args: Json): Promise<{ ok: true; body: Json } | { ok: false; error: { code: string; message: string; data?: { issues: { path: string[]; message: string }[] } } }> {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { type: string; text: string }[])[0]!.text;
  if (result.isError) return { ok: false, error: JSON.parse(text) };
  expect(result.structuredContent).toEqual(JSON.parse(text));
  return { ok: true, body: result.structuredContent as Json };
}

async function ok(client: Client, name: string, args: Json): Promise<Json> {
  const r = await call(client, name, args);
  if (!r.ok) throw new Error(`${name} failed: ${JSON.stringify(r.error)}`);
  return r.body;
}

async function refused(client: Client, name: string, args: Json) {
  const r = await call(client, name, args);
  if (r.ok) throw new Error(`${name} succeeded: ${JSON.stringify(r.body)}`);
  return r.error;
}

async function listingCount(): Promise<number> {
  return (await stack.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog.listings')).rows[0]!.n;
}

async function restProduct(slug: string) {
  return fetch(`${stack.baseUrl}/api/v1/products/${slug}`, { headers: { 'x-forwarded-for': freshIp() } });
}

describe('submit_product without sign-in', () => {
  it('saves a private draft and returns a claim link valid 7 days; nothing is listed', async () => {
    const before = await listingCount();
    const client = await connect();
    const body = await ok(client, 'submit_product', { website: web('good.example'), name: 'Good App', punchline: 'Does good things' });
    expect(body.outcome).toBe('draft_saved');
    const claim = body.claim_link as { url: string; expires_at: string };
    expect(claim.url).toMatch(new RegExp(`^${stack.baseUrl}/claim/[A-Za-z0-9_-]{40,}$`));
    expect(Date.parse(claim.expires_at) - Date.now()).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(Date.parse(claim.expires_at) - Date.now()).toBeLessThanOrEqual(7 * 86_400_000);
    expect(body.listing).toBeNull();
    expect(await listingCount()).toBe(before);
    // The token is stored only hashed.
    const token = claim.url.split('/').pop()!;
    const { rows } = await stack.db.pool.query('SELECT count(*)::int AS n FROM catalog.drafts WHERE fields::text LIKE $1 OR website LIKE $1', [`%${token}%`]);
    expect(rows[0].n).toBe(0);
    await client.close();
  });

  it('allows 5 drafts per address in any 24 hours, says when the next is accepted, and accepts it once the earlier ones are 24 hours old', async () => {
    const ip = freshIp();
    const client = await connect({ ip });
    for (let i = 0; i < 5; i++) expect((await ok(client, 'submit_product', { website: web('good.example', `/p${i}`) })).outcome).toBe('draft_saved');
    const sixth = await refused(client, 'submit_product', { website: web('good.example', '/p5') });
    expect(sixth.code).toBe('TOO_MANY_REQUESTS');
    const oldest = (await stack.db.pool.query<{ t: Date }>('SELECT min(created_at) AS t FROM catalog.drafts WHERE client_ip = $1', [ip])).rows[0]!.t;
    expect(sixth.message).toContain(new Date(oldest.getTime() + 86_400_000).toISOString());
    expect((await stack.db.pool.query('SELECT count(*)::int AS n FROM catalog.drafts WHERE client_ip = $1', [ip])).rows[0].n).toBe(5);

    // One of the five turns 24 hours old: one more draft is accepted, and only one.
    await stack.db.pool.query(
      `UPDATE catalog.drafts SET created_at = created_at - interval '24 hours 1 second' WHERE id = (SELECT id FROM catalog.drafts WHERE client_ip = $1 ORDER BY created_at LIMIT 1)`,
      [ip],
    );
    expect((await ok(client, 'submit_product', { website: web('good.example', '/p6') })).outcome).toBe('draft_saved');
    expect((await refused(client, 'submit_product', { website: web('good.example', '/p7') })).code).toBe('TOO_MANY_REQUESTS');
    await client.close();
  });

  it('never makes a sixth draft when calls race at the boundary', async () => {
    const ip = freshIp();
    const clients = await Promise.all(Array.from({ length: 8 }, () => connect({ ip })));
    const results = await Promise.all(clients.map((c, i) => call(c, 'submit_product', { website: web('good.example', `/race${i}`) })));
    expect(results.filter((r) => r.ok)).toHaveLength(5);
    expect(results.filter((r) => !r.ok && r.error.code === 'TOO_MANY_REQUESTS')).toHaveLength(3);
    expect((await stack.db.pool.query('SELECT count(*)::int AS n FROM catalog.drafts WHERE client_ip = $1', [ip])).rows[0].n).toBe(5);
    await Promise.all(clients.map((c) => c.close()));
  });

  it('refuses bad input with the argument named, and saves nothing', async () => {
    const client = await connect();
    const before = (await stack.db.pool.query('SELECT count(*)::int AS n FROM catalog.drafts')).rows[0].n;
    const cases: [Json, string][] = [
      [{}, 'website'],
      [{ website: 'javascript:alert(1)' }, 'website'],
      [{ website: 'http://127.0.0.1/' }, 'website'],
      [{ website: 'http://2130706433/' }, 'website'],
      [{ website: 'http://[::1]/' }, 'website'],
      [{ website: web('inside.example') }, 'website'],
      [{ website: web('metadata.example') }, 'website'],
      [{ website: web('good.example'), name: '<script>alert(1)</script>' }, 'name'],
      [{ website: web('good.example'), punchline: 'Fast <b>bold</b>' }, 'punchline'],
      [{ website: web('good.example'), punchline: 'x'.repeat(301) }, 'punchline'],
      [{ website: web('good.example'), description: 'Hi <script>x</script>' }, 'description'],
      [{ website: web('good.example'), description: '[click](javascript:alert(1))' }, 'description'],
      [{ website: web('good.example'), description: '<img src=x onerror=alert(1)>' }, 'description'],
      [{ website: web('good.example'), category: 'no-such-category' }, 'category'],
      [{ website: web('good.example'), social: 'https://social.example/me' }, 'social'],
      [{ website: web('good.example'), pricing_model: 'cheap' }, 'pricing_model'],
      [{ website: web('good.example'), plan: 'gold' }, 'plan'],
      [{ website: web('good.example'), tags: ['ok', '<b>'] }, 'tags'],
      [{ website: web('good.example'), unknown: 1 }, 'unknown'],
    ];
    for (const [args, field] of cases) {
      const error = await refused(client, 'submit_product', args);
      expect(error.code, JSON.stringify(args)).toBe('BAD_REQUEST');
      expect(error.data?.issues.map((i) => i.path[0]), JSON.stringify(args)).toContain(field);
    }
    expect((await stack.db.pool.query('SELECT count(*)::int AS n FROM catalog.drafts')).rows[0].n).toBe(before);
    await client.close();
  });

  it('never connects to a private address while refusing one', async () => {
    const watch = watchSockets();
    try {
      const client = await connect();
      await refused(client, 'submit_product', { website: web('inside.example') });
      await client.close();
      expect(watch.violations).toEqual([]);
      expect(watch.dialed().filter((a) => a === '10.0.0.5')).toEqual([]);
    } finally {
      watch.restore();
    }
  });
});

describe('submit_product signed in', () => {
  it('saves a draft when the app lacks listings:write', async () => {
    const { accessToken } = await makerToken(stack, 'reader@example.com', 'listings:read');
    const client = await connect({ token: accessToken });
    const body = await ok(client, 'submit_product', { website: web('third.example') });
    expect(body.outcome).toBe('draft_saved');
    expect(body.message).toContain('listings:write');
    const { rows } = await stack.db.pool.query<{ reason: string; maker: string }>(
      `SELECT d.reason, m.email AS maker FROM catalog.drafts d JOIN catalog.makers m ON m.id = d.maker_id ORDER BY d.created_at DESC LIMIT 1`,
    );
    expect(rows[0]).toEqual({ reason: 'no_write_scope', maker: 'reader@example.com' });
    await client.close();
  });

  it('publishes a complete listing, which REST and search show within the projector\'s second', async () => {
    const { accessToken } = await makerToken(stack, 'publisher@example.com');
    const client = await connect({ token: accessToken });
    const body = await ok(client, 'submit_product', {
      website: web('good.example'),
      name: 'Good App',
      punchline: 'Does good things for teams',
      description: 'A **good** app.\n\n- fast\n- kind',
      category: 'productivity',
      pricing_model: 'freemium',
      product_type: 'software',
      social: '@goodapp',
      tags: ['Team Work', 'ai'],
    });
    expect(body.outcome).toBe('published');
    const listing = body.listing as Json;
    expect(listing).toMatchObject({ status: 'live', plan: 'free', badge: 'not_verified', name: 'Good App' });
    expect(listing.edit_url).toBe(`${stack.baseUrl}/dashboard/listings/${listing.slug}`);
    expect(body.payment).toBeNull();
    await stack.settle();
    const res = await restProduct(String(listing.slug));
    expect(res.status).toBe(200);
    const product = (await res.json()) as Json;
    expect(product).toMatchObject({
      name: 'Good App',
      description: '<p>A <strong>good</strong> app.</p>\n<ul>\n<li>fast</li>\n<li>kind</li>\n</ul>',
      category: 'productivity',
      social: 'goodapp',
      tags: ['team-work', 'ai'],
      cover: 'https://cdn.good.example/cover.png',
      logo: web('good.example', '/touch.png'),
      website: web('good.example'),
    });
    expect(product.listed_at).toBeTruthy();
    const search = (await (await fetch(`${stack.baseUrl}/api/v1/search?q=good%20teams`, { headers: { 'x-forwarded-for': freshIp() } })).json()) as { products: Json[] };
    expect(search.products.map((p) => p.slug)).toContain(listing.slug);
    await client.close();
  });

  it('answers already_listed for a site live under another maker, whatever the address spelling', async () => {
    const { accessToken } = await makerToken(stack, 'latecomer@example.com');
    const client = await connect({ token: accessToken });
    for (const spelling of [web('good.example'), web('www.good.example', '/?utm_source=x#top'), `${web('GOOD.example')}`]) {
      const body = await ok(client, 'submit_product', { website: spelling, name: 'Copy', punchline: 'Copy', category: 'productivity' });
      expect(body.outcome, spelling).toBe('already_listed');
      expect((body.live_listing as Json).name).toBe('Good App');
    }
    await client.close();
  });

  it('answers already_submitted when the maker has a listing for the site, and holds an incomplete listing for review', async () => {
    const { accessToken } = await makerToken(stack, 'reviewme@example.com');
    const client = await connect({ token: accessToken });
    const first = await ok(client, 'submit_product', { website: web('second.example') });
    expect(first.outcome).toBe('pending_review');
    expect((first.listing as Json).status).toBe('pending');
    expect(first.review_reasons).toEqual(expect.arrayContaining([expect.stringContaining('no punchline'), expect.stringContaining('no category')]));
    const again = await ok(client, 'submit_product', { website: web('second.example', '/') });
    expect(again.outcome).toBe('already_submitted');
    await stack.settle();
    expect((await restProduct(String((first.listing as Json).slug))).status).toBe(404);
    await client.close();
  });

  it('makes one listing when the same site is submitted twice at the same moment', async () => {
    const { accessToken } = await makerToken(stack, 'twice@example.com');
    const [a, b] = [await connect({ token: accessToken }), await connect({ token: accessToken })];
    const args = { website: web('twice.example'), name: 'Twice App', punchline: 'Sent twice at once', description: 'Submitted by two apps at once.', category: 'productivity' };
    const answers = await Promise.all([ok(a, 'submit_product', args), ok(b, 'submit_product', args)]);
    // The second is told of the first, now live (as a submission after it would be).
    expect(answers.map((x) => x.outcome).sort()).toEqual(['already_listed', 'published']);
    const slugs = answers.map((x) => ((x.listing ?? x.live_listing) as Json).slug);
    expect(slugs[0]).toBe(slugs[1]);
    const { rows } = await stack.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.listings WHERE website_key = (SELECT website_key FROM catalog.listings WHERE name = 'Twice App')`);
    expect(rows[0]!.n).toBe(1);
    await Promise.all([a.close(), b.close()]);
  });

  it('saves a draft with a claim link when the site offers no usable image', async () => {
    const { accessToken } = await makerToken(stack, 'noimage@example.com');
    const client = await connect({ token: accessToken });
    const body = await ok(client, 'submit_product', { website: web('bare.example'), name: 'Bare', punchline: 'Plain', category: 'design' });
    expect(body.outcome).toBe('draft_saved');
    expect(body.message).toContain('no usable cover image or icon');
    expect((body.claim_link as Json).url).toMatch(/\/claim\//);
    await client.close();
  });

  it('holds a listing whose site cannot be read for review, saying why', async () => {
    const { accessToken } = await makerToken(stack, 'unreadable@example.com');
    const client = await connect({ token: accessToken });
    for (const website of [web('json.example'), 'http://unresolvable.example/']) {
      const body = await ok(client, 'submit_product', { website, name: 'Unreadable', punchline: 'Cannot be read', description: 'x', category: 'design' });
      expect(body.outcome, website).toBe('pending_review');
      expect(body.review_reasons, website).toEqual([expect.stringContaining('The site could not be read')]);
    }
    await client.close();
  });

  it('returns a payment link with its price for plan premium, and charges nothing', async () => {
    const { accessToken } = await makerToken(stack, 'premium@example.com');
    const client = await connect({ token: accessToken });
    const body = await ok(client, 'submit_product', { website: web('third.example', '/premium'), name: 'Third', punchline: 'Premium app', description: 'Premium.', category: 'design', plan: 'premium' });
    expect(body.outcome).toBe('published');
    expect(body.payment).toMatchObject({ price: '29.00 USD', amount_minor: 2900, currency: 'usd' });
    expect((body.payment as Json).url).toMatch(new RegExp(`^${stack.baseUrl}/pay/[0-9a-f-]{36}$`));
    expect((body.listing as Json).plan).toBe('free');
    const { rows } = await stack.db.pool.query(`SELECT status FROM catalog.payments`);
    expect(rows.every((r: { status: string }) => r.status === 'open')).toBe(true);
    await client.close();
  });
});

describe('my_listings, update_listing, check_badge, upgrade_listing', () => {
  let client: Client;
  let live: string;
  let pending: string;

  beforeAll(async () => {
    const { accessToken } = await makerToken(stack, 'owner@example.com');
    client = await connect({ token: accessToken });
    live = String(((await ok(client, 'submit_product', { website: web('badge.example'), name: 'Badge Site', punchline: 'Has a badge', description: 'Badges.', category: 'design' })).listing as Json).slug);
    pending = String(((await ok(client, 'submit_product', { website: web('good.example', '/other-product'), name: 'Other' })).listing as Json).slug);
  });

  afterAll(async () => {
    await client?.close();
  });

  it('lists the maker\'s listings newest first, one by slug, and never another maker\'s', async () => {
    const all = (await ok(client, 'my_listings', {})).listings as Json[];
    expect(all.map((l) => l.slug)).toEqual([pending, live]);
    expect(((await ok(client, 'my_listings', { slug: live })).listings as Json[]).map((l) => l.slug)).toEqual([live]);
    const theirs = await refused(client, 'my_listings', { slug: 'pixel-forge' });
    expect(theirs.code).toBe('NOT_FOUND');
    const { accessToken } = await makerToken(stack, 'stranger@example.com');
    const stranger = await connect({ token: accessToken });
    expect((await ok(stranger, 'my_listings', {})).listings).toEqual([]);
    expect((await refused(stranger, 'update_listing', { slug: live, name: 'Mine now' })).code).toBe('NOT_FOUND');
    expect((await refused(stranger, 'check_badge', { slug: live })).code).toBe('NOT_FOUND');
    expect((await refused(stranger, 'upgrade_listing', { slug: live })).code).toBe('NOT_FOUND');
    await stranger.close();
  });

  it('keeps a live listing live through an edit, and REST shows the change', async () => {
    const body = await ok(client, 'update_listing', { slug: live, punchline: 'Has a shiny badge', social: null });
    expect(body.outcome).toBe('updated_live');
    expect((body.listing as Json).status).toBe('live');
    await stack.settle();
    expect(((await (await restProduct(live)).json()) as Json).punchline).toBe('Has a shiny badge');
  });

  it('sends a listing that is not live to review, and refuses a rejected one', async () => {
    const body = await ok(client, 'update_listing', { slug: pending, punchline: 'Now complete', category: 'design', description: 'Done.' });
    expect(body.outcome).toBe('sent_to_review');
    expect((body.listing as Json).status).toBe('pending');
    await stack.db.pool.query(`UPDATE catalog.listings SET status = 'rejected', review_feedback = 'Not a product' WHERE slug = $1`, [pending]);
    const error = await refused(client, 'update_listing', { slug: pending, name: 'Try again' });
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain('rejected');
    const listing = ((await ok(client, 'my_listings', { slug: pending })).listings as Json[])[0]!;
    expect(listing).toMatchObject({ status: 'rejected', feedback: 'Not a product', name: 'Other' });
  });

  it('refuses invalid edits with the field named and changes nothing', async () => {
    for (const [args, field] of [
      [{ slug: live }, 'request'],
      [{ slug: live, name: '' }, 'name'],
      [{ slug: live, name: 'A<img src=x>' }, 'name'],
      [{ slug: live, category: 'nope' }, 'category'],
      [{ slug: live, description: '<iframe src="https://x.example"></iframe>' }, 'description'],
      [{ slug: live, website: 'javascript:alert(1)' }, 'website'],
      [{ slug: live, website: 'http://inside.example/' }, 'website'],
    ] as [Json, string][]) {
      const error = await refused(client, 'update_listing', args);
      expect(error.code, JSON.stringify(args)).toBe('BAD_REQUEST');
      expect(error.data?.issues.map((i) => String(i.path[0])), JSON.stringify(args)).toContain(field);
    }
    expect(((await ok(client, 'my_listings', { slug: live })).listings as Json[])[0]!.name).toBe('Badge Site');
  });

  it('check_badge answers missing, found and inconclusive with the markup, and records nothing', async () => {
    badgeHtml = '<p>No badge yet</p>';
    const missing = await ok(client, 'check_badge', { slug: live });
    expect(missing.status).toBe('missing');
    const listingUrl = String(missing.listing_url);
    expect(missing.markup).toContain(`href="${listingUrl}"`);
    expect(missing.markup).toContain(`${stack.baseUrl}/badge/${live}.svg`);
    badgeHtml = String(missing.markup);
    expect((await ok(client, 'check_badge', { slug: live })).status).toBe('found');
    badgeHtml = `<a href="${listingUrl}" rel="nofollow">listed</a>`;
    expect((await ok(client, 'check_badge', { slug: live })).status).toBe('missing');
    const { rows } = await stack.db.pool.query(`SELECT badge_status, badge_checked_at FROM catalog.listings WHERE slug = $1`, [live]);
    expect(rows[0]).toEqual({ badge_status: 'none', badge_checked_at: null });
    // A site that cannot be read: inconclusive.
    await stack.db.pool.query(`UPDATE catalog.listings SET website = $2 WHERE slug = $1`, [live, 'http://unresolvable.example/']);
    const unknown = await ok(client, 'check_badge', { slug: live });
    expect(unknown.status).toBe('inconclusive');
    await stack.db.pool.query(`UPDATE catalog.listings SET website = $2 WHERE slug = $1`, [live, web('badge.example')]);
  });

  it('upgrade_listing returns a payment link for a live free listing only', async () => {
    const body = await ok(client, 'upgrade_listing', { slug: live });
    expect(body.payment).toMatchObject({ price: '29.00 USD' });
    const again = await ok(client, 'upgrade_listing', { slug: live });
    expect((again.payment as Json).url).toBe((body.payment as Json).url);
    expect((await refused(client, 'upgrade_listing', { slug: pending })).code).toBe('CONFLICT');
    await stack.db.pool.query(`UPDATE catalog.listings SET plan = 'premium' WHERE slug = $1`, [live]);
    expect((await refused(client, 'upgrade_listing', { slug: live })).message).toContain('already on the premium plan');
    expect((await refused(client, 'check_badge', { slug: live })).code).toBe('CONFLICT');
    await stack.db.pool.query(`UPDATE catalog.listings SET plan = 'free' WHERE slug = $1`, [live]);
  });
});

describe('scopes', () => {
  async function raw(token: string | undefined, name: string) {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-forwarded-for': freshIp() };
    if (token) headers.authorization = `Bearer ${token}`;
    return fetch(`${stack.baseUrl}/api/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { slug: 'x' } } }) });
  }

  it('answers 401 with a challenge without sign-in, and 403 insufficient_scope naming every needed scope', async () => {
    for (const tool of ['my_listings', 'check_badge', 'update_listing', 'upgrade_listing']) {
      const res = await raw(undefined, tool);
      expect(res.status, tool).toBe(401);
      expect(res.headers.get('www-authenticate'), tool).toMatch(/^Bearer resource_metadata="[^"]+", scope="listings:read listings:write offline_access", error_description="[^"]+"$/);
      expect(Object.keys((await res.json()) as object), tool).toEqual(['error_description']);
    }
    const { accessToken } = await makerToken(stack, 'readonly@example.com', 'listings:read');
    for (const tool of ['update_listing', 'upgrade_listing']) {
      const res = await raw(accessToken, tool);
      expect(res.status, tool).toBe(403);
      expect(res.headers.get('www-authenticate'), tool).toContain('error="insufficient_scope"');
      expect(res.headers.get('www-authenticate'), tool).toContain('scope="listings:read listings:write"');
    }
    expect((await raw(accessToken, 'my_listings')).status).toBe(200);
  });
});
