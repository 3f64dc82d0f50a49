import type { AppDeps } from './app.ts';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Accounts } from './auth/accounts.ts';
import type { MailMessage } from './auth/mailer.ts';
import type { SiteFetcherOptions } from './sites/safe-fetch.ts';
import type { MakerCatalog } from './catalog/maker-catalog.ts';
import type { BadgeRecheckJob, BadgeRecheckSettings } from './catalog/badges/badge-recheck-job.ts';
import type { Payments } from './payments/payments.ts';
import type { Projector } from '../projector/projector.ts';
import { projectionLag } from '../projector/lag.ts';
import { projectionFacts } from './read/projection-facts.ts';
import type { Config } from './config/config.ts';
import { migrate } from './db/migrate.ts';
import { openDatabase, superviseEmbedded, type OpenedDatabase } from './db/open.ts';
import { createPool, REQUEST_DEADLINES, type Pool } from './db/pool.ts';
import { withDeadline } from './util/deadline.ts';
import type { Readiness } from './http/operations.ts';
import { clientAddresses, TRUST_ALL_WARNING } from './http/client/client-address.ts';
import { startHeartbeat } from './ops/heartbeat.ts';
import { createKeyTable } from './auth/consumer-keys/consumer-key-table.ts';
import { usageSpace } from './auth/consumer-keys/consumer-keys.ts';
import { createBudgets, type Budgets } from './budgets/budgets.ts';
import { startUsageRecorder, type UsageRecorder } from './budgets/key-usage.ts';
import { connectRedis, createLeaseStore } from './budgets/lease-store.ts';
import { createChangeFeed, type ChangeFeed } from './read/change-feed.ts';
import { createProjectionMirror, type ProjectionMirror } from './read/projection-mirror.ts';
import type { SnapshotPrefetch } from './read/snapshot-file.ts';
import { createReadService, type ReadService } from './read/read-service.ts';
import { createSearchIndex } from './search/index.ts';
import { EmbeddedSearchIndex } from './search/embedded/embedded-search-index.ts';
import type { SearchIndex } from './search/port.ts';

/**
 * The modules of everything that comes after the catalog (HTTP, MCP, pages, accounts, the write
 * side): loaded while the database starts and the catalog loads, rather than before.
 */
async function laterModules() {
  const [app, metrics, accounts, upkeep, route, safeFetch, addressPolicy, guardedAgent, badgeJob, websiteKeys, paymentLinks, payments, oauthErrorPage] =
    await Promise.all([
      import('./app.ts'),
      import('./http/metrics.ts'),
      import('./auth/accounts.ts'),
      import('./auth/upkeep.ts'),
      import('./mcp/route.ts'),
      import('./sites/safe-fetch.ts'),
      import('./sites/address-policy.ts'),
      import('./sites/guarded-agent.ts'),
      import('./catalog/badges/badge-recheck-job.ts'),
      import('./catalog/listings/website-keys.ts'),
      import('./payments/payment-links.ts'),
      import('./payments/payments.ts'),
      import('./web/makers/oauth-error-page.tsx'),
    ]);
  return {
    buildApp: app.buildApp,
    createMetrics: metrics.createMetrics,
    createAccounts: accounts.createAccounts,
    startAccountUpkeep: upkeep.startAccountUpkeep,
    MCP_PATH: route.MCP_PATH,
    createSiteFetcher: safeFetch.createSiteFetcher,
    hostRefusal: addressPolicy.hostRefusal,
    systemResolver: guardedAgent.systemResolver,
    createBadgeRecheckJob: badgeJob.createBadgeRecheckJob,
    fillWebsiteKeys: websiteKeys.fillWebsiteKeys,
    createPaymentLinks: paymentLinks.createPaymentLinks,
    createPayments: payments.createPayments,
    oauthErrorPageFor: oauthErrorPage.oauthErrorPageFor,
  };
}

