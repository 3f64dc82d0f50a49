import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REJECTED_IS_FINAL } from '../../../../src/catalog/listings/listing-rules.ts';
import { decideListing } from '../../../../src/catalog/review/review.ts';
import { makerToken } from '../../../helpers/oauth.ts';
import { fillAndPost, notices, parsePage, shownErrors, signInMaker, startMakerSites, startMakerStack, type MakerBrowser, type MakerSites } from '../../../helpers/maker-pages.ts';
import { makerClient as clientWithToken, tool, type Json } from '../../../helpers/review.ts';
import type { TestStack } from '../../../helpers/stack.ts';

/**
 * A maker changes a listing's website (update_listing over MCP, and the edit page), and submits
 * the site of a rejected listing again. The new site goes through what a submission's site goes
 * through; the automatic check decides for a live listing; a change held for review keeps the
 * old site reserved to the listing until a reviewer approves. Sites on other.example are on the
 * blocklist, so the check holds them for review.
 */
let stack: TestStack;
let sites: MakerSites;

beforeAll(async () => {
  sites = await startMakerSites();
  stack = await startMakerStack({ SITE_BLOCKLIST: 'other.example' });
});

afterAll(async () => {
  await stack?.stop();
  await sites?.site.close();
});

type ToolError = { code: string; message: string; data?: { issues: { path: string[]; message: string }[] } };

let pathCounter = 0;
/** A site of its own per use: a path on one of the makers' hosts. */
const fresh = (host = 'good.example') => sites.url(host, `/site-${++pathCounter}`);

/** A maker's MCP client, signed in with every maker scope. */
async function makerClient(email: string): Promise<Client> {
  return clientWithToken(stack, (await makerToken(stack, email)).accessToken);
}

async function ok(client: Client, name: string, args: Json): Promise<Json> {
  const r = await tool(client, name, args);
  if (!r.ok) throw new Error(`${name} failed: ${JSON.stringify(r.body)}`);
  return r.body;
}

async function refused(client: Client, name: string, args: Json): Promise<ToolError> {
  const r = await tool(client, name, args);
  if (r.ok) throw new Error(`${name} succeeded: ${JSON.stringify(r.body)}`);
  return r.body as ToolError;
}

/** A complete submission of the site: published at once unless the check holds it. */
function product(website: string, name = 'Lantern Notes'): Json {
  return { website, name, punchline: 'Notes that light the way', description: 'A note app.', category: 'productivity' };
}

async function published(client: Client, website: string, name?: string): Promise<Json> {
  const body = await ok(client, 'submit_product', product(website, name));
  expect(body.outcome, JSON.stringify(body)).toBe('published');
  return body.listing as Json;
}

async function mine(client: Client, slug: string): Promise<Json> {
  return ((await ok(client, 'my_listings', { slug })).listings as Json[])[0]!;
}

