import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeInBrowser, type Tab } from '../helpers/browser.ts';
import { startSite, type TestSite } from '../helpers/site-network.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/**
 * Cross-site form posts in Chromium: a signed-in maker visits a page of another site (served on
 * loopback as `localhost`, another site than the service's 127.0.0.1) that posts forms to the
 * service by itself. The browser sends what the service judges (the other site's Origin; the
 * SameSite=Lax session cookie stays behind), every post is refused with the
 * "This form has expired" page, and nothing changes: the maker is still signed in and no listing
 * was submitted. The maker's own Sign out button, on the service's page, still works.
 */
describeInBrowser('cross-site form posts in a browser', (browser) => {
  let stack: TestStack;
  let attacker: TestSite;
  let attackerOrigin: string;

  beforeAll(async () => {
    stack = await startTestStack({ realPublicUrl: true, env: { RATE_LIMIT_OTHER_PER_MIN: '100000' } });
    attacker = await startSite((req, res) => {
      const target = new URL(req.url ?? '/', 'http://localhost').searchParams.get('target') ?? '/signout';
      const fields = target === '/dashboard/new' ? '<input name="name" value="Forged listing"><input name="website" value="https://forged.example/">' : '';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        `<!doctype html><title>Win a prize</title><link rel="icon" href="data:,">` +
          `<form method="post" action="${stack.baseUrl}${target}">${fields}<input name="_csrf" value="guessed-token"></form>` +
          `<script>document.forms[0].submit()</script>`,
      );
    });
    attackerOrigin = `http://localhost:${attacker.port}`;
  });

  afterAll(async () => {
    await stack?.stop();
    await attacker?.close();
  });

  const heading = (page: Page) => page.getByRole('heading', { level: 1 }).innerText();

  async function signIn(tab: Tab, email: string) {
    const { page } = tab;
    await page.goto(`${stack.baseUrl}/signin?return_to=/settings/apps`);
    await page.getByLabel('E-mail address').fill(email);
    const mailsBefore = stack.mails.length;
    await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
    await page.waitForURL(`${stack.baseUrl}/signin`);
    const mail = stack.mails.slice(mailsBefore).find((m) => m.to === email);
    await page.goto(/http:\/\/127\.0\.0\.1:\d+\/signin\/link\/\S+/.exec(mail!.text)![0]);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${stack.baseUrl}/settings/apps`);
    expect(await heading(page)).toBe('Connected apps');
  }

  it("another site's page posting Sign out and a submission is refused, and the maker stays signed in", async () => {
    const tab = await browser.newTab();
    const { page } = tab;
    const email = 'cross-site-victim@example.com';
    await signIn(tab, email);

    for (const target of ['/signout', '/dashboard/new']) {
      const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url() === `${stack.baseUrl}${target}`);
      const answered = page.waitForResponse((r) => r.url() === `${stack.baseUrl}${target}`);
      await page.goto(`${attackerOrigin}/?target=${encodeURIComponent(target)}`);
      const headers = await (await posted).allHeaders();
      // What the browser says of the post: another site's page sent it, and without the session.
      expect(headers.origin, target).toBe(attackerOrigin);
      if (headers['sec-fetch-site'] !== undefined) expect(headers['sec-fetch-site'], target).toBe('cross-site');
      expect(headers.cookie ?? '', target).not.toContain('catalog_session');
      expect((await answered).status(), target).toBe(403);
      expect(await heading(page), target).toBe('This form has expired');
    }

    // Nothing changed: still signed in, and no listing was submitted.
    await page.goto(`${stack.baseUrl}/settings/apps`);
    expect(await heading(page)).toBe('Connected apps');
    const { rows } = await stack.db.pool.query(
      'SELECT 1 FROM catalog.listings l JOIN catalog.makers m ON m.id = l.maker_id WHERE m.email = $1 UNION ALL SELECT 1 FROM catalog.listings WHERE name = $2',
      [email, 'Forged listing'],
    );
    expect(rows).toEqual([]);

    // The maker's own Sign out, posted by the service's page, goes through.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${stack.baseUrl}/`);
    await page.goto(`${stack.baseUrl}/settings/apps`);
    await page.waitForURL(/\/signin\?return_to=/);
    // The two refusals are the only errors the browser saw; no script error, no CSP violation.
    expect(tab.consoleErrors).toEqual(Array(2).fill('Failed to load resource: the server responded with a status of 403 (Forbidden)'));
    expect(tab.pageErrors).toEqual([]);
    expect(tab.cspViolations).toEqual([]);
  });
});
