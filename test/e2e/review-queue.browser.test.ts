import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeInBrowser, screenshot } from '../helpers/browser.ts';
import { makerToken } from '../helpers/oauth.ts';
import { makerClient, myListing, runCatalog, siteHandler, tool } from '../helpers/review.ts';
import { startSite, tableResolver, type TestSite } from '../helpers/site-network.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/**
 * The review queue in Chromium, as an admin works through it: signed in by the e-mailed link,
 * one listing approved, one rejected (first without feedback, which is refused, then with it),
 * through the pages' Content-Security-Policy, the sites' cover images previewed.
 */
describeInBrowser('the review queue in a browser', (browser) => {
  let stack: TestStack;
  let site: TestSite;
  let maker: Client;
  const approveSlug = 'orbit-notes';
  const rejectSlug = 'spam-cannon';

  beforeAll(async () => {
    site = await startSite(siteHandler());
    stack = await startTestStack({
      realPublicUrl: true,
      env: { FETCH_ALLOW_LOOPBACK: 'true', TRUST_PROXY: 'true' },
      fetchOptions: { resolver: tableResolver({ 'orbit.example': ['127.0.0.1'], 'spam.example': ['127.0.0.1'] }) },
    });
    expect((await runCatalog(stack, ['admin', 'grant', 'reviewer@example.com'])).code).toBe(0);
    maker = await makerClient(stack, (await makerToken(stack, 'queue-maker@example.com')).accessToken);
    for (const [host, name] of [['orbit.example', 'Orbit Notes'], ['spam.example', 'Spam Cannon']] as const) {
      const submitted = await tool(maker, 'submit_product', { website: `http://${host}:${site.port}/`, name, punchline: `${name} for everyone`, category: 'productivity' });
      expect(submitted.body.outcome).toBe('pending_review');
    }
  }, 120_000);

  afterAll(async () => {
    await maker?.close();
    await stack?.stop();
    await site?.close();
  });

  it('approve one listing and reject another with feedback', async () => {
    const tab = await browser.newTab();
    const { page } = tab;

    // Sign in as the admin, by the link the sign-in page e-mails.
    await page.goto(`${stack.baseUrl}/admin/review`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('For admins only');
    await page.getByRole('link', { name: 'Sign in as an admin' }).click();
    await page.getByLabel('E-mail address').fill('reviewer@example.com');
    const before = stack.mails.length;
    await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
    await expect.poll(() => stack.mails.length).toBeGreaterThan(before);
    const link = /https?:\/\/\S+\/signin\/link\/\S+/.exec(stack.mails.at(-1)!.text)![0];
    await page.goto(link);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${stack.baseUrl}/admin/review`);

    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Review queue');
    const cards = page.locator('section.review-item');
    expect(await cards.evaluateAll((els) => els.map((e) => e.id))).toEqual(['listing-pending-review', `listing-${approveSlug}`, `listing-${rejectSlug}`]);
    const orbit = page.locator(`#listing-${approveSlug}`);
    expect(await orbit.innerText()).toContain('The listing has no description.');
    expect(await orbit.innerText()).toContain('queue-maker@example.com');
    expect(await orbit.locator('img').first().getAttribute('src')).toBe('https://cdn.orbit.example/cover.png');
    await screenshot(page, 'review-queue');

    await orbit.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.waitForURL(`${stack.baseUrl}/admin/review?done=approve&slug=${approveSlug}`);
    expect(await page.getByRole('status').innerText()).toBe(`${approveSlug} was approved.`);
    expect(await page.locator(`#listing-${approveSlug}`).count()).toBe(0);
    await screenshot(page, 'review-queue-approved');

    const spam = page.locator(`#listing-${rejectSlug}`);
    await spam.getByRole('button', { name: 'Reject' }).click();
    expect(await page.getByRole('alert').first().innerText()).toContain('Say why the listing is rejected');
    await screenshot(page, 'review-queue-reject-needs-feedback');
    await page.locator(`#listing-${rejectSlug}`).getByLabel('Feedback to the maker').fill('Sends unsolicited mail; not a product for this directory.');
    await page.locator(`#listing-${rejectSlug}`).getByRole('button', { name: 'Reject' }).click();
    await page.waitForURL(`${stack.baseUrl}/admin/review?done=reject&slug=${rejectSlug}`);
    expect(await page.getByRole('status').innerText()).toBe(`${rejectSlug} was rejected.`);
    expect(await page.locator('section.review-item').evaluateAll((els) => els.map((e) => e.id))).toEqual(['listing-pending-review']);
    await screenshot(page, 'review-queue-rejected');
    // The only errors: the two refusals this test asked for (403 signed out, 400 without feedback).
    expect({ consoleErrors: tab.consoleErrors, pageErrors: tab.pageErrors, cspViolations: tab.cspViolations }).toEqual({
      consoleErrors: ['Failed to load resource: the server responded with a status of 403 (Forbidden)', 'Failed to load resource: the server responded with a status of 400 (Bad Request)'],
      pageErrors: [],
      cspViolations: [],
    });
    tab.consoleErrors.length = 0;

    await stack.settle();
    expect((await fetch(`${stack.baseUrl}/api/v1/products/${approveSlug}`)).status).toBe(200);
    expect((await fetch(`${stack.baseUrl}/api/v1/products/${rejectSlug}`)).status).toBe(404);
    expect(await myListing(maker, rejectSlug)).toMatchObject({ status: 'rejected', feedback: 'Sends unsolicited mail; not a product for this directory.' });

    // The history on the listing's admin page names the reviewer.
    await page.goto(`${stack.baseUrl}/admin/listings/${rejectSlug}`);
    expect(await page.locator('table').innerText()).toContain('reviewer@example.com');
    await screenshot(page, 'review-listing-history');
    tab.expectClean();
  });
});