let ipCounter = 0;
async function restProduct(slug: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${stack.baseUrl}/api/v1/products/${slug}`, { headers: { 'x-forwarded-for': `203.0.113.${++ipCounter % 250}` } });
  return { status: res.status, body: (await res.json()) as Json };
}

async function websiteFollowed(slug: string): Promise<boolean | undefined> {
  const { rows } = await stack.db.pool.query<{ website_followed: boolean }>('SELECT website_followed FROM projection.products WHERE slug = $1', [slug]);
  return rows[0]?.website_followed;
}

function decide(slug: string, action: 'approve' | 'reject', feedback?: string) {
  return decideListing({ pool: stack.db.pool, urls: stack.service.maker.urls, mailer: { kind: 'log', send: async () => {}, close: () => {} } }, slug, { action, feedback, decidedBy: null });
}

describe('update_listing with a new website', () => {
  let owner: Client;
  let other: Client;

  beforeAll(async () => {
    owner = await makerClient('mover@example.com');
    other = await makerClient('neighbour@example.com');
  });

  afterAll(async () => {
    await owner?.close();
    await other?.close();
  });

  it('keeps a live listing live with a new site that passes the check; the old site is free at once; the badge and images follow the site', async () => {
    const oldSite = fresh();
    const listing = await published(owner, oldSite);
    const slug = String(listing.slug);
    await stack.db.pool.query(`UPDATE catalog.listings SET badge_status = 'verified', badge_verified_at = now(), badge_next_check_at = now() + interval '1 day' WHERE slug = $1`, [slug]);
    await stack.settle();
    expect(await websiteFollowed(slug)).toBe(true);
    expect((await restProduct(slug)).body).toMatchObject({ website: oldSite, logo: expect.stringMatching(/^http:\/\/good\.example:\d+\/touch\.png$/), cover: 'https://cdn.good.example/cover.png' });

    const newSite = fresh('badge.example');
    const fetchesBefore = sites.site.requests.length;
    const body = await ok(owner, 'update_listing', { slug, website: newSite });
    expect(body.outcome).toBe('updated_live');
    expect(body.review_reasons).toEqual([]);
    expect(body.listing).toMatchObject({ status: 'live', website: newSite, previous_website: null, badge: 'not_verified' });
    expect(body.message).toContain(`${oldSite} is free for others to list`);
    expect(body.message).toContain('press Verify');
    // The new site was read, as a submission's site is.
    expect(sites.site.requests.slice(fetchesBefore)).toContain(new URL(newSite).pathname);

    await stack.settle();
    const rest = await restProduct(slug);
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ website: newSite, logo: expect.stringMatching(/^http:\/\/badge\.example:\d+\/touch\.png$/), cover: 'https://cdn.badge.example/cover.png' });
    // The badge was verified on the old site: the link to the new one is not followed until Verify finds it there.
    expect(await websiteFollowed(slug)).toBe(false);
    const { rows } = await stack.db.pool.query('SELECT badge_status, badge_next_check_at, previous_website FROM catalog.listings WHERE slug = $1', [slug]);
    expect(rows[0]).toEqual({ badge_status: 'none', badge_next_check_at: null, previous_website: null });

    // The old site is free; the new one is this listing's.
    expect((await ok(other, 'submit_product', product(oldSite, 'Old Site Now Theirs'))).outcome).toBe('published');
    const taken = await ok(other, 'submit_product', product(newSite, 'Copy'));
    expect(taken.outcome).toBe('already_listed');
    expect((taken.live_listing as Json).slug).toBe(slug);
  });

  it('sends a live listing to review when the new site fails the check, and keeps the old site reserved to it until a reviewer approves', async () => {
    const oldSite = fresh();
    const slug = String((await published(owner, oldSite, 'Reserved Notes')).slug);
    const newSite = fresh('other.example');

    const body = await ok(owner, 'update_listing', { slug, website: newSite });
    expect(body.outcome).toBe('sent_to_review');
    expect(body.review_reasons).toEqual([expect.stringContaining('blocklist')]);
    expect(body.listing).toMatchObject({ status: 'pending', website: newSite, previous_website: oldSite });
    expect(body.message).toContain(`${oldSite} stays reserved to it`);
    await stack.settle();
    expect((await restProduct(slug)).status).toBe(404);
    const { rows } = await stack.db.pool.query('SELECT check_reasons, review_requested_at FROM catalog.listings WHERE slug = $1', [slug]);
    expect(rows[0]!.check_reasons).toEqual([expect.objectContaining({ code: 'blocked_site' })]);
    expect(rows[0]!.review_requested_at).toBeInstanceOf(Date);

    // Nobody else can take the old site meanwhile, by submitting it or by changing a website to it.
    const byOther = await ok(other, 'submit_product', product(oldSite, 'Squatter'));
    expect(byOther.outcome).toBe('already_listed');
    expect((byOther.live_listing as Json).slug).toBe(slug);
    const theirs = String((await published(other, fresh(), 'Their Notes')).slug);
    const moved = await refused(other, 'update_listing', { slug: theirs, website: oldSite });
    expect(moved.code).toBe('BAD_REQUEST');
    expect(moved.data?.issues).toEqual([{ path: ['website'], message: expect.stringContaining('already in the directory as Reserved Notes') }]);
    // Its own maker is told the site is theirs, old and new alike.
    for (const site of [oldSite, newSite]) {
      const again = await ok(owner, 'submit_product', product(site, 'Again'));
      expect(again.outcome, site).toBe('already_submitted');
      expect((again.listing as Json).slug, site).toBe(slug);
    }

    // The reviewer sees the change, and approving it frees the old site.
    const queue = await stack.db.pool.query('SELECT previous_website FROM catalog.listings WHERE slug = $1', [slug]);
    expect(queue.rows[0]!.previous_website).toBe(oldSite);
    await decide(slug, 'approve');
    expect(await mine(owner, slug)).toMatchObject({ status: 'live', website: newSite, previous_website: null });
    await stack.settle();
    expect((await restProduct(slug)).body).toMatchObject({ website: newSite });
    expect((await ok(other, 'submit_product', product(oldSite, 'Old Site, Freed'))).outcome).toBe('published');
  });

  it('sends a listing that is not live to review whatever the check says, and a change back to the reserved site ends the reservation', async () => {
    const first = fresh();
    const pending = await ok(owner, 'submit_product', { website: first, name: 'Unfinished' });
    expect(pending.outcome).toBe('pending_review');
    const slug = String((pending.listing as Json).slug);

    const second = fresh();
    const moved = await ok(owner, 'update_listing', { slug, website: second, punchline: 'Now complete', description: 'Done.', category: 'productivity' });
    expect(moved.outcome).toBe('sent_to_review');
    // The check passed, but only a reviewer takes a listing out of review.
    expect(moved.review_reasons).toEqual([]);
    expect(moved.listing).toMatchObject({ status: 'pending', website: second, previous_website: first });

    const third = fresh();
    expect((await ok(owner, 'update_listing', { slug, website: third })).listing).toMatchObject({ website: third, previous_website: first });
    // The site it was changed to meanwhile was never accepted: it is free.
    expect((await ok(other, 'submit_product', product(second, 'Second Site'))).outcome).toBe('published');
    const back = await ok(owner, 'update_listing', { slug, website: first });
    expect(back.listing).toMatchObject({ status: 'pending', website: first, previous_website: null });
  });

  it('takes another address of the same site as a plain edit: nothing is read or checked again', async () => {
    const site = fresh();
    const slug = String((await published(owner, site, 'Same Site')).slug);
    await stack.db.pool.query(`UPDATE catalog.listings SET badge_status = 'verified' WHERE slug = $1`, [slug]);
    // https, www. and a trailing slash: the same website identity.
    const sameSite = `${site.replace('http://good.example', 'https://www.good.example')}/`;
    const fetchesBefore = sites.site.requests.length;
    const body = await ok(owner, 'update_listing', { slug, website: sameSite });
    expect(body.outcome).toBe('updated_live');
    expect(body.listing).toMatchObject({ status: 'live', website: sameSite, previous_website: null, badge: 'verified' });
    expect(sites.site.requests.length).toBe(fetchesBefore);
  });

  it('refuses a site already listed, one of the maker\'s own, and one on a private address before reading it; and a rejected listing\'s website; nothing changes', async () => {
    const slug = String((await published(owner, fresh(), 'Stays Put')).slug);
    const ownOther = fresh();
    await published(owner, ownOther, 'Own Other');
    const theirs = fresh();
    await published(other, theirs, 'Theirs');
    const before = await mine(owner, slug);
    const fetchesBefore = sites.site.requests.length;

    const cases: [string, RegExp][] = [
      [theirs, /^This site is already in the directory as Theirs \(https:\/\/directory\.test\/products\/[a-z0-9-]+\): one site has one listing\.$/],
      [ownOther.replace('http://', 'http://www.'), /^You already have a listing for this site, Own Other \(live\): edit that listing instead\.$/],
      ['http://inside.example/', /^The website is not reachable from the internet: inside\.example resolves to 10\.0\.0\.5/],
    ];
    for (const [website, message] of cases) {
      const error = await refused(owner, 'update_listing', { slug, website, name: 'Renamed' });
      expect(error.code, website).toBe('BAD_REQUEST');
      expect(error.data?.issues, website).toEqual([{ path: ['website'], message: expect.stringMatching(message) }]);
    }
    expect(sites.site.requests.length).toBe(fetchesBefore);
    expect(await mine(owner, slug)).toEqual(before);

    await decide(slug, 'reject', 'Not a product.');
    const rejected = await refused(owner, 'update_listing', { slug, website: fresh() });
    expect(rejected.code).toBe('CONFLICT');
    expect(rejected.message).toBe(REJECTED_IS_FINAL);
    expect(sites.site.requests.length).toBe(fetchesBefore);
  });
});

describe("submitting the site of one's own rejected listing", () => {
  it('answers already_submitted naming the rejected listing and its feedback, over MCP and on the pages; another maker may still submit it', async () => {
    const client = await makerClient('rejected-maker@example.com');
    const site = fresh();
    const slug = String((await published(client, site, 'Turned Down')).slug);
    await decide(slug, 'reject', 'This is a reseller page, not the product itself.');

    const again = await ok(client, 'submit_product', product(site.replace('http://', 'https://www.'), 'Turned Down Again'));
    expect(again.outcome).toBe('already_submitted');
    expect(again.listing).toMatchObject({ slug, status: 'rejected', feedback: 'This is a reseller page, not the product itself.' });
    expect(again.message).toContain('the directory rejected Turned Down, saying: "This is a reseller page, not the product itself."');
    expect(again.message).toContain('cannot be submitted again');
    await client.close();

    const browser: MakerBrowser = await signInMaker(stack, 'rejected-maker@example.com');
    const count = async () => (await stack.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog.listings')).rows[0]!.n;
    const before = await count();
    const res = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', { ...product(site, 'From The Form'), tags: '' } as Record<string, string>);
    expect(res.status).toBe(200);
    const page = parsePage(await res.text());
    expect(page.texts('h1')).toEqual(['You already submitted this site']);
    const text = page.texts('main').join(' ').replace(/\s+/g, ' ');
    expect(text).toContain('The directory rejected your listing for this site, Turned Down');
    expect(text).toContain(REJECTED_IS_FINAL);
    expect(text).toContain('This is a reseller page, not the product itself.');
    expect(page.all('a').map((a) => page.attr(a, 'href'))).toContain(`/dashboard/listings/${slug}`);
    expect(await count()).toBe(before);

    const stranger = await makerClient('stranger-to-rejection@example.com');
    expect((await ok(stranger, 'submit_product', product(site, 'Someone Else'))).outcome).toBe('published');
    await stranger.close();
  });
});

describe('the edit page', () => {
  let browser: MakerBrowser;

  beforeAll(async () => {
    browser = await signInMaker(stack, 'page-mover@example.com');
  });

  async function submitted(website: string): Promise<string> {
    const res = await fillAndPost(browser, '/dashboard/new', '/dashboard/new', { ...product(website, 'Page Notes'), tags: '' } as Record<string, string>);
    expect(res.status).toBe(303);
    return /^\/dashboard\/listings\/([a-z0-9-]+)$/.exec(res.headers.get('location') ?? '')![1]!;
  }

  async function editPage(slug: string) {
    const page = parsePage(await (await browser.request(`/dashboard/listings/${slug}`)).text());
    return { page, notices: notices(page), facts: page.texts('dl').join(' ').replace(/\s+/g, ' ') };
  }

  it('changes the website: a live listing with a site that passes stays live, one that does not goes to review with the old site reserved', async () => {
    const slug = await submitted(fresh());
    const path = `/dashboard/listings/${slug}`;
    const passing = fresh('badge.example');
    const saved = await fillAndPost(browser, path, path, { website: passing });
    expect(saved.status).toBe(303);
    const live = await editPage(slug);
    expect(live.notices.join(' ')).toContain(`the automatic check passed on ${passing}`);
    expect(live.facts).toContain(passing);
    expect(live.facts).not.toContain('Previous website');

    const held = fresh('other.example');
    expect((await fillAndPost(browser, path, path, { website: held })).status).toBe(303);
    const review = await editPage(slug);
    expect(review.notices.join(' ')).toContain('with its new website the listing is waiting for review');
    expect(review.notices.join(' ')).toContain(`${passing} stays reserved to this listing`);
    expect(review.facts).toContain(`Previous website${passing} reserved to this listing until a reviewer approves its new website`);
  });

  it('shows a refused website next to its field, with everything as typed, and changes nothing', async () => {
    const slug = await submitted(fresh());
    const path = `/dashboard/listings/${slug}`;
    const taken = fresh();
    const client = await makerClient('page-neighbour@example.com');
    await published(client, taken, 'Taken Site');
    await client.close();

    const res = await fillAndPost(browser, path, path, { website: taken, name: 'Renamed On The Page' });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(shownErrors(html).fields.website).toMatch(/^This site is already in the directory as Taken Site/);
    expect(parsePage(html).byId('field-name') && parsePage(html).attr(parsePage(html).byId('field-name')!, 'value')).toBe('Renamed On The Page');
    const { rows } = await stack.db.pool.query('SELECT name FROM catalog.listings WHERE slug = $1', [slug]);
    expect(rows[0]!.name).toBe('Page Notes');
  });
});
