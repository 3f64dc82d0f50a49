import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BADGE_RECHECK_LEADER_LOCK } from '../../../../src/db/locks.ts';
import { createBadgeRecheckJob } from '../../../../src/catalog/badges/badge-recheck-job.ts';
import { verifyBadge } from '../../../../src/catalog/badges/badges.ts';
import { BADGE_MISSING_FEEDBACK } from '../../../../src/catalog/review/review-rules.ts';
import { projectPath } from '../../../../src/util/project-file.ts';
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts';
import { makerToken } from '../../../helpers/oauth.ts';
import { makerClient, myListing, siteHandler, tool } from '../../../helpers/review.ts';
import { startSite, tableResolver, type TestSite } from '../../../helpers/site-network.ts';
import { startTestStack, type TestStack } from '../../../helpers/stack.ts';

/**
 * The scheduled badge re-check against makers' sites on loopback: a verified badge removed from
 * a site hides its listing after two re-checks in a row, Verify brings it back; a site that
 * cannot be read never hides anything. The re-checks' clock is the test's, so a day passes in
 * a line; the sites are real HTTP servers reached through the service's safe fetcher.
 */
const DAY = 24 * 60 * 60 * 1000;
const HOUR = 60 * 60 * 1000;
const HOSTS = ['steady.example', 'interrupted.example', 'flaky.example', 'slow.example'];

let stack: TestStack;
let site: TestSite;
let maker: Client;
let makerId: string;
const badges = new Map<string, string>();
const broken = new Set<string>();
let offset = 0;
const clock = () => new Date(Date.now() + offset);

beforeAll(async () => {
  const handler = siteHandler(badges, broken);
  site = await startSite((req, res) => {
    // slow.example answers after a pause, so overlapping fetches can be counted
    if ((req.headers.host ?? '').startsWith('slow.example')) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        handler(req, res);
      }, 150);
      return;
    }
    handler(req, res);
  });
  stack = await startTestStack({
    realPublicUrl: true,
    env: { FETCH_ALLOW_LOOPBACK: 'true', TRUST_PROXY: 'true', RATE_LIMIT_OTHER_PER_MIN: '100000', RATE_LIMIT_SEARCH_PER_MIN: '100000' },
    fetchOptions: { resolver: tableResolver(Object.fromEntries(HOSTS.map((h) => [h, ['127.0.0.1']]))) },
    // Passes run when the test says: the poll is far away, the clock is the test's.
    badgeRechecks: { now: clock, pollMs: DAY },
  });
  maker = await makerClient(stack, (await makerToken(stack, 'badge-maker@example.com')).accessToken);
  makerId = (await stack.db.pool.query<{ id: string }>(`SELECT id FROM catalog.makers WHERE email = 'badge-maker@example.com'`)).rows[0]!.id;
}, 120_000);

afterAll(async () => {
  await maker?.close();
  await stack?.stop();
  await site?.close();
});

let inFlight = 0;
let maxInFlight = 0;

/** A live listing whose badge the maker put on the site and verified, as the edit page's Verify does. */
async function verifiedListing(host: string, name: string): Promise<string> {
  const submitted = await tool(maker, 'submit_product', {
    website: `http://${host}:${site.port}/`,
    name,
    punchline: `${name} in one line`,
    description: `What ${name} does.`,
    category: 'productivity',
  });
  expect(submitted.body.outcome, JSON.stringify(submitted.body)).toBe('published');
  const slug = (submitted.body.listing as { slug: string }).slug;
  const check = await tool(maker, 'check_badge', { slug });
  expect(check.body.status).toBe('missing');
  badges.set(host, check.body.markup as string);
  const verified = await verifyBadge(stack.service.maker, makerId, slug);
  expect(verified.check.status).toBe('found');
  return slug;
}

async function row(slug: string) {
  const { rows } = await stack.db.pool.query<{ status: string; hidden_reason: string | null; badge_status: string; badge_misses: number; badge_next_check_at: Date | null; review_feedback: string | null }>(
    'SELECT status::text AS status, hidden_reason, badge_status, badge_misses, badge_next_check_at, review_feedback FROM catalog.listings WHERE slug = $1',
    [slug],
  );
  return rows[0]!;
}

async function restStatus(slug: string): Promise<number> {
  await stack.settle();
  return (await fetch(`${stack.baseUrl}/api/v1/products/${slug}`)).status;
}

async function productivityCount(): Promise<number> {
  await stack.settle();
  const body = (await (await fetch(`${stack.baseUrl}/api/v1/categories`)).json()) as { categories: { slug: string; count: number }[] };
  return body.categories.find((c) => c.slug === 'productivity')!.count;
}

