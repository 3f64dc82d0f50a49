import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCatalog, type PreparedCatalog } from '../../bench/cluster/catalog-fixture.ts';
import { checkLedger, checkProjection, percentile, untilVisibleEverywhere } from '../../bench/cluster/checks.ts';
import { callTool, connectApp, csrfOf, mcpClient, randomAddress, rawToolCall, signIn, tokenRequest } from '../../bench/cluster/clients.ts';
import { startCluster, type Cluster } from '../../bench/cluster/cluster.ts';
import { startClusterDatabase, type ClusterDatabase } from '../../bench/cluster/database.ts';
import { allReady, budgetsShared, databaseFreeze, databaseRestart, killAndRestartApi, killLeadingProjector, redisFreeze, redisOutage, until, watchLeaderLocks } from '../../bench/cluster/faults.ts';
import { startMakerSites, type MakerSites } from '../../bench/cluster/maker-sites.ts';
import { closeAgents, makerAgents, newLedger, runMakerWorkload, type Ledger, type MakerAgent } from '../../bench/cluster/workload.ts';
import { formEntries, typed } from '../helpers/maker-pages.ts';
import { runCatalogCommand } from '../helpers/review.ts';
import { skipWithoutRedisServer, startTestRedis, type RedisServer } from '../helpers/redis.ts';

/**
 * The service as a cluster, under faults: three `catalog api` and two `catalog projector`
 * processes (real child processes of bin/catalog.js), a redis-server and a PostgreSQL of this
 * file's own (so stopping them disturbs nobody), makers' sites on loopback. One cluster serves
 * every scenario, in order; each leaves it whole for the next. Requests are spread over the API
 * processes. Figures (freshness, takeover and recovery times) are printed, never asserted:
 * `npm run chaos` measures them over a longer run.
 */
const RUN = randomBytes(3).toString('hex');
// Without redis-server the cluster cannot run: skipped with one line, except under CI, where it fails.
const skip = skipWithoutRedisServer('the cluster tests');

let database: ClusterDatabase | undefined;
let redis: RedisServer | undefined;
let sites: MakerSites | undefined;
let cluster: Cluster;
let catalog: PreparedCatalog;
let locks: ReturnType<typeof watchLeaderLocks>;
let agents: MakerAgent[] = [];
const figures: Record<string, unknown> = {};

beforeAll(async () => {
  if (skip) return;
  [database, redis, sites] = await Promise.all([startClusterDatabase(), startTestRedis(), startMakerSites()]);
  const db = database;
  const makerSites = sites;
  cluster = await startCluster({
    database: db,
    redis,
    sites: makerSites,
    apis: 3,
    projectors: 2,
    prepare: async (publicUrl) => {
      catalog = await prepareCatalog(db.url, { publicUrl, sites: makerSites, listings: 300 });
    },
  });
  locks = watchLeaderLocks(cluster);
  agents = await makerAgents(cluster, 8, RUN);
}, 240_000);

afterAll(async () => {
  console.log(`cluster figures: ${JSON.stringify(figures)}`);
  await locks?.stop();
  await closeAgents(agents);
  await cluster?.stop();
  await redis?.stop();
  await sites?.close();
  await database?.destroy();
}, 60_000);

const ip = () => ({ 'x-forwarded-for': randomAddress() });

