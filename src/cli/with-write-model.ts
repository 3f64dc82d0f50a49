import type { Config } from '../config/config.ts';
import { migrate } from '../db/migrate.ts';
import { openDatabase } from '../db/open.ts';
import { createPool, type Pool } from '../db/pool.ts';
import { createLogger } from '../util/logger.ts';

/**
 * For one-off operator commands (maker, admin, review): the database (DATABASE_URL or the
 * embedded one, migrated), a small pool for the command, and everything closed afterwards.
 * Logs go to stderr so stdout carries only the command's answer, for scripts.
 */
export async function withWriteModel<T>(config: Config, name: string, fn: (pool: Pool) => Promise<T>): Promise<T> {
  const logger = createLogger(config, { stderr: true });
  const database = await openDatabase(config, (line) => logger.info(line));
  const pool = createPool(database.connectionString, { max: 2, applicationName: `catalog ${name}` });
  try {
    await migrate(database.connectionString, { log: (line) => logger.info(line) });
    return await fn(pool);
  } finally {
    await pool.end();
    await database.close();
  }
}
