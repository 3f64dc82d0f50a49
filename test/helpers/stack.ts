import net, { type AddressInfo } from 'node:net';
import pino from 'pino';
import type { MailMessage } from '../../src/auth/mailer.ts';
import { loadConfig, type Env } from '../../src/config/config.ts';
import { startService, type RunningService, type StartOptions } from '../../src/service.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { seedFixtureCatalog } from './fixtures.ts';

export interface TestStack {
  service: RunningService;
  db: TestDatabase;
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  /** Waits until every committed write-model change is visible to reads. */
  settle(): Promise<void>;
  /** Every e-mail the service sent (or logged), oldest first. */
  mails: MailMessage[];
  stop(): Promise<void>;
}

/** A port free right now on 127.0.0.1, for a service whose PUBLIC_URL must name its real port. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The whole service in this process on a database of its own: projector, mirror, embedded
 * search, REST and MCP on a real listening port. Seeds the fixture catalog unless told not to.
 */
export async function startTestStack(
  opts: {
    env?: Partial<Record<keyof Env, string>>;
    seed?: boolean;
    listen?: boolean;
    /** Listen on a port chosen beforehand and make PUBLIC_URL name it (OAuth needs the real address). */
    realPublicUrl?: boolean;
    fetchOptions?: StartOptions['fetchOptions'];
    /** The service's logger; silent unless given. */
    logger?: StartOptions['logger'];
    /** The badge re-checks' clock, interval and poll. */
    badgeRechecks?: StartOptions['badgeRechecks'];
    /** Deprecations and routes of the test's own (StartOptions.api). */
    api?: StartOptions['api'];
  } = {},
): Promise<TestStack> {
  const db = await createTestDatabase();
  if (opts.seed !== false) await seedFixtureCatalog(db.pool);
  const mails: MailMessage[] = [];
  const start = (port: number) =>
    startService(
      loadConfig(
        {},
        {
          DATABASE_URL: db.url,
          HOST: '127.0.0.1',
          PORT: String(port),
          PUBLIC_URL: opts.realPublicUrl ? `http://127.0.0.1:${port}` : 'http://catalog.test',
          SITE_URL: 'https://directory.test',
          LOG_LEVEL: 'silent',
          PROJECTOR_POLL_MS: '100',
          ...opts.env,
        },
      ),
      {
        projector: true,
        demo: false,
        listen: opts.listen !== false,
        logger: opts.logger ?? pino({ level: 'silent' }),
        onMail: (message) => mails.push(message),
        ...(opts.fetchOptions && { fetchOptions: opts.fetchOptions }),
        ...(opts.badgeRechecks && { badgeRechecks: opts.badgeRechecks }),
        ...(opts.api && { api: opts.api }),
      },
    );
  // A port chosen beforehand may be taken by another test's process before the service listens
  // on it (the service starts for seconds after the choice): then it starts again on another.
  let service: RunningService;
  for (let attempt = 1; ; attempt++) {
    try {
      service = await start(opts.realPublicUrl ? await freePort() : 0);
      break;
    } catch (err) {
      if (!opts.realPublicUrl || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 5) throw err;
    }
  }
  const settle = async () => {
    // Every outbox row committed so far must be behind the projection checkpoint. catchUp()
    // alone may return while an unrelated open transaction holds the projector's horizon back.
    const { rows } = await db.pool.query<{ max: number | null }>('SELECT max(seq) AS max FROM catalog.outbox');
    const upTo = rows[0]?.max ?? 0;
    const deadline = Date.now() + 20_000;
    for (;;) {
      await service.projector?.catchUp();
      const pending = await db.pool.query<{ waiting: boolean }>(
        `SELECT EXISTS (
           SELECT 1 FROM catalog.outbox o, projection.checkpoints c
           WHERE c.name = 'projection' AND o.seq <= $1 AND (o.txid, o.seq) > (c.txid, c.seq)) AS waiting`,
        [upTo],
      );
      if (!pending.rows[0]?.waiting) break;
      if (Date.now() > deadline) throw new Error('the projection did not catch up within 20 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    await service.mirror.refresh();
  };
  await settle();
  return {
    service,
    db,
    baseUrl: service.url,
    settle,
    mails,
    async stop() {
      await service.close();
      await db.drop();
    },
  };
}