describe.skipIf(skip)('a cluster of 3 API processes and 2 projectors', () => {
  it('counts one rate budget per address across every API process, whichever answers', async () => {
    const address = randomAddress();
    const at = (i: number) => cluster.apis[i % cluster.apis.length]!.url!;
    const searches = await Promise.all(Array.from({ length: 40 }, (_, i) => fetch(`${at(i)}/api/v1/search?limit=1`, { headers: { 'x-forwarded-for': address } })));
    expect(searches.filter((r) => r.status === 200)).toHaveLength(30);
    expect(searches.filter((r) => r.status === 429)).toHaveLength(10);
    for (const api of cluster.apis) {
      const refused = await fetch(`${api.url}/api/v1/search`, { headers: { 'x-forwarded-for': address } });
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { code: string }).code).toBe('TOO_MANY_REQUESTS');
    }
    const others = await Promise.all(Array.from({ length: 70 }, (_, i) => fetch(`${at(i)}/api/v1/categories`, { headers: { 'x-forwarded-for': address } })));
    expect(others.filter((r) => r.status === 200)).toHaveLength(60);
    expect(others.filter((r) => r.status === 429)).toHaveLength(10);
  });

  it('signs in, connects an app and refreshes across processes; Disconnect on one is seen by the next call on another', async () => {
    const [a, b, c] = cluster.apis as [NonNullable<Cluster['apis'][number]>, NonNullable<Cluster['apis'][number]>, NonNullable<Cluster['apis'][number]>];
    // Every process signs with the same keys, from the database.
    const keys = await Promise.all(cluster.apis.map(async (api) => (await fetch(`${api.url}/oauth/jwks`)).text()));
    expect(new Set(keys).size).toBe(1);

    const email = `oauth-${RUN}@cluster.example`;
    const browser = await signIn(email, a, b);
    const dashboard = await browser.request(c.url!, '/dashboard');
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toContain(email);

    const app = await connectApp(browser, { authorize: a, consent: b, token: c });
    const onA = await mcpClient(a, app.accessToken);
    const listings = await callTool(onA, 'my_listings', {});
    expect(listings.ok, JSON.stringify(listings.body)).toBe(true);
    await onA.close();

    // The same refresh token at the same instant to B and C: one new pair, both callers get it.
    const refresh = { grant_type: 'refresh_token', refresh_token: app.refreshToken, client_id: app.clientId };
    const [fromB, fromC] = await Promise.all([tokenRequest(b, refresh), tokenRequest(c, refresh)]);
    expect([fromB.status, fromC.status], JSON.stringify([fromB.body, fromC.body])).toEqual([200, 200]);
    expect(fromC.body).toEqual(fromB.body);
    expect(fromB.body.refresh_token).not.toBe(app.refreshToken);
    const { rows } = await cluster.pool.query<{ revoked: boolean }>('SELECT revoked_at IS NOT NULL AS revoked FROM auth.grants g JOIN catalog.makers m ON m.id = g.maker_id WHERE m.email = $1', [email]);
    expect(rows).toEqual([{ revoked: false }]);
    const token = fromB.body.access_token!;
    expect((await rawToolCall(a, 'my_listings', {}, token)).status).toBe(200);
    const again = await tokenRequest(a, { ...refresh, refresh_token: fromB.body.refresh_token! });
    expect(again.status, JSON.stringify(again.body)).toBe(200);

    // Disconnect on B: the very next call with the token, on C, is refused.
    const apps = await browser.request(b.url!, '/settings/apps');
    const html = await apps.text();
    const action = /action="(\/settings\/apps\/[^"]+\/disconnect)"/.exec(html)![1]!.replace(/&amp;/g, '&');
    expect((await browser.request(b.url!, action, { form: { _csrf: csrfOf(html) } })).status).toBe(303);
    const refused = await rawToolCall(c, 'list_categories', {}, again.body.access_token);
    expect(refused.status).toBe(401);
  }, 60_000);

  it('shows a write made through any process, by a maker tool, a form or the command line, on every process', async () => {
    const [agent] = agents;
    const delays: number[] = [];
    const slugs: { slug: string; word: string; category: string }[] = [];
    const restBySlug = (slug: string, has: string) => async (origin: string) => {
      const res = await fetch(`${origin}/api/v1/products/${slug}`, { headers: ip() });
      return res.status === 200 && (await res.text()).includes(has);
    };
    const liveCount = async (category: string) =>
      (await cluster.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.listings WHERE category = $1 AND status = 'live'`, [category])).rows[0]!.n;
    const everywhere = async (origin: string, s: { slug: string; word: string; category: string }, count: number, has: string) => {
      const headers = ip();
      const [bySlug, search, categories] = await Promise.all([
        restBySlug(s.slug, has)(origin),
        fetch(`${origin}/api/v1/search?q=${s.word}`, { headers }).then((r) => r.json() as Promise<{ products: { slug: string }[] }>),
        fetch(`${origin}/api/v1/categories`, { headers }).then((r) => r.json() as Promise<{ categories: { slug: string; count: number }[] }>),
      ]);
      return bySlug && search.products.some((p) => p.slug === s.slug) && categories.categories.find((c) => c.slug === s.category)?.count === count;
    };
    // Maker tool submissions, each through another process.
    for (let i = 0; i < 9; i++) {
      const word = `fresh${randomBytes(4).toString('hex')}`;
      const category = catalog.categories[randomInt(catalog.categories.length)]!;
      const answer = await callTool(agent!.mcp[i % 3]!, 'submit_product', {
        website: cluster.sites.url(`fresh-${i}-${RUN}.cluster.example`),
        name: `Fresh ${word}`,
        punchline: 'Seen everywhere at once',
        description: 'Submitted to measure freshness across processes.',
        category,
      });
      expect(answer.body.outcome, JSON.stringify(answer.body)).toBe('published');
      const s = { slug: (answer.body.listing as { slug: string }).slug, word, category };
      slugs.push(s);
      const count = await liveCount(category);
      delays.push(await untilVisibleEverywhere(cluster, (origin) => everywhere(origin, s, count, word), 20_000));
    }
    // The MCP read tools on every process show the last one.
    const last = slugs[slugs.length - 1]!;
    for (const api of cluster.apis) {
      const client = await mcpClient(api);
      expect((await callTool(client, 'get_product', { slug: last.slug })).ok).toBe(true);
      const found = await callTool(client, 'search_products', { q: last.word });
      expect((found.body.products as { slug: string }[]).map((p) => p.slug)).toContain(last.slug);
      await client.close();
    }

    // The edit form, on each process in turn.
    const maker = await signIn(agent!.email, cluster.apis[1]!, cluster.apis[2]!);
    for (let i = 0; i < 6; i++) {
      const s = slugs[i]!;
      const origin = cluster.apis[i % 3]!.url!;
      const path = `/dashboard/listings/${s.slug}`;
      const page = await maker.request(origin, path);
      expect(page.status).toBe(200);
      const punchline = `Edited on the page ${randomBytes(4).toString('hex')}`;
      const saved = await maker.request(origin, path, { form: typed(formEntries(await page.text(), path), { punchline }) });
      expect(saved.status).toBe(303);
      delays.push(await untilVisibleEverywhere(cluster, restBySlug(s.slug, punchline), 20_000));
    }

    // The command line: an operator hides a listing.
    const hidden = slugs[0]!;
    const count = (await liveCount(hidden.category)) - 1;
    const run = await catalogCommand(['review', 'hide', hidden.slug]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('hidden');
    delays.push(
      await untilVisibleEverywhere(
        cluster,
        async (origin) => {
          const [gone, counts] = await Promise.all([
            fetch(`${origin}/api/v1/products/${hidden.slug}`, { headers: ip() }).then((r) => r.status === 404),
            fetch(`${origin}/api/v1/categories`, { headers: ip() }).then((r) => r.json() as Promise<{ categories: { slug: string; count: number }[] }>),
          ]);
          return gone && counts.categories.find((c) => c.slug === hidden.category)?.count === count;
        },
        20_000,
      ),
    );
    figures.freshness_ms = { writes: delays.length, p50: Math.round(percentile(delays, 50)), p99: Math.round(percentile(delays, 99)), max: Math.round(Math.max(...delays)) };
  }, 120_000);

  it('loses nothing and doubles nothing through 1,000 maker writes while the leading projector is killed every 2 to 5 s', async () => {
    const ledger = newLedger();
    let writing = true;
    const takeovers: number[] = [];
    const killer = (async () => {
      while (writing) {
        await new Promise((r) => setTimeout(r, 2000 + randomInt(3000)));
        if (!writing) break;
        const takeover = await killLeadingProjector(cluster);
        takeovers.push(takeover.takeoverMs);
        await takeover.restarted;
      }
    })();
    // Paced to about 20 s, so the leader is killed two to five times while the writes go on
    // (each kill waits 2 to 5 s, then for the killed projector to be back as a standby).
    await runMakerWorkload({ cluster, agents, categories: catalog.categories, writes: 1000, perSecond: 50, ledger, run: `${RUN}f` }).finally(() => (writing = false));
    await killer;
    figures.failover = { writes: ledger.answers.sent, kills: takeovers.length, takeover_ms: takeovers };
    expect(takeovers.length).toBeGreaterThanOrEqual(2);
    // The projector's faults never reach a maker: every one of the 1,000 writes was acknowledged.
    expect(ledger.answers).toMatchObject({ sent: 1000, acknowledged: 1000 });
    await expectNothingLost(ledger, 1000);
    expect(cluster.leaders()).toHaveLength(1);
    expect(locks.max).toBe(1);
  }, 240_000);

  it('keeps every write whole when an API process is killed in the middle of writes, and the restarted process rejoins by itself', async () => {
    const ledger = newLedger();
    let writing = true;
    const load = runMakerWorkload({ cluster, agents, categories: catalog.categories, until: () => !writing, ledger, run: `${RUN}k` });
    await until('writes under way', 30_000, () => (ledger.answers.acknowledged > 40 ? true : undefined));
    const victim = cluster.apis[1]!;
    const { recoveryMs } = await killAndRestartApi(cluster, victim);
    const acknowledgedAtRestart = ledger.answers.acknowledged;
    await until('writes through the restarted process', 30_000, () => (ledger.answers.acknowledged > acknowledgedAtRestart + 40 ? true : undefined));
    writing = false;
    await load;
    figures.api_kill = { recovery_ms: recoveryMs, writes: ledger.answers.sent, connection_errors: ledger.answers.connectionErrors };
    await expectNothingLost(ledger, 80);
    // All or nothing: every listing the run made has its outbox row, written in the same transaction.
    const { rows } = await cluster.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM catalog.listings l WHERE l.website LIKE $1 AND NOT EXISTS (SELECT 1 FROM catalog.outbox o WHERE o.listing_id = l.id)`,
      [`%-${RUN}k.cluster.example%`],
    );
    expect(rows[0]!.n).toBe(0);
    const res = await fetch(`${victim.url}/readyz`);
    expect(res.status).toBe(200);
  }, 120_000);

  it('keeps answering reads through a Redis outage, limits per process meanwhile, and shares budgets again once it is back', async () => {
    const reads = readLoad();
    const address = randomAddress();
    const { recoveryMs } = await redisOutage(cluster, 10_000, async () => {
      // Meanwhile each process counts on its own: 30 searches on one, then the same address has 30 more on another.
      const [first, second] = cluster.apis;
      const onFirst = [];
      for (let i = 0; i < 31; i++) onFirst.push((await fetch(`${first!.url}/api/v1/search?limit=1`, { headers: { 'x-forwarded-for': address } })).status);
      expect(onFirst.slice(0, 30).every((s) => s === 200)).toBe(true);
      expect(onFirst[30]).toBe(429);
      expect((await fetch(`${second!.url}/api/v1/search?limit=1`, { headers: { 'x-forwarded-for': address } })).status).toBe(200);
    });
    const answered = await reads.stop();
    figures.redis_outage = { recovery_ms: recoveryMs, reads: answered.total };
    expect(answered.total).toBeGreaterThan(50);
    expect(answered.errors, JSON.stringify(answered)).toBe(0);
    expect(await budgetsShared(cluster)).toBe(true);
  }, 90_000);

  it('goes on reading through a PostgreSQL restart, refuses writes clearly meanwhile, loses nothing, and recovers by itself', async () => {
    const reads = readLoad();
    const ledger = newLedger();
    let writing = true;
    const load = runMakerWorkload({ cluster, agents: agents.slice(0, 4), categories: catalog.categories, until: () => !writing, ledger, run: `${RUN}p`, attempts: 60 });
    await until('writes under way', 30_000, () => (ledger.answers.acknowledged > 20 ? true : undefined));
    const [agent] = agents;
    const slug = await anyListingOf(agent!.email);
    const during: Record<string, unknown> = {};
    const { recoveryMs } = await databaseRestart(cluster, 8_000, async () => {
      const stopped = Date.now();
      await until('/readyz 503 on every API process', 20_000, async () => ((await allReady(cluster, 503)) ? true : undefined));
      during.readyz_503_after_ms = Date.now() - stopped;
      // A maker tool: a tool error with the code, at once.
      const started = Date.now();
      const tool = await callTool(agent!.mcp[2]!, 'update_listing', { slug, punchline: 'Written while the database is away' });
      during.maker_tool_answer_ms = Date.now() - started;
      expect(tool.ok).toBe(false);
      expect(tool.body.code).toBe('SERVICE_UNAVAILABLE');
      expect(Date.now() - started).toBeLessThan(5_000);
      // A form: a 503 page naming the code.
      const form = await agent!.admin.request(cluster.apis[0]!.url!, `/admin/listings/${slug}/decisions`, { form: { _csrf: agent!.adminCsrf, action: 'hide', from: 'listing', feedback: '' } });
      expect(form.status).toBe(503);
      expect(form.headers.get('retry-after')).toBeTruthy();
      expect(await form.text()).toContain('SERVICE_UNAVAILABLE');
      // OAuth: 503 temporarily_unavailable, a refresh (its lock) and a code exchange (the library) alike.
      for (const params of <Record<string, string>[]>[
        { grant_type: 'refresh_token', refresh_token: 'not-a-real-refresh-token', client_id: 'any' },
        { grant_type: 'authorization_code', code: 'not-a-real-code', client_id: 'any', redirect_uri: 'http://127.0.0.1:45679/callback', code_verifier: 'x'.repeat(43) },
      ]) {
        const answer = await tokenRequest(cluster.apis[1]!, params);
        expect([answer.status, answer.body.error], params.grant_type).toEqual([503, 'temporarily_unavailable']);
      }
      // The command line: a one-line message and the exit status for "try again later".
      const cli = await catalogCommand(['review', 'hide', slug]);
      expect(cli.code).toBe(75);
      expect(cli.stderr).toMatch(/^catalog: the database cannot be reached .*; retry once it is back\n$/);
    });
    writing = false;
    await load;
    const answered = await reads.stop();
    figures.postgres_restart = { recovery_ms: recoveryMs, ...during, writes: ledger.answers.sent, unavailable_answers: ledger.answers.unavailable, reads: answered.total };
    expect(answered.errors, JSON.stringify(answered)).toBe(0);
    expect(ledger.unavailableAnswerMs.every((ms) => ms < 5_000), JSON.stringify(ledger.unavailableAnswerMs)).toBe(true);
    expect(ledger.answers.http5xx).toBe(ledger.statuses5xx['503'] ?? 0);
    await expectNothingLost(ledger, 20);
    // Writes go through again, and reach every process.
    const punchline = `After the restart ${randomBytes(4).toString('hex')}`;
    const after = await callTool(agent!.mcp[1]!, 'update_listing', { slug, punchline });
    expect(after.ok, JSON.stringify(after.body)).toBe(true);
    await untilVisibleEverywhere(cluster, async (origin) => (await (await fetch(`${origin}/api/v1/products/${slug}`, { headers: ip() })).text()).includes(punchline), 30_000);
    await until('one projector says it leads', 30_000, () => (cluster.leaders().length === 1 ? true : undefined));
    expect(locks.max).toBe(1);
  }, 120_000);

  it('refuses writes within 5 s while PostgreSQL is frozen (SIGSTOP), goes on reading, says 503 on /readyz within 3 s, loses nothing, and recovers by itself', async () => {
    const reads = readLoad();
    const ledger = newLedger();
    let writing = true;
    const load = runMakerWorkload({ cluster, agents: agents.slice(0, 4), categories: catalog.categories, until: () => !writing, ledger, run: `${RUN}f`, attempts: 60 });
    await until('writes under way', 30_000, () => (ledger.answers.acknowledged > 10 ? true : undefined));
    const outcome = await databaseFreeze(cluster, 7_000);
    const acknowledgedAtThaw = ledger.answers.acknowledged;
    await until('writes acknowledged again', 30_000, () => (ledger.answers.acknowledged > acknowledgedAtThaw + 10 ? true : undefined));
    writing = false;
    await load;
    const answered = await reads.stop();
    figures.postgres_freeze = {
      recovery_ms: outcome.recoveryMs,
      readyz_503_after_ms: outcome.readyz503Ms,
      readyz_answer_max_ms: outcome.readyzMaxMs,
      refused_unavailable: ledger.answers.unavailable,
      refused_answer_max_ms: Math.max(0, ...ledger.unavailableAnswerMs),
      reads: answered.total,
    };
    expect(answered.errors, JSON.stringify(answered)).toBe(0);
    // Refused, quickly, and never left without an answer.
    expect(ledger.answers.unavailable).toBeGreaterThan(0);
    expect(ledger.unavailableAnswerMs.every((ms) => ms <= 5_000), JSON.stringify(ledger.unavailableAnswerMs)).toBe(true);
    expect(ledger.answers.connectionErrors).toBe(0);
    expect(ledger.answers.http5xx).toBe(ledger.statuses5xx['503'] ?? 0);
    expect(outcome.readyz503Ms, 'every API process answered /readyz 503').toBeDefined();
    expect(outcome.readyz503Ms!).toBeLessThanOrEqual(3_000);
    expect(outcome.readyzMaxMs).toBeLessThanOrEqual(3_000);
    await expectNothingLost(ledger, 20);
    expect(locks.max).toBe(1);
  }, 120_000);

  it('reads and writes on while Redis is frozen (SIGSTOP), each answered within 5 s, and shares budgets again by itself', async () => {
    const reads = readLoad();
    const ledger = newLedger();
    let writing = true;
    const load = runMakerWorkload({ cluster, agents: agents.slice(0, 4), categories: catalog.categories, until: () => !writing, ledger, run: `${RUN}r`, attempts: 60 });
    await until('writes under way', 30_000, () => (ledger.answers.acknowledged > 10 ? true : undefined));
    const [agent] = agents;
    const slug = await anyListingOf(agent!.email);
    const timed: number[] = [];
    let acknowledgedWhileFrozen = 0;
    const outcome = await redisFreeze(cluster, 7_000, async () => {
      const before = ledger.answers.acknowledged;
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        const answer = await callTool(agent!.mcp[i % cluster.apis.length]!, 'update_listing', { slug, punchline: `While Redis is frozen ${i} ${randomBytes(3).toString('hex')}` });
        timed.push(Date.now() - started);
        expect(answer.ok, JSON.stringify(answer.body)).toBe(true);
      }
      await new Promise((r) => setTimeout(r, 3_000));
      acknowledgedWhileFrozen = ledger.answers.acknowledged - before;
    });
    writing = false;
    await load;
    const answered = await reads.stop();
    figures.redis_freeze = { recovery_ms: outcome.recoveryMs, readyz_answer_max_ms: outcome.readyzMaxMs, write_answer_ms: timed, acknowledged_while_frozen: acknowledgedWhileFrozen, reads: answered.total };
    expect(answered.errors, JSON.stringify(answered)).toBe(0);
    expect(timed.every((ms) => ms <= 5_000), JSON.stringify(timed)).toBe(true);
    expect(acknowledgedWhileFrozen).toBeGreaterThan(0);
    expect(ledger.answers.unavailable + ledger.answers.http5xx + ledger.answers.connectionErrors).toBe(0);
    expect(outcome.readyzMaxMs).toBeLessThanOrEqual(3_000);
    expect(await allReady(cluster, 200)).toBe(true);
    expect(await budgetsShared(cluster)).toBe(true);
    await expectNothingLost(ledger, 20);
  }, 90_000);

  it('runs badge re-checks, promo lapse, outbox pruning and account upkeep once per cluster, through every restart', async () => {
    const { jobs } = catalog;
    for (const host of jobs.badgeHosts) expect(cluster.sites.requestsTo(host), host).toBe(1);
    const lines = (msg: string) => cluster.allLogs().filter(({ line }) => line.msg === msg);
    const lapsed = lines('projected again the listings whose promo lapsed');
    expect(lapsed.map(({ line }) => line.listings)).toEqual([jobs.lapsedPromos]);
    const pruned = lines('pruned projected outbox rows');
    expect(pruned.reduce((n, { line }) => n + Number(line.pruned), 0)).toBe(jobs.oldOutboxRows);
    expect(new Set(pruned.map(({ node }) => node)).size).toBe(1);
    const upkeep = lines('account upkeep ran: expired sessions, sign-in links and authorization records removed');
    expect(upkeep).toHaveLength(1);
    const { rows } = await cluster.pool.query<{ runs: number; expired: number }>(
      `SELECT (SELECT runs::int FROM auth.scheduled_runs WHERE job = 'account-upkeep') AS runs,
              (SELECT count(*)::int FROM catalog.sessions WHERE expires_at < now()) AS expired`,
    );
    expect(rows[0]).toEqual({ runs: 1, expired: 0 });
    // Several processes started and restarted meanwhile.
    expect(cluster.projectors.reduce((n, p) => n + p.starts, 0)).toBeGreaterThan(2);
  });
});