/** Imports the demo catalog when the database holds no catalog yet (modules loaded only then). */
async function importDemoIfEmpty(pool: Pool, config: Config, logger: Logger): Promise<void> {
  const { isCatalogEmpty, importCatalog } = await import('./catalog/import/import-catalog.ts');
  if (!(await isCatalogEmpty(pool))) return;
  const { demoCatalogLines } = await import('./demo/demo-data.ts');
  const { formatLineError } = await import('./catalog/listings/listing-input.ts');
  const started = Date.now();
  const result = await importCatalog(pool, demoCatalogLines({ count: config.demoCount, seed: 1 }));
  if (result.errors.length > 0) throw new Error(`demo catalog failed to import: ${formatLineError(result.errors[0]!)}`);
  logger.info({ listings: result.listings, categories: result.categories, ms: Date.now() - started }, 'imported the demo catalog into the empty database');
}

/**
 * One running service: the composition root used by `catalog serve` (projector included) and
 * `catalog api` (reads only), and by whole-stack tests.
 */
export interface RunningService {
  readonly app: FastifyInstance;
  /** The address it listens on, e.g. http://127.0.0.1:3000 */
  readonly url: string;
  readonly config: Config;
  readonly pool: Pool;
  readonly connectionString: string;
  readonly read: ReadService;
  readonly mirror: ProjectionMirror;
  /** The bulk export and the change feed. */
  readonly feed: ChangeFeed;
  readonly projector: Projector | undefined;
  readonly accounts: Accounts;
  readonly maker: MakerCatalog;
  readonly payments: Payments;
  /** The scheduled badge re-checks (with the projector: `catalog serve`). */
  readonly badgeRechecks: BadgeRecheckJob | undefined;
  /** Request budgets, with the consumer keys as this process holds them, and the recorder of the keys' usage. */
  readonly budgets: Budgets;
  readonly usageRecorder: UsageRecorder;
  readonly logger: Logger;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Run the projector in this process (serve) or not (api). */
  projector: boolean;
  /** Import the demo catalog when the database holds no catalog yet. */
  demo: boolean;
  /** Listen; false for tests that only use app.inject. */
  listen?: boolean;
  /** Use this logger instead of one built from the configuration. */
  logger?: Logger;
  /** A database opened by the caller; closed by close() only when opened here. */
  database?: OpenedDatabase;
  /** For tests: trusted certificates and a DNS resolver for outgoing fetches. */
  fetchOptions?: Pick<SiteFetcherOptions, 'ca' | 'resolver'>;
  /** For tests: told of every e-mail the service sends (or logs). */
  onMail?: (message: MailMessage) => void;
  /** For tests: the badge re-checks' clock, interval and poll. */
  badgeRechecks?: BadgeRecheckSettings;
  /** For tests: deprecations other than the service's own, and further routes (AppDeps). */
  api?: Pick<AppDeps, 'deprecations' | 'routes'>;
  /**
   * Told when the embedded PostgreSQL this process started died and could not be started again
   * (it is started again in place first); the process should then stop with a failure status.
   */
  onDatabaseLost?: (err: Error) => void;
  /** A read of the local snapshot copy begun when the process started (src/read/snapshot-file.ts). */
  snapshotPrefetch?: Promise<SnapshotPrefetch | undefined>;
}

/** /readyz answers within this (plus a little) even when the database hangs. */
const READY_CHECK_MS = 2_000;

