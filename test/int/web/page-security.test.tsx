import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from '../../../src/web/csp.ts';
import { Page } from '../../../src/web/components/layout.tsx';
import { registerPageSecurity } from '../../../src/web/page-security.ts';
import { sendPrivatePage } from '../../../src/web/render.ts';

/**
 * The page scope's headers as a consent or sign-in page will get them: a small Fastify app with
 * the same registration the service uses, asked through inject.
 */
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function appWith(publicUrl: string): Promise<FastifyInstance> {
  const instance = Fastify();
  await instance.register(async (web) => {
    await registerPageSecurity(web, { publicUrl });
    web.get('/signin', async (_request, reply) => sendPrivatePage(reply, <Page title="Sign in" session={null} />));
    web.get('/consent', async (_request, reply) =>
      sendPrivatePage(reply, <Page title="Allow access" session={null} />, {
        csp: contentSecurityPolicy({ publicUrl, formAction: ['https://client.example/callback'] }),
      }),
    );
    web.get('/gone', async (_request, reply) => sendPrivatePage(reply, <Page title="Link expired" session={null} />, { status: 410 }));
  });
  instance.get('/json', async () => ({ ok: true }));
  app = instance;
  return instance;
}

describe('page security headers', () => {
  it('on an https service: the policy upgrades insecure requests and HSTS is sent', async () => {
    const res = await (await appWith('https://directory.example')).inject('/signin');
    expect(res.headers['content-security-policy']).toBe(contentSecurityPolicy({ publicUrl: 'https://directory.example' }));
    expect(res.headers['content-security-policy']).toContain('upgrade-insecure-requests');
    expect(res.headers['strict-transport-security']).toBe('max-age=31536000');
    expect(res.headers['referrer-policy']).toBe('same-origin');
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('on a plain http service: neither', async () => {
    const res = await (await appWith('http://localhost:3000')).inject('/signin');
    expect(res.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });

  it("a page's own policy replaces the scope's, sent once", async () => {
    const res = await (await appWith('https://directory.example')).inject('/consent');
    // One header, not two: a second, stricter policy would still be enforced by the browser.
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none';style-src 'self';script-src 'self';connect-src 'self';img-src 'self' https: data:;form-action 'self' https://client.example;base-uri 'none';frame-ancestors 'none';upgrade-insecure-requests",
    );
    expect(res.headers['referrer-policy']).toBe('same-origin');
  });

  it('private pages are never stored and carry their status', async () => {
    const instance = await appWith('http://localhost:3000');
    const ok = await instance.inject('/signin');
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['cache-control']).toBe('no-store');
    expect(ok.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(ok.body.startsWith('<!doctype html>')).toBe(true);
    const gone = await instance.inject('/gone');
    expect(gone.statusCode).toBe(410);
    expect(gone.headers['cache-control']).toBe('no-store');
  });

  it('routes outside the page scope get none of it', async () => {
    const res = await (await appWith('https://directory.example')).inject('/json');
    for (const name of ['content-security-policy', 'referrer-policy', 'x-frame-options', 'strict-transport-security']) {
      expect(res.headers[name], name).toBeUndefined();
    }
  });
});