async function expectNothingLost(ledger: Ledger, atLeast: number): Promise<void> {
  const check = await checkLedger(cluster.pool, ledger);
  expect(check.problems).toEqual([]);
  expect([check.lost, check.doubled]).toEqual([0, 0]);
  const acknowledged = check.acknowledged.submits + check.acknowledged.updates + check.acknowledged.decisions;
  expect(acknowledged).toBeGreaterThanOrEqual(atLeast);
  const projection = await checkProjection(cluster);
  expect(projection.problems).toEqual([]);
}

async function anyListingOf(email: string): Promise<string> {
  const { rows } = await cluster.pool.query<{ slug: string }>(
    `SELECT l.slug FROM catalog.listings l JOIN catalog.makers m ON m.id = l.maker_id WHERE m.email = $1 AND l.status = 'live' ORDER BY l.created_at LIMIT 1`,
    [email],
  );
  return rows[0]!.slug;
}

/** Readers on every process (REST and MCP read tools) until stopped; counts answers that are not 200 or 429. */
function readLoad(): { stop(): Promise<{ total: number; errors: number; statuses: Record<string, number> }> } {
  let reading = true;
  let total = 0;
  let errors = 0;
  const statuses: Record<string, number> = {};
  const readers = cluster.apis.map(async (api) => {
    for (let i = 0; reading; i++) {
      const status =
        i % 3 === 2
          ? (await rawToolCall(api, 'search_products', { q: 'tool' })).status
          : await fetch(`${api.url}${i % 3 ? '/api/v1/categories' : '/api/v1/search?q=app'}`, { headers: ip() }).then(async (r) => (await r.arrayBuffer(), r.status));
      total++;
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status !== 200 && status !== 429) errors++;
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  return {
    async stop() {
      reading = false;
      await Promise.all(readers);
      return { total, errors, statuses };
    },
  };
}

const catalogCommand = (args: string[]) => runCatalogCommand(args, { ...cluster.env, LOG_LEVEL: 'warn' });