export async function startService(config: Config, opts: StartOptions): Promise<RunningService> {
  const logger = opts.logger ?? pino({ level: config.logLevel });
  // Where start-up time goes, logged once listening: modules (process start to here), then each step.
  const phases: Record<string, number> = { modules: Math.round(process.uptime() * 1000) };
  let phaseStart = performance.now();
  const phase = (name: string) => {
    const t = performance.now();
    phases[name] = Math.round(t - phaseStart);
    phaseStart = t;
  };
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const fn of cleanups.reverse()) {
      await fn().catch((err: unknown) => logger.error({ err }, 'shutdown step failed'));
    }
    cleanups.length = 0;
  };
  const later = laterModules();
  // Awaited below; a failure to load is reported there, not as an unhandled rejection.
  later.catch(() => undefined);
  try {
    const database =
      opts.database ??
      (await openDatabase(config, (line) => logger.info(line), {
        ...(opts.onDatabaseLost && { supervise: superviseEmbedded(logger, opts.onDatabaseLost) }),
      }));
    if (!opts.database) cleanups.push(() => database.close());
    phase('database');
    await migrate(database.connectionString, { log: (line) => logger.info(line) });
    phase('migrations');

    const name = opts.projector ? 'catalog serve' : 'catalog api';
    // Requests' queries and writes have deadlines, so that a frozen database refuses a write
    // within seconds (docs/partitions.md); work that may rightly take longer (loading and
    // building the catalog's snapshots, the demo import, upkeep, badge re-checks) has a small
    // pool of its own without them.
    const pool = createPool(database.connectionString, { max: 10, applicationName: name, deadlines: REQUEST_DEADLINES });
    cleanups.push(() => pool.end());
    const jobPool = createPool(database.connectionString, { max: 4, applicationName: `${name} jobs` });
    cleanups.push(() => jobPool.end());

    if (opts.demo) await importDemoIfEmpty(jobPool, config, logger);

    const searchIndex: SearchIndex = await createSearchIndex(config);
    cleanups.push(() => searchIndex.close());
    const external = searchIndex.kind !== 'embedded';

    const embeddedIndex = searchIndex instanceof EmbeddedSearchIndex ? searchIndex : undefined;
    const mirror = createProjectionMirror({
      pool: jobPool,
      connectionString: database.connectionString,
      ...(embeddedIndex && { embeddedIndex, searchFields: embeddedIndex.searchableFields }),
      snapshotCacheDir: config.snapshotCacheDir,
      ...(opts.snapshotPrefetch && { snapshotPrefetch: opts.snapshotPrefetch }),
      log: logger.child({ component: 'mirror' }),
    });
    cleanups.push(() => mirror.stop());

    let projector: Projector | undefined;
    if (opts.projector) {
      const { createProjector } = await import('../projector/projector.ts');
      projector = createProjector({
        connectionString: database.connectionString,
        siteUrl: config.siteUrl,
        ...(external && { searchIndex }),
        batchSize: config.projector.batchSize,
        pollMs: config.projector.pollMs,
        changesRetentionHours: config.changesRetentionHours,
        log: logger.child({ component: 'projector' }),
        snapshotCacheDir: config.snapshotCacheDir,
      });
      // Serve a caught-up catalog from the first request on (a fresh demo import included),
      // loaded from a snapshot. When there is one, the mirror loads it while the projector
      // starts and catches up, then takes what catching up changed; when there is none yet, the
      // projector writes it first (the mirror would otherwise build one of its own meanwhile).
      const early = (await mirror.hasSnapshot()) ? mirror.start() : undefined;
      early?.catch(() => undefined);
      try {
        await projector.start();
        cleanups.push(() => projector!.stop());
        if (projector.isLeader) {
          await projector.catchUp();
          await projector.ensureSnapshot();
        }
      } catch (err) {
        await early?.catch(() => undefined);
        throw err;
      }
      phase('projector');
      if (early) {
        await early;
        await mirror.refresh();
      } else await mirror.start();
    } else await mirror.start();
    phase('mirror');

    // Who each request comes from, read one way for every path (src/http/client/client-address.ts).
    const clients = clientAddresses({ trustProxy: config.trustProxy, ipv6Prefix: config.ipv6ClientPrefix });
    if (config.trustProxy === true) logger.warn(TRUST_ALL_WARNING);
    const read = createReadService({ mirror, index: searchIndex, cacheMaxEntries: config.cache.maxEntries });
    const feed = createChangeFeed({ pool, mirror, retentionHours: config.changesRetentionHours, log: logger.child({ component: 'change-feed' }) });
    const store = createLeaseStore({
      searchPerMinute: config.rateLimits.searchPerMinute,
      otherPerMinute: config.rateLimits.otherPerMinute,
      pagesPerMinute: config.rateLimits.pagesPerMinute,
      exportPerMinute: config.rateLimits.exportPerMinute,
      changesPerMinute: config.rateLimits.changesPerMinute,
      usageSpace: await usageSpace(pool),
      redis: config.redisUrl
        ? await connectRedis(config.redisUrl, (err) => logger.warn({ err }, 'Redis unreachable; request budgets and sign-in limits count in memory'))
        : undefined,
    });
    cleanups.push(() => store.close());
    // Consumer keys: every key in memory, kept current (auth/consumer-keys/consumer-key-table.ts);
    // the budgets decide every request with them (budgets/budgets.ts), and the keys' usage is
    // moved to PostgreSQL every second (budgets/key-usage.ts).
    const keyTable = createKeyTable({ pool, connectionString: database.connectionString, log: logger.child({ component: 'consumer-keys' }) });
    await keyTable.start();
    cleanups.push(() => keyTable.stop());
    const budgets = createBudgets({ store, keys: keyTable, signedIn: config.rateLimits.signedIn });
    const usageRecorder = startUsageRecorder({ usage: store.usage, pool, log: logger.child({ component: 'consumer-keys' }) });
    cleanups.push(() => usageRecorder.stop());

    const {
      buildApp,
      createMetrics,
      createAccounts,
      startAccountUpkeep,
      MCP_PATH,
      createSiteFetcher,
      hostRefusal,
      systemResolver,
      createBadgeRecheckJob,
      fillWebsiteKeys,
      createPaymentLinks,
      createPayments,
      oauthErrorPageFor,
    } = await later;
    phase('modules after the catalog');
    const accounts = await createAccounts({
      config,
      pool,
      clients,
      connectionString: database.connectionString,
      // The write side's counters (sign-in, registration) share the budgets' Redis connection.
      redis: store.redis,
      log: logger,
      mcpPath: MCP_PATH,
      renderErrorPage: oauthErrorPageFor(config.publicUrl),
      ...(opts.fetchOptions && { fetchOptions: opts.fetchOptions }),
      ...(opts.onMail && { onMail: opts.onMail }),
    });
    cleanups.push(() => accounts.close());
    const upkeep = startAccountUpkeep({ pool: jobPool, clientIdleSeconds: config.oauth.clientIdleSeconds, log: logger, applicationName: opts.projector ? 'catalog serve' : 'catalog api' });
    cleanups.push(async () => upkeep.stop());

    const readiness: Readiness = {
      async check() {
        const checks: Record<string, { ok: boolean; detail?: string }> = {};
        // Asked at once, each with the same deadline: a database that froze makes /readyz 503
        // within READY_CHECK_MS, whatever step it froze at.
        const redis = store.redis;
        const [database, lag, redisAnswer] = await Promise.allSettled([
          withDeadline(pool.query('SELECT 1'), READY_CHECK_MS),
          withDeadline(projectionLag(pool), READY_CHECK_MS),
          redis ? withDeadline(redis.ping(), READY_CHECK_MS) : Promise.resolve(undefined),
        ]);
        checks.database = database.status === 'fulfilled' ? { ok: true } : { ok: false, detail: (database.reason as Error).message };
        const mirrorAge = (Date.now() - mirror.checkedAt) / 1000;
        checks.projection_mirror = {
          ok: mirrorAge <= config.readyMaxLagSeconds,
          detail: `version ${mirror.version}, ${mirror.size} live listings, checked ${mirrorAge.toFixed(1)} s ago`,
        };
        if (checks.database.ok) {
          checks.projector =
            lag.status === 'fulfilled'
              ? {
                  ok: lag.value.oldestUnprojectedAgeSeconds <= config.readyMaxLagSeconds,
                  detail: `${lag.value.unprojectedRows} changes waiting, oldest ${lag.value.oldestUnprojectedAgeSeconds.toFixed(1)} s`,
                }
              : { ok: false, detail: (lag.reason as Error).message };
        }
        // Redis holds nothing the service cannot do without (budgets and sign-in limits are
        // counted in this process meanwhile): said, never a reason to be taken out of rotation.
        if (redis) {
          checks.redis =
            redisAnswer.status === 'fulfilled'
              ? { ok: true }
              : { ok: true, detail: `not answering (${(redisAnswer.reason as Error).message}): budgets and sign-in limits are counted in this process until it does` };
        }
        return { ready: Object.values(checks).every((c) => c.ok), checks };
      },
    };

    const metrics = createMetrics({ read, budgets: store, mirror, lag: () => projectionLag(pool), facts: () => projectionFacts(pool) });
    const fetcher = createSiteFetcher({ allowLoopback: config.fetchAllowLoopback, ...opts.fetchOptions });
    cleanups.push(() => fetcher.close());
    const maker: MakerCatalog = {
      pool,
      fetcher,
      hostRefusal: (hostname) => hostRefusal(hostname, opts.fetchOptions?.resolver ?? systemResolver, { allowLoopback: config.fetchAllowLoopback }),
      urls: { siteUrl: config.siteUrl, publicUrl: config.publicUrl },
      payments: createPaymentLinks({ pool, publicUrl: config.publicUrl, price: config.payments.premiumPrice, provider: config.payments.stripe ? 'stripe' : 'builtin' }),
      draftCapPerDay: config.makers.draftCapPerDay,
      blocklist: config.makers.blocklist,
    };
    const payments = await createPayments({
      config: config.payments,
      pool,
      mailer: accounts.mailer,
      publicUrl: config.publicUrl,
      onMailError: (err) => logger.error({ err }, 'the "payment confirmed" e-mail could not be sent'),
    });
    let badgeRechecks: BadgeRecheckJob | undefined;
    if (opts.projector) {
      badgeRechecks = createBadgeRecheckJob({
        connectionString: database.connectionString,
        pool: jobPool,
        fetcher,
        urls: maker.urls,
        mailer: accounts.mailer,
        log: logger.child({ component: 'badge-rechecks' }),
        ...opts.badgeRechecks,
      });
      await badgeRechecks.start();
      cleanups.push(() => badgeRechecks!.stop());
    }
    const filled = await fillWebsiteKeys(jobPool);
    if (filled > 0) logger.info({ listings: filled }, 'recorded the website identity of existing listings');

    phase('services');
    const app = await buildApp({ config, clients, read, feed, budgets, metrics, readiness, pool, accounts, maker, payments, logger: logger.child({ component: 'http' }), ...opts.api });
    cleanups.push(() => app.close());

    let url = config.publicUrl;
    if (opts.listen !== false) {
      url = await app.listen({ host: config.host, port: config.port });
    }
    phase('app');
    // Who this process is and the version it serves, for `catalog status` (src/ops/heartbeat.ts).
    // On the requests' pool for its deadlines: a beat on a frozen database fails within
    // seconds rather than holding a connection.
    const heartbeat = startHeartbeat({
      db: pool,
      command: opts.projector ? 'serve' : 'api',
      url,
      state: () => ({ leads: projector?.isLeader, leaderSessionPid: projector?.leaderSessionPid, projectionVersion: mirror.version, mirrorCheckedAt: mirror.checkedAt }),
      log: logger.child({ component: 'heartbeat' }),
    });
    cleanups.push(() => heartbeat.stop());
    logger.info({ ms: phases, listings: mirror.size, mirror: mirror.loadedFrom }, 'started');
    // The OAuth server is built on first use; build it now that reads are answered, so the
    // first authorization does not wait for it either.
    const warm = setTimeout(() => void accounts.oauth.warm().catch((err: unknown) => logger.error({ err }, 'the authorization server could not be built')), 1000);
    warm.unref();
    cleanups.push(async () => clearTimeout(warm));
    return { app, url, config, pool, connectionString: database.connectionString, read, mirror, feed, projector, accounts, maker, payments, badgeRechecks, budgets, usageRecorder, logger, close };
  } catch (err) {
    await close();
    throw err;
  }
}
