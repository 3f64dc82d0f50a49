import type { Config } from '../config/config.ts';
import { migrate } from '../db/migrate.ts';
import { openDatabase } from '../db/open.ts';
import { createPool, type Pool } from '../db/pool.ts';
import { createLogger } from '../util/logger.ts';

/** Where the pages a command links (sign-in links, e-mails) are served. */
export interface ServiceUrls {
  readonly publicUrl: string;
  readonly siteUrl: string;
}

/**
 * PUBLIC_URL and SITE_URL as configured; without either, the address the service last ran
 * under, as its projector recorded it: the default derived from HOST and PORT names this
 * command's own, unused address. Says so on stderr when it falls back.
 */
async function serviceUrls(pool: Pool, config: Config, name: string): Promise<ServiceUrls> {
  if (config.siteUrlConfigured) return { publicUrl: config.publicUrl, siteUrl: config.siteUrl };
  const { rows } = await pool.query<{ site_url: string | null }>('SELECT site_url FROM projection.state');
  const recorded = rows[0]?.site_url;
  if (!recorded) return { publicUrl: config.publicUrl, siteUrl: config.siteUrl };
  console.error(`catalog ${name}: PUBLIC_URL is not set; links use ${recorded}, where the service last ran`);
  return { publicUrl: recorded, siteUrl: recorded };
}

/**
 * For one-off operator commands (maker, admin, review): the database (DATABASE_URL or the
 * embedded one, migrated), a small pool for the command, and everything closed afterwards.
 * Logs go to stderr so stdout carries only the command's answer, for scripts.
 */
export async function withWriteModel<T>(config: Config, name: string, fn: (pool: Pool, urls: ServiceUrls) => Promise<T>): Promise<T> {
  const logger = createLogger(config, { stderr: true });
  const database = await openDatabase(config, (line) => logger.info(line));
  const pool = createPool(database.connectionString, { max: 2, applicationName: `catalog ${name}` });
  try {
    await migrate(database.connectionString, { log: (line) => logger.info(line) });
    return await fn(pool, await serviceUrls(pool, config, name));
  } finally {
    await pool.end();
    await database.close();
  }
}
