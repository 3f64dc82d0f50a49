import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeInBrowser, screenshot } from '../helpers/browser.ts';
import { makerListing, paymentFor, paymentRow } from '../helpers/payments.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/**
 * The built-in checkout's pay page in Chromium, as a maker opens the link an assistant gave
 * them: signed out, with JavaScript or without, through the Content-Security-Policy.
 */
describeInBrowser('the pay page in a browser', (browser) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ realPublicUrl: true });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('says no money moves, confirms with one button, then shows Paid and the way to the edit page', async () => {
    const listing = await makerListing(stack, 'browser-payer@example.com', { name: 'Palette Forge' });
    const payment = await paymentFor(stack, listing);
    const tab = await browser.newTab();
    const { page } = tab;

    const res = await page.goto(payment.url);
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('Premium plan for Palette Forge · Product directory');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Premium plan for Palette Forge');
    expect(await page.locator('main').innerText()).toContain('29.00 USD');
    expect(await page.locator('.badge').innerText()).toBe('Open');
    expect(await page.getByRole('status').innerText()).toContain('This directory runs without a payment provider: no money moves.');
    // The header offers sign-in: paying needs none.
    expect(await page.getByRole('link', { name: 'Sign in' }).isVisible()).toBe(true);
    await screenshot(page, 'pay-page-builtin-open');

    await page.getByRole('button', { name: 'Confirm (no charge)' }).click();
    await page.waitForURL(`${payment.url}?done=paid`);
    expect(await page.locator('.badge').innerText()).toBe('Paid');
    expect(await page.getByRole('status').first().innerText()).toBe('Payment confirmed: the listing is on the premium plan.');
    expect(await page.getByRole('button', { name: 'Confirm (no charge)' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Fill in the premium profile' }).getAttribute('href')).toBe(`/dashboard/listings/${listing.slug}`);
    await screenshot(page, 'pay-page-builtin-paid');

    expect(await paymentRow(stack, payment.id)).toMatchObject({ status: 'paid', plan: 'premium' });
    tab.expectClean();
  });

  it('works without JavaScript', async () => {
    const listing = await makerListing(stack, 'no-script-payer@example.com');
    const payment = await paymentFor(stack, listing);
    const tab = await browser.newTab({ javaScriptEnabled: false });
    await tab.page.goto(payment.url);
    await tab.page.getByRole('button', { name: 'Confirm (no charge)' }).click();
    await tab.page.waitForURL(`${payment.url}?done=paid`);
    expect(await tab.page.locator('.badge').innerText()).toBe('Paid');
    expect(await paymentRow(stack, payment.id)).toMatchObject({ status: 'paid', plan: 'premium' });
  });
});
