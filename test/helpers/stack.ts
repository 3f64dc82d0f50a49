import pino from 'pino';
import { loadConfig, type Env } from '../../src/config/config.ts';
import { startService, type RunningService } from '../../src/service.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { seedFixtureCatalog } from './fixtures.ts';

export interface TestStack {
  service: RunningService;
  db: TestDatabase;
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  /** Waits until every committed write-model change is visible to reads. */
  settle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The whole service in this process on a database of its own: projector, mirror, embedded
 * search, REST and MCP on a real listening port. Seeds the fixture catalog unless told not to.
 */
export async function startTestStack(
  opts: { env?: Partial<Record<keyof Env, string>>; seed?: boolean; listen?: boolean } = {},
): Promise<TestStack> {
  const db = await createTestDatabase();
  if (opts.seed !== false) await seedFixtureCatalog(db.pool);
  const config = loadConfig(
    {},
    {
      DATABASE_URL: db.url,
      HOST: '127.0.0.1',
      PORT: '0',
      PUBLIC_URL: 'http://catalog.test',
      SITE_URL: 'https://directory.test',
      LOG_LEVEL: 'silent',
      PROJECTOR_POLL_MS: '100',
      ...opts.env,
    },
  );
  const service = await startService(config, {
    projector: true,
    demo: false,
    listen: opts.listen !== false,
    logger: pino({ level: 'silent' }),
  });
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
    async stop() {
      await service.close();
      await db.drop();
    },
  };
}
