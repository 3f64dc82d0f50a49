import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findOrCreateMaker, setAdmin } from '../../src/auth/makers.ts';
import { describeInBrowser, screenshot } from '../helpers/browser.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/**
 * The consumer keys page in Chromium, as an admin uses it: signed in by the e-mailed link, a key
 * made and read off the page once, used by its client, its usage charted (SVG, styled by the
 * stylesheet under the pages' CSP); then on a phone-sized screen a key rotated and revoked.
 * Screenshots at 1280 and 390 px wide; at 390 no page may be wider than the screen.
 */
describeInBrowser('the consumer keys page in a browser', (browser) => {
  let stack: TestStack;
  const ADMIN = 'keys-operator@example.com';

  beforeAll(async () => {
    stack = await startTestStack({ realPublicUrl: true, seed: false });
    await setAdmin(stack.db.pool, (await findOrCreateMaker(stack.db.pool, ADMIN)).id, true);
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
  });

  /** Waits until the service's table of keys takes (or refuses) the key: it reloads when notified. */
  async function keyLoaded(key: string, works = true): Promise<void> {
    const deadline = Date.now() + 2000;
    while (stack.service.budgets.keys.check(`Bearer ${key}`).ok !== works && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }

  const pageWidth = (page: Page) => page.evaluate(() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth));

  it('make a key, see it once, see its usage charted; rotate and revoke on a narrow screen', async () => {
    const tab = await browser.newTab();
    const { page } = tab;
    await page.setViewportSize({ width: 1280, height: 900 });

    // Signed out, the page asks for an admin's sign-in; the e-mailed link brings the admin back.
    await page.goto(`${stack.baseUrl}/admin/keys`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('For admins only');
    await page.getByRole('link', { name: 'Sign in as an admin' }).click();
    await page.getByLabel('E-mail address').fill(ADMIN);
    const before = stack.mails.length;
    await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
    await expect.poll(() => stack.mails.length).toBeGreaterThan(before);
    const link = /https?:\/\/\S+\/signin\/link\/\S+/.exec(stack.mails.at(-1)!.text)![0];
    await page.goto(link);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${stack.baseUrl}/admin/keys`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Consumer keys');
    expect(await page.getByRole('navigation', { name: 'Your account' }).getByRole('link', { name: 'Keys' }).getAttribute('aria-current')).toBe('page');
    // The one error so far: the 403 this test asked for.
    expect(tab.consoleErrors).toEqual(['Failed to load resource: the server responded with a status of 403 (Forbidden)']);
    tab.consoleErrors.length = 0;

    // Make a key; it is on the answer, once.
    const form = page.getByRole('form', { name: 'Make a key' });
    await form.getByLabel('Name').fill('browser-client');
    expect(await form.getByLabel('Other calls per minute').getAttribute('placeholder')).toBe('1200');
    await form.getByLabel('Other calls per minute').fill('500');
    await form.getByRole('button', { name: 'Make the key' }).click();
    await page.getByRole('heading', { name: 'The key browser-client is made' }).waitFor();
    const key = (await page.locator('#issued-key').innerText()).trim();
    expect(key).toMatch(/^ck_[0-9A-Za-z]{38}$/);
    expect(page.url()).toBe(`${stack.baseUrl}/admin/keys`);
    expect(await page.getByRole('alert').innerText()).toContain('it is shown this once');
    await screenshot(page, 'admin-keys-made-1280');

    // Its client uses it.
    await keyLoaded(key);
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${stack.baseUrl}/api/v1/categories`, { headers: { authorization: `Bearer ${key}` } });
      expect([res.status, res.headers.get('x-ratelimit-limit')]).toEqual([200, '500']);
    }
    await stack.service.usageRecorder.flush();

    // Back on the list: the key's start, never the key; its chart drawn with the stylesheet's colours.
    await page.getByRole('link', { name: 'Done: back to the keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'Consumer keys' }).waitFor();
    expect(await page.content()).not.toContain(key);
    expect(await page.locator('table.keys-table').innerText()).toContain(`${key.slice(0, 11)}…`);
    const chart = page.locator('#usage-browser-client svg');
    expect(await chart.getAttribute('role')).toBe('img');
    const box = (await chart.boundingBox())!;
    expect(box.width).toBeGreaterThan(300);
    expect(box.height).toBeGreaterThan(100);
    const bar = chart.locator('rect.usage-bar-answered');
    expect(await bar.count()).toBe(1);
    expect((await bar.boundingBox())!.height).toBeGreaterThan(box.height * 0.5);
    expect(await bar.evaluate((el) => getComputedStyle(el).fill)).toBe('rgb(11, 87, 208)');
    expect(await page.getByRole('img', { name: /^Requests per day to the key browser-client/ }).count()).toBe(1);
    // The numbers open without script.
    const numbers = page.locator('#usage-browser-client details');
    expect(await numbers.locator('table').isVisible()).toBe(false);
    await numbers.getByText('The numbers, day by day').click();
    expect(await numbers.locator('tbody tr').last().innerText()).toMatch(/^\d{4}-\d{2}-\d{2}\s+0\s+4\s+0\s+0\s+0$/);
    await screenshot(page, 'admin-keys-1280');

    // A phone-sized screen: the list, a rotation and a revocation, no page wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);
    await screenshot(page, 'admin-keys-390');

    const card = page.locator('#key-browser-client');
    await card.getByRole('button', { name: 'Rotate browser-client' }).click();
    await page.getByRole('heading', { name: 'A new secret for browser-client' }).waitFor();
    const fresh = (await page.locator('#issued-key').innerText()).trim();
    expect(fresh).toMatch(/^ck_[0-9A-Za-z]{38}$/);
    expect(fresh).not.toBe(key);
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);
    await screenshot(page, 'admin-keys-rotated-390');
    await keyLoaded(fresh);

    await page.getByRole('link', { name: 'Done: back to the keys' }).click();
    await page.locator('#key-browser-client').getByRole('link', { name: 'Revoke browser-client…' }).click();
    await page.getByRole('heading', { name: 'Revoke the key browser-client?' }).waitFor();
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);
    await screenshot(page, 'admin-keys-revoke-390');
    await page.getByRole('button', { name: 'Revoke browser-client' }).click();
    await page.waitForURL(`${stack.baseUrl}/admin/keys?done=revoked&key=browser-client`);
    expect(await page.getByRole('status').innerText()).toBe('The key browser-client is revoked: every API process refuses it within a second.');
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);
    await screenshot(page, 'admin-keys-revoked-390');
    await keyLoaded(fresh, false);
    expect((await fetch(`${stack.baseUrl}/api/v1/categories`, { headers: { authorization: `Bearer ${fresh}` } })).status).toBe(401);
    tab.expectClean();
  });
});
