import { hasRedisServer, startRedisServer, type RedisServer } from '../../bench/cluster/redis-server.ts';

export type { RedisServer };

/**
 * Redis for the tests. A test that needs Redis starts a redis-server of its own on a spare
 * loopback port, without persistence (bench/cluster/redis-server.ts): `npm test` needs no
 * REDIS_URL (the tests read none), runs on one machine never share a budget, and a test may stop
 * or freeze its Redis as a fault without disturbing anyone.
 *
 * Without the redis-server binary on the PATH (`apt-get install redis-server`), a file's Redis
 * tests are skipped, with one line saying so; under CI (CI set, and not to '', 0 or false) they
 * fail instead, as the browser tests do: `.ci/run` installs the binary.
 */
export function skipWithoutRedisServer(what: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== '0' && env.CI !== 'false';
  if (ci || hasRedisServer(env)) return false;
  console.log(`redis-server not found (apt-get install redis-server): skipping ${what}`);
  return true;
}

/** A redis-server of the caller's own; without the binary, an error that says what to install. */
export async function startTestRedis(env: NodeJS.ProcessEnv = process.env): Promise<RedisServer> {
  if (!hasRedisServer(env)) throw new Error('redis-server not found on the PATH: the Redis tests need it (apt-get install redis-server)');
  return startRedisServer();
}