describe('daily re-checks of verified badges', () => {
  let steady: string;
  let interrupted: string;
  let flaky: string;

  beforeAll(async () => {
    steady = await verifiedListing('steady.example', 'Steady Badge');
    interrupted = await verifiedListing('interrupted.example', 'Interrupted Badge');
    flaky = await verifiedListing('flaky.example', 'Flaky Site');
  });

  it('checks nothing before a badge is a day old, and schedules each check a day later give or take the jitter', async () => {
    const verifiedAt = Date.now();
    for (const slug of [steady, interrupted, flaky]) {
      const next = (await row(slug)).badge_next_check_at!.getTime();
      // The first check after Verify is spread like every other: a day, give or take 2 hours.
      expect(next - verifiedAt).toBeGreaterThan(DAY - 2 * HOUR - 5 * 60_000);
      expect(next - verifiedAt).toBeLessThanOrEqual(DAY + 2 * HOUR);
    }
    expect(await stack.service.badgeRechecks!.runOnce()).toMatchObject({ checked: 0 });
  });

  it('hides a listing whose badge is missing on two checks in a row, never one whose site cannot be read, and tells the maker', async () => {
    const countBefore = await productivityCount();
    badges.delete('steady.example');
    badges.delete('interrupted.example');
    broken.add('flaky.example');

    // Past the latest moment the first check can be due (a day after Verify, plus up to 2 hours).
    offset = DAY + 3 * HOUR;
    expect(await stack.service.badgeRechecks!.runOnce()).toMatchObject({ checked: 3, missing: 2, inconclusive: 1, hidden: 0 });
    expect(await row(steady)).toMatchObject({ status: 'live', badge_misses: 1, badge_status: 'verified' });
    expect(await row(interrupted)).toMatchObject({ status: 'live', badge_misses: 1 });
    expect(await row(flaky)).toMatchObject({ status: 'live', badge_misses: 0 });
    const nextCheck = (await row(steady)).badge_next_check_at!.getTime();
    const checkedAt = clock().getTime();
    expect(nextCheck).toBeGreaterThanOrEqual(checkedAt + DAY - 2 * HOUR - 1000);
    expect(nextCheck).toBeLessThanOrEqual(checkedAt + DAY + 2 * HOUR);
    expect(await restStatus(steady)).toBe(200);

    // the maker puts one badge back before the next check: the misses start again
    badges.set('interrupted.example', (await tool(maker, 'check_badge', { slug: interrupted })).body.markup as string);
    const mailsBefore = stack.mails.length;
    offset = 2 * DAY + 6 * HOUR;
    expect(await stack.service.badgeRechecks!.runOnce()).toMatchObject({ checked: 3, missing: 1, found: 1, inconclusive: 1, hidden: 1 });
    expect(await row(steady)).toMatchObject({ status: 'hidden', hidden_reason: 'badge_missing', badge_status: 'none', badge_misses: 2, badge_next_check_at: null, review_feedback: BADGE_MISSING_FEEDBACK });
    expect(await row(interrupted)).toMatchObject({ status: 'live', badge_misses: 0 });
    expect(await row(flaky)).toMatchObject({ status: 'live', badge_misses: 0 });

    expect(await restStatus(steady)).toBe(404);
    expect(await productivityCount()).toBe(countBefore - 1);
    expect(await myListing(maker, steady)).toMatchObject({ status: 'hidden', hidden_reason: 'badge_missing', feedback: BADGE_MISSING_FEEDBACK });
    const { rows: recorded } = await stack.db.pool.query(
      `SELECT d.action, d.from_status::text AS from_status, d.to_status::text AS to_status, d.decided_by FROM catalog.review_decisions d JOIN catalog.listings l ON l.id = d.listing_id WHERE l.slug = $1`,
      [steady],
    );
    expect(recorded).toEqual([{ action: 'badge_hide', from_status: 'live', to_status: 'hidden', decided_by: null }]);
    const mails = stack.mails.slice(mailsBefore);
    expect(mails).toHaveLength(1);
    expect(mails[0]!).toMatchObject({ to: 'badge-maker@example.com', subject: expect.stringContaining('Steady Badge is hidden') });
    expect(mails[0]!.text).toContain(`${stack.baseUrl}/dashboard/listings/${steady}`);

    // a hidden listing is not checked again; the unreadable site is never hidden, however long it stays down
    badges.delete('interrupted.example');
    // (each pass more than a day and the jitter after the one before, so every badge checked then is due)
    for (const at of [3 * DAY + 9 * HOUR, 4 * DAY + 12 * HOUR]) {
      offset = at;
      const pass = await stack.service.badgeRechecks!.runOnce();
      expect(pass).toMatchObject({ inconclusive: 1 });
    }
    expect(await row(flaky)).toMatchObject({ status: 'live', badge_misses: 0, badge_status: 'verified' });
    expect(await restStatus(flaky)).toBe(200);
    expect((await row(interrupted)).status).toBe('hidden');
  });

  it("brings the listing back when the maker's Verify finds the badge again", async () => {
    const stillMissing = await verifyBadge(stack.service.maker, makerId, steady);
    expect(stillMissing).toMatchObject({ restored: false, check: { status: 'missing' } });
    expect((await row(steady)).status).toBe('hidden');

    badges.set('steady.example', (await tool(maker, 'check_badge', { slug: steady })).body.markup as string);
    const verified = await verifyBadge(stack.service.maker, makerId, steady);
    expect(verified.restored).toBe(true);
    expect(await row(steady)).toMatchObject({ status: 'live', hidden_reason: null, badge_status: 'verified', badge_misses: 0, review_feedback: null });
    expect(await restStatus(steady)).toBe(200);
    expect(await myListing(maker, steady)).toMatchObject({ status: 'live', feedback: null, hidden_reason: null });
  });

  it('runs in one process per database: another process stands by', async () => {
    const standby = createBadgeRecheckJob({
      connectionString: stack.db.url,
      pool: stack.db.pool,
      fetcher: stack.service.maker.fetcher,
      urls: stack.service.maker.urls,
      mailer: stack.service.accounts.mailer,
      log: pino({ level: 'silent' }),
      pollMs: DAY,
    });
    await standby.start();
    try {
      expect(stack.service.badgeRechecks!.isLeader).toBe(true);
      expect(standby.isLeader).toBe(false);
      expect(await standby.runOnce()).toBeUndefined();
    } finally {
      await standby.stop();
    }
  });
});

