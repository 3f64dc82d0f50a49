import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSignInLink } from '../../../src/auth/sign-in-links.ts';
import { runCatalog } from '../../helpers/review.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/** `catalog maker link` and `catalog admin`, run as an operator runs them. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ seed: false, listen: false });
});
afterAll(async () => {
  await stack?.stop();
});

describe('catalog maker link', () => {
  it('prints a working sign-in link on PUBLIC_URL, and only the link on stdout', async () => {
    const run = await runCatalog(stack, ['maker', 'link', 'Cli@Example.COM', '--return-to', '/settings/apps'], { PUBLIC_URL: 'https://makers.example' });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^https:\/\/makers\.example\/signin\/link\/[A-Za-z0-9_-]{43}\n$/);
    const token = run.stdout.trim().split('/').pop()!;
    expect(await checkSignInLink(stack.db.pool, token)).toEqual({ status: 'valid', email: 'Cli@example.com' });
    const { rows } = await stack.db.pool.query('SELECT return_to FROM catalog.sign_in_links');
    expect(rows.map((r) => r.return_to)).toContain('/settings/apps');
  });

  it('without PUBLIC_URL, names the address the service last ran under, and says so', async () => {
    const run = await runCatalog(stack, ['maker', 'link', 'cli2@example.com'], { PUBLIC_URL: '', SITE_URL: '' });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^https:\/\/directory\.test\/signin\/link\//);
    expect(run.stderr).toContain('PUBLIC_URL is not set; links use https://directory.test');
  });

  it('refuses a bad address, a foreign return path and a wrong command with exit code 2', async () => {
    for (const args of [['maker', 'link', 'not-an-address'], ['maker', 'link', 'a@example.com', '--return-to', '//evil.example'], ['maker', 'send', 'a@example.com'], ['maker', 'link']]) {
      const run = await runCatalog(stack, args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout, args.join(' ')).toBe('');
      expect(run.stderr, args.join(' ')).toMatch(/catalog maker: |usage: catalog maker/);
    }
  });
});

describe('catalog admin', () => {
  it('grants, lists and revokes the admin role', async () => {
    expect((await runCatalog(stack, ['admin', 'grant', 'Boss@example.com'])).stdout).toBe('Boss@example.com is an admin\n');
    expect((await runCatalog(stack, ['admin', 'list'])).stdout).toBe('Boss@example.com\n');
    expect((await runCatalog(stack, ['admin', 'revoke', 'boss@EXAMPLE.com'])).stdout).toBe('Boss@example.com is no longer an admin\n');
    expect((await runCatalog(stack, ['admin', 'list'])).stdout).toBe('');
    const unknown = await runCatalog(stack, ['admin', 'revoke', 'nobody@example.com']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no account has the address nobody@example.com');
    expect((await runCatalog(stack, ['admin', 'promote', 'x@example.com'])).code).toBe(2);
  });
});
