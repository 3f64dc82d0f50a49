import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeInBrowser, screenshot } from '../helpers/browser.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';
import { insertListings } from '../helpers/write-model.ts';

/**
 * The API reference page in Chromium: its Try-it forms for the export and the change feed send
 * the request and show the answer under the page's strict Content-Security-Policy; an export
 * larger than the page shows is cut, not loaded whole.
 */
describeInBrowser('the API reference page in a browser', (browser) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
    // Enough listings that the export passes what the page shows (200,000 characters).
    await insertListings(
      stack.db.pool,
      Array.from({ length: 400 }, (_, i) => ({ slug: `docs-page-${i}` })),
    );
    await stack.settle();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('tries the export and the change feed', async () => {
    const tab = await browser.newTab();
    const { page } = tab;
    expect((await page.goto(`${stack.baseUrl}/api/v1/docs`))?.status()).toBe(200);

    const exportForm = page.locator('#op-exportProducts form.try');
    await exportForm.getByRole('button', { name: 'Send' }).click();
    const exportOut = exportForm.locator('pre.out');
    await expect.poll(() => exportOut.innerText(), { timeout: 10_000 }).toContain('(the rest is not shown)');
    const exported = await exportOut.innerText();
    expect(exported).toMatch(/^GET \/api\/v1\/export\n200 OK\n/);
    expect(exported).toContain('catalog-cursor: ');
    expect(exported).toContain('content-type: application/x-ndjson');

    const changesForm = page.locator('#op-listChanges form.try');
    await changesForm.locator('input[name="limit"]').fill('5');
    await changesForm.getByRole('button', { name: 'Send' }).click();
    const changesOut = changesForm.locator('pre.out');
    await expect.poll(() => changesOut.innerText(), { timeout: 10_000 }).toContain('"cursor"');
    expect(await changesOut.innerText()).toMatch(/^GET \/api\/v1\/changes\?limit=5\n200 OK\n/);
    await screenshot(page, 'api-docs-feed');
    tab.expectClean();
  });
});