describe('bounded concurrency', () => {
  it('fetches at most 4 sites at once', async () => {
    const due = new Date(clock().getTime() - HOUR);
    await stack.db.pool.query(
      `INSERT INTO catalog.listings (slug, name, punchline, description, website, status, plan, listed_at, badge_status, badge_verified_at, badge_next_check_at)
       SELECT 'slow-' || i, 'Slow ' || i, 'Slow site', '', 'http://slow.example:' || $1 || '/p' || i, 'live', 'free', now(), 'verified', now(), $2
         FROM generate_series(1, 10) AS i`,
      [site.port, due],
    );
    const pass = await stack.service.badgeRechecks!.runOnce();
    // the ten slow sites (and any badge of the tests above that fell due meanwhile)
    expect(pass).toMatchObject({ missing: 10, failed: 0 });
    expect(maxInFlight).toBeGreaterThan(0);
    expect(maxInFlight).toBeLessThanOrEqual(4);
  });
});

describe('in the catalog projector process', () => {
  let db: TestDatabase;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await db?.drop();
  });

  it('takes the re-check lock and hides a listing due for its second missing badge', async () => {
    const { rows } = await db.pool.query<{ id: string }>(`INSERT INTO catalog.makers (email) VALUES ('projector-maker@example.com') RETURNING id`);
    await db.pool.query(
      `INSERT INTO catalog.listings (slug, name, punchline, description, website, status, plan, listed_at, maker_id, badge_status, badge_verified_at, badge_misses, badge_next_check_at)
       VALUES ('once-missed', 'Once Missed', 'Missed one check', '', $1, 'live', 'free', now(), $2, 'verified', now() - interval '2 days', 1, now() - interval '1 minute')`,
      [`http://127.0.0.1:${site.port}/`, rows[0]!.id],
    );
    let stdout = '';
    child = spawn(process.execPath, [path.join(path.dirname(projectPath('package.json')), 'bin/catalog.js'), 'projector'], {
      env: { ...process.env, DATABASE_URL: db.url, SITE_URL: 'https://directory.test', FETCH_ALLOW_LOOPBACK: 'true', LOG_LEVEL: 'info', LOG_FORMAT: 'json', SMTP_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    const deadline = Date.now() + 30_000;
    let status = 'live';
    while (status !== 'hidden' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await db.pool.query<{ status: string }>(`SELECT status::text AS status FROM catalog.listings WHERE slug = 'once-missed'`)).rows[0]!.status;
    }
    expect(status).toBe('hidden');
    const locks = await db.pool.query(
      `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.objid = $1 AND l.granted
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [BADGE_RECHECK_LEADER_LOCK],
    );
    expect(locks.rows).toEqual([{ application_name: 'catalog-badge-rechecks' }]);
    await expect.poll(() => stdout, { timeout: 10_000 }).toContain('Once Missed is hidden');
  }, 60_000);
});
