import net from 'node:net';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { checkPortFree, describeFailure } from '../../../src/cli/start-failure.ts';
import { ConfigError, loadConfig } from '../../../src/config/config.ts';
import { StartupError } from '../../../src/util/startup-error.ts';

/**
 * What `catalog` prints for an error that ended it (the whole commands: test/e2e/startup-errors.test.ts).
 */
const held: net.Server[] = [];
afterAll(async () => {
  for (const server of held) await new Promise((resolve) => server.close(resolve));
});

async function holdPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  held.push(server);
  return (server.address() as net.AddressInfo).port;
}

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('the configuration was accepted');
}

describe('a port in use', () => {
  it('is found before the start, as a line naming it', async () => {
    const port = await holdPort();
    const err = await checkPortFree('127.0.0.1', port).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(StartupError);
    expect(describeFailure(err, { longRunning: true })).toEqual({
      lines: [`catalog: port ${port} on 127.0.0.1 is in use by another process: stop it, or set PORT to a free port`],
      exitCode: 1,
    });
  });

  it('taken after that look, is the same line when the server fails to listen', async () => {
    const port = await holdPort();
    const app = Fastify();
    const err = await app.listen({ host: '127.0.0.1', port }).then(() => undefined, (e: unknown) => e);
    await app.close();
    expect((err as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
    expect(describeFailure(err, { longRunning: true }).lines).toEqual([`catalog: port ${port} on 127.0.0.1 is in use by another process: stop it, or set PORT to a free port`]);
  });

  it('is not looked for with PORT=0, and a free port passes', async () => {
    await expect(checkPortFree('127.0.0.1', 0)).resolves.toBeUndefined();
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    await expect(checkPortFree('127.0.0.1', port)).resolves.toBeUndefined();
  });

  it('names an address that is not this machine\'s', async () => {
    // 192.0.2.0/24 is reserved for documentation: never an address of this machine (nothing is sent).
    const err = await checkPortFree('192.0.2.1', 3000).then(() => undefined, (e: unknown) => e);
    expect(describeFailure(err, { longRunning: true }).lines).toEqual([
      'catalog: 192.0.2.1 is not an address of this machine: set HOST to one of its addresses, e.g. 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)',
    ]);
  });
});

describe('settings', () => {
  it('one line per bad setting: the variable, the value given (quoted), what is accepted', () => {
    expect(describeFailure(configError({ PORT: '3000 ', CACHE_MAX_AGE_SECONDS: '301' }), { longRunning: true })).toEqual({
      lines: [
        'catalog: configuration error: PORT="3000 ": must be a whole number from 0 to 65535',
        'catalog: configuration error: CACHE_MAX_AGE_SECONDS="301": must be at most 300',
      ],
      exitCode: 1,
    });
  });

  it('never repeats a secret or a password, and keeps a long or odd value on its line', () => {
    const lines = describeFailure(
      configError({
        STRIPE_SECRET_KEY: 'pk_live_abcdef',
        REDIS_URL: 'http://:hunter2@127.0.0.1:6379',
        SMTP_URL: 'user:pa55@mail',
        MEILI_INDEX: `bad\nname${'x'.repeat(200)}`,
      }),
      { longRunning: true },
    ).lines;
    expect(lines).toEqual([
      'catalog: configuration error: MEILI_INDEX="bad\\nname' + 'x'.repeat(71) + '…": must be letters, digits, - or _',
      'catalog: configuration error: REDIS_URL="http://***@127.0.0.1:6379": must be a redis:// or rediss:// URL',
      'catalog: configuration error: SMTP_URL="***@mail": must be an smtp:// or smtps:// URL, e.g. smtp://user:password@mail.example.com:587',
      'catalog: configuration error: STRIPE_SECRET_KEY=(hidden): must be a Stripe secret key (sk_test_… or sk_live_…)',
    ]);
    for (const secret of ['abcdef', 'hunter2', 'pa55']) expect(lines.join('\n')).not.toContain(secret);
  });
});

describe('other errors', () => {
  it('an unforeseen error of a long-running command is one line, pointing at the log', () => {
    const err = new Error('embedded PostgreSQL failed to start: the server exited\nLOG: something\nLOG: more');
    expect(describeFailure(err, { longRunning: true })).toEqual({
      lines: ['catalog: could not start: embedded PostgreSQL failed to start: the server exited (LOG_LEVEL=debug writes the details to the log)'],
      exitCode: 1,
    });
  });

  it("a one-off command's keeps its stack, as a bug to report", () => {
    const err = new Error('boom');
    const { lines } = describeFailure(err, { longRunning: false });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^catalog: Error: boom\n\s+at /);
  });
});
