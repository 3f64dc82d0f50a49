import http from 'node:http';
import pino from 'pino';
import { createKey } from '../../src/auth/consumer-keys/consumer-keys.ts';
import { loadConfig } from '../../src/config/config.ts';
import { startService, type RunningService } from '../../src/service.ts';
import type { TestStack } from './stack.ts';

/**
 * For the tests that hold the direct read paths (REST and MCP beneath Fastify) to Fastify's own
 * answers: a request sent raw (headers in their order), a twin of a stack's service without the
 * direct paths (DIRECT_READS=false) on the same database, and a consumer key for each.
 */
export interface RawAnswer {
  status: number;
  /** Header names (lower case) and values in the order they were sent. */
  headers: [string, string][];
  body: Buffer;
}

export function rawRequest(agent: http.Agent, base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
        resolve({ status: res.statusCode!, headers: pairs, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The stack's service again, on its database, without the direct paths (it runs no projector). */
export function startTwinWithoutDirectPaths(stack: TestStack, env: Record<string, string>): Promise<RunningService> {
  const c = stack.service.config;
  return startService(
    loadConfig(
      {},
      {
        DATABASE_URL: stack.service.connectionString,
        HOST: '127.0.0.1',
        PORT: '0',
        PUBLIC_URL: c.publicUrl,
        SITE_URL: c.siteUrl,
        LOG_LEVEL: 'silent',
        PROJECTOR_POLL_MS: '100',
        ...env,
        DIRECT_READS: 'false',
      },
    ),
    { projector: false, demo: false, listen: true, logger: pino({ level: 'silent' }) },
  );
}

/**
 * A consumer key for each of the two services (so that their budgets never meet, in Redis
 * either), with the same budgets, once both services hold both (loaded again on NOTIFY).
 */
export async function keysForTwins(stack: TestStack, twin: RunningService, name: string, limits: { search: number; other: number }): Promise<{ directKey: string; plainKey: string }> {
  const directKey = (await createKey(stack.db.pool, { name: `${name}-direct`, limits })).key;
  const plainKey = (await createKey(stack.db.pool, { name: `${name}-plain`, limits })).key;
  for (const service of [stack.service, twin]) {
    for (const key of [directKey, plainKey]) {
      while (!service.budgets.keys.check(`Bearer ${key}`).ok) await new Promise((r) => setTimeout(r, 20));
    }
  }
  return { directKey, plainKey };
}
