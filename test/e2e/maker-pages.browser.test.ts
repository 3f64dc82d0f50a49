import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { describeInBrowser, screenshot, type Tab } from '../helpers/browser.ts';
import { draftClaimPath, startMakerSites, startMakerStack, type MakerSites } from '../helpers/maker-pages.ts';
import { startSite, type TestSite } from '../helpers/site-network.ts';
import type { TestStack } from '../helpers/stack.ts';

/**
 * The maker pages in Chromium, as a maker uses them: an assistant's claim link, sign-in by
 * e-mailed link, the submission form filled from the draft, the dashboard, the edit page, and
 * Verify against the maker's site (served on loopback). The browser enforces the pages'
 * Content-Security-Policy, so a clean run shows nothing on them is refused; the same flow works
 * with JavaScript turned off, as the forms are plain posts.
 */
describeInBrowser('the maker pages in a browser', (browser) => {
  let stack: TestStack;
  let sites: MakerSites;
  let elsewhere: TestSite;

  beforeAll(async () => {
    sites = await startMakerSites();
    stack = await startMakerStack();
    // Another site, on another origin, showing a listing's badge.
    elsewhere = await startSite((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>A maker's site</title><a href="https://directory.test/products/x"><img id="badge" src="${stack.baseUrl}/badge/not-live-yet.svg" alt="Listed on Product directory" width="200" height="54"></a>`);
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await sites?.site.close();
    await elsewhere?.close();
  });

  /** Signs in from the sign-in page the tab is on, through the link mailed to `email`. */
  async function signInFromPage(page: Page, email: string): Promise<void> {
    await page.getByLabel('E-mail address').fill(email);
    await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
    await page.getByRole('heading', { name: 'Check your inbox' }).waitFor();
    const mail = stack.mails.findLast((m) => m.to === email);
    const link = /https?:\/\/\S+\/signin\/link\/\S+/.exec(mail!.text)![0];
    await page.goto(link);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function runFlow(tab: Tab, name: string): Promise<void> {
    const { page } = tab;
    const website = sites.url('badge.example', `/${name}`);
    const claim = await draftClaimPath(stack, {
      website,
      name: `Lantern ${name}`,
      punchline: 'Notes that light the way',
      description: 'A **note** app for people who write.',
      category: 'productivity',
      pricing_model: 'freemium',
      tags: ['notes'],
    });

    // The claim link, signed out: sign in first.
    const opened = await page.goto(`${stack.baseUrl}${claim}`);
    expect(opened?.status()).toBe(200);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Sign in');
    expect(await page.locator('main').innerText()).toContain('badge.example');
    await screenshot(page, `${name}-1-claim-sign-in`);
    await signInFromPage(page, `${name}@example.com`);

    // Back on the claim link: the form, filled from the draft.
    await page.waitForURL(`${stack.baseUrl}${claim}`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Finish your submission');
    expect(await page.getByLabel('Website').inputValue()).toBe(website);
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe(`Lantern ${name}`);
    expect(await page.getByLabel('Category').inputValue()).toBe('productivity');
    await screenshot(page, `${name}-2-claim-form`);

    // A refused field comes back with its message; the rest is kept.
    await page.getByLabel('Punchline').fill('Notes <b>that</b> shine');
    const errorsBefore = tab.consoleErrors.length;
    await page.getByRole('button', { name: 'Submit the product' }).click();
    await page.locator('.error-summary').waitFor();
    // The refused form is answered 400, which Chromium notes in the console: that, and nothing else.
    expect(tab.consoleErrors.splice(errorsBefore)).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    expect(await page.locator('.error-summary').innerText()).toContain('Punchline must be plain text, without HTML or scripts');
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe(`Lantern ${name}`);
    await screenshot(page, `${name}-3-claim-form-refused`);
    await page.locator('.error-summary a').first().click();
    await page.getByLabel('Punchline').fill('Notes that shine');
    await page.getByRole('button', { name: 'Submit the product' }).click();

    // Published: the edit page, with the notice.
    await page.waitForURL(/\/dashboard\/listings\/lantern-/);
    const editUrl = page.url();
    expect(await page.locator('.notice').innerText()).toContain(`Published: Lantern ${name} is live in the directory`);
    await screenshot(page, `${name}-4-published`);

    // The dashboard lists it.
    await page.getByRole('navigation', { name: 'Your account' }).getByRole('link', { name: 'Dashboard' }).click();
    await page.waitForURL(`${stack.baseUrl}/dashboard`);
    const row = page.locator('tbody tr').first();
    expect(await row.innerText()).toContain(`Lantern ${name}`);
    expect(await row.innerText()).toContain('Live');
    await screenshot(page, `${name}-5-dashboard`);

    // Edit it.
    await row.getByRole('link', { name: `Lantern ${name}` }).click();
    await page.waitForURL(editUrl);
    expect(await page.locator('#details .save-effect').innerText()).toContain('stays live');
    await page.getByLabel('Punchline').fill('Notes that light every way');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(editUrl);
    expect(await page.locator('.notice').innerText()).toBe('Saved: the live listing shows your changes within a few seconds.');
    expect(await page.getByLabel('Punchline').inputValue()).toBe('Notes that light every way');
    await screenshot(page, `${name}-6-edited`);

    // Verify: first without the badge, then with the markup copied onto the site.
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.locator('.notice').waitFor();
    expect(await page.locator('.notice').innerText()).toContain('The badge was not found.');
    await screenshot(page, `${name}-7-verify-missing`);
    const markup = await page.locator('#badge-markup').inputValue();
    expect(markup).toContain('alt="Listed on Product directory"');
    const badge = page.locator('.badge-preview img');
    expect(await badge.evaluate((img: HTMLImageElement) => [img.complete, img.naturalWidth, img.naturalHeight])).toEqual([true, 200, 54]);
    const url = new URL(website);
    sites.pages.set(`${url.hostname}${url.pathname}`, `<!doctype html><html><body><footer>${markup}</footer></body></html>`);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.locator('.notice-success').waitFor();
    expect(await page.locator('.notice').innerText()).toBe("Badge found on your site: the listing page's link to your site is now followed.");
    expect(await page.locator('.listing-facts').innerText()).toContain('Verified');
    await screenshot(page, `${name}-8-verify-found`);

    tab.expectClean();
  }

  it('claim → sign in → submit → dashboard → edit → Verify, with no console error and no CSP violation', async () => {
    const tab = await browser.newTab();
    await runFlow(tab, 'maker-pages');
    // The draft's site, its cover and the listing's images never left the machine.
    expect(tab.offLoopback.every((u) => u.startsWith('https://directory.test/') || u.startsWith('https://cdn.'))).toBe(true);
  });

  it('works the same with JavaScript turned off', async () => {
    const tab = await browser.newTab({ javaScriptEnabled: false });
    await runFlow(tab, 'maker-pages-no-js');
  });

  it('the other pages: an empty dashboard, the submission form, the premium profile, a spent claim link, a listing not found', async () => {
    const tab = await browser.newTab({ javaScriptEnabled: false });
    const { page } = tab;
    /** Chromium notes an error status in the console: exactly that one note, then nothing else. */
    const expectStatusNote = async (status: number, open: () => Promise<unknown>) => {
      const before = tab.consoleErrors.length;
      await open();
      expect(tab.consoleErrors.splice(before)).toEqual([expect.stringContaining(`status of ${status}`)]);
    };

    const claim = await draftClaimPath(stack, { website: sites.url('good.example', '/other-pages'), name: 'Premium Notes', punchline: 'Notes, premium', description: 'Notes.', category: 'productivity', plan: 'premium' });
    await page.goto(`${stack.baseUrl}/dashboard`);
    expect(new URL(page.url()).pathname).toBe('/signin');
    await signInFromPage(page, 'other-pages@example.com');
    await page.waitForURL(`${stack.baseUrl}/dashboard`);
    expect(await page.getByRole('heading', { name: 'No listings yet' }).isVisible()).toBe(true);
    await screenshot(page, 'maker-dashboard-empty');

    await page.getByRole('link', { name: 'Submit your first product' }).click();
    await page.waitForURL(`${stack.baseUrl}/dashboard/new`);
    expect(await page.getByLabel('Category').inputValue()).toBe('');
    await screenshot(page, 'maker-submit-form');

    // The claimed premium draft: published, with the payment link.
    await page.goto(`${stack.baseUrl}${claim}`);
    await page.getByRole('button', { name: 'Submit the product' }).click();
    await page.waitForURL(/\/dashboard\/listings\/premium-notes/);
    const editUrl = page.url();
    expect(await page.locator('#payment').innerText()).toContain('Nothing is charged until you pay.');
    await screenshot(page, 'maker-premium-payment-link');

    // Paid (the built-in checkout: no money moves), the premium profile is on the edit page.
    await page.locator('#payment').getByRole('link', { name: 'Pay 29.00 USD' }).click();
    await page.waitForURL(/\/pay\/[0-9a-f-]{36}$/);
    await page.getByRole('button', { name: 'Confirm (no charge)' }).click();
    await page.getByRole('link', { name: 'Fill in the premium profile' }).click();
    await page.waitForURL(editUrl);
    expect(await page.locator('.listing-facts').innerText()).toContain('Premium');
    await page.getByLabel('Highlights').fill('Fast\nPrivate');
    await page.getByLabel('Question 1').fill('Is it free to try?');
    await page.getByLabel('Answer 1').fill('Yes.');
    await page.locator('#field-promo_code').fill('LAUNCH');
    await page.getByLabel('Discount').fill('10% off');
    await page.getByRole('button', { name: 'Save premium profile' }).click();
    await page.waitForURL(editUrl);
    expect(await page.locator('.notice').innerText()).toContain('Premium profile saved');
    expect(await page.getByLabel('Question 1').inputValue()).toBe('Is it free to try?');
    await screenshot(page, 'maker-premium-profile');

    await expectStatusNote(410, () => page.goto(`${stack.baseUrl}${claim}`));
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('This link has already been used');
    await screenshot(page, 'maker-claim-used');

    await expectStatusNote(404, () => page.goto(`${stack.baseUrl}/dashboard/listings/pixel-forge`));
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Listing not found');
    await screenshot(page, 'maker-listing-not-found');
    tab.expectClean();
  });

  it('the badge image shows on a maker site of another origin', async () => {
    const tab = await browser.newTab();
    const { page } = tab;
    await page.goto(elsewhere.origin);
    const size = await page.locator('#badge').evaluate(async (img: HTMLImageElement) => {
      if (!img.complete) await new Promise((resolve) => img.addEventListener('load', resolve, { once: true }));
      return [img.naturalWidth, img.naturalHeight];
    });
    expect(size).toEqual([200, 54]);
    await screenshot(page, 'maker-badge-on-a-site');
    tab.expectClean();
    // The badge opened on its own is a clean document under the pages' policy.
    const opened = await page.goto(`${stack.baseUrl}/badge/not-live-yet.svg`);
    expect(opened?.headers()['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(await page.locator('text').allTextContents()).toEqual(['LISTED ON', 'Product directory']);
    tab.expectClean();
  });
});
