import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NEVER_ALLOWED, SCOPE_MEANINGS } from '../../src/auth/scopes.ts';
import { describeInBrowser, screenshot, type Tab } from '../helpers/browser.ts';
import { MemoryOAuthClient } from '../helpers/oauth.ts';
import { startSite, type TestSite } from '../helpers/site-network.ts';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

/**
 * A maker's walk through the account pages in Chromium: sign in by e-mailed link, approve (or
 * deny) an MCP client on the consent page, see it under Connected apps, disconnect it. The
 * client is the MCP SDK's own; its redirect URI is a small page on loopback, so the browser
 * really lands back in the "app" after the consent form's POST (Chrome holds that redirect to
 * the consent page's CSP form-action, so arriving proves the policy names the app's origin).
 */
describeInBrowser('the account pages in a browser', (browser) => {
  let stack: TestStack;
  let app: TestSite;

  beforeAll(async () => {
    stack = await startTestStack({ realPublicUrl: true, env: { RATE_LIMIT_OTHER_PER_MIN: '100000' } });
    app = await startSite((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== '/callback') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      const outcome = url.searchParams.has('code') ? 'Connected' : `Not connected: ${url.searchParams.get('error') ?? 'no answer'}`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>Test app</title><link rel="icon" href="data:,"><h1>${outcome}</h1>`);
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await app?.close();
  });

  const heading = (page: Page) => page.getByRole('heading', { level: 1 }).innerText();

  /** Signs in as a person does; screenshots each page when `shots` is given. */
  async function signIn(tab: Tab, email: string, shots = false) {
    const { page } = tab;
    await page.goto(`${stack.baseUrl}/signin?return_to=/settings/apps`);
    expect(await heading(page)).toBe('Sign in');
    if (shots) await screenshot(page, 'account-sign-in');
    await page.getByLabel('E-mail address').fill(email);
    const mailsBefore = stack.mails.length;
    await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
    await page.waitForURL(`${stack.baseUrl}/signin`);
    expect(await heading(page)).toBe('Check your inbox');
    expect(await page.locator('main').innerText()).toContain(email);
    if (shots) await screenshot(page, 'account-link-sent');

    const mail = stack.mails.slice(mailsBefore).find((m) => m.to === email);
    expect(mail).toBeDefined();
    const link = /http:\/\/127\.0\.0\.1:\d+\/signin\/link\/\S+/.exec(mail!.text)![0];
    await page.goto(link);
    expect(await heading(page)).toBe('Sign in');
    expect(await page.locator('main').innerText()).toContain(`Continue as ${email}?`);
    if (shots) await screenshot(page, 'account-confirm');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${stack.baseUrl}/settings/apps`);
    expect(await heading(page)).toBe('Connected apps');
  }

  /** An MCP client that needs the maker's sign-in: the SDK's authorization URL for it. */
  async function mcpClientAsking(name: string) {
    const provider = new MemoryOAuthClient({
      client_name: name,
      client_uri: 'https://assistant.example',
      redirect_uris: [`${app.origin}/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/api/mcp`), { authProvider: provider });
    const client = new Client({ name: 'browser-test', version: '1.0.0' });
    await client.connect(transport);
    await expect(client.callTool({ name: 'my_listings', arguments: {} })).rejects.toBeInstanceOf(UnauthorizedError);
    return { provider, transport, client, authorizationUrl: provider.authorizationUrl!.href };
  }

  async function expectConsentPage(page: Page, name: string) {
    await page.waitForURL(/\/oauth\/consent\/[^/]+$/);
    expect(await heading(page)).toBe(`Connect ${name} to your account?`);
    const main = await page.locator('main').innerText();
    expect(main).toContain('assistant.example');
    expect(main).toContain('It registered itself with this directory');
    // A maker tool's challenge asks for every maker scope: all three are shown in plain words.
    expect(main).toContain(SCOPE_MEANINGS['listings:read']);
    expect(main).toContain(SCOPE_MEANINGS['listings:write']);
    expect(main).toContain(SCOPE_MEANINGS.offline_access);
    for (const never of NEVER_ALLOWED) expect(main).toContain(never);
  }

  it('sign in → consent → Approve lands in the app with a code → Connected apps → Disconnect', async () => {
    const tab = await browser.newTab();
    const { page } = tab;
    await signIn(tab, 'browser-maker@example.com', true);
    await screenshot(page, 'account-connected-apps-empty');
    expect(await page.locator('main').innerText()).toContain('No app is connected to your account.');

    const { transport, client, provider, authorizationUrl } = await mcpClientAsking('Browser Assistant');
    await page.goto(authorizationUrl);
    await expectConsentPage(page, 'Browser Assistant');
    await screenshot(page, 'account-consent');

    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(`${app.origin}/callback?**`);
    expect(await heading(page)).toBe('Connected');
    const back = new URL(page.url());
    expect(back.searchParams.get('iss')).toBe(stack.baseUrl);
    expect(app.requests.filter((r) => r.startsWith('/callback?code='))).toHaveLength(1);

    // The code the browser brought back is the app's way in.
    await transport.finishAuth(back.searchParams.get('code')!);
    expect((await client.callTool({ name: 'list_categories', arguments: {} })).isError).toBeFalsy();

    await page.goto(`${stack.baseUrl}/settings/apps`);
    const row = page.locator('tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.locator('td').first().innerText()).toContain('Browser Assistant');
    expect(await row.locator('td').nth(1).innerText()).toBe('listings:read, listings:write, offline_access');
    await screenshot(page, 'account-connected-apps');

    await page.getByRole('button', { name: 'Disconnect' }).click();
    await page.waitForURL(`${stack.baseUrl}/settings/apps?done=disconnected`);
    expect(await page.getByRole('status').innerText()).toContain('The app was disconnected');
    expect(await page.locator('main').innerText()).toContain('No app is connected to your account.');
    await screenshot(page, 'account-app-disconnected');

    // The app's token stopped working with the click.
    const refused = await fetch(`${stack.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${provider.tokens()!.access_token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_categories', arguments: {} } }),
    });
    expect(refused.status).toBe(401);
    await client.close().catch(() => undefined);
    tab.expectClean();
    expect(tab.offLoopback).toEqual([]);
  });

  it('Deny sends the browser back to the app with access_denied, and connects nothing', async () => {
    const tab = await browser.newTab();
    const { page } = tab;
    await signIn(tab, 'browser-denier@example.com');
    const { client, authorizationUrl } = await mcpClientAsking('Unwanted Assistant');
    await page.goto(authorizationUrl);
    await expectConsentPage(page, 'Unwanted Assistant');
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(`${app.origin}/callback?**`);
    expect(await heading(page)).toBe('Not connected: access_denied');
    expect(new URL(page.url()).searchParams.get('code')).toBeNull();
    await page.goto(`${stack.baseUrl}/settings/apps`);
    expect(await page.locator('main').innerText()).toContain('No app is connected to your account.');
    await client.close().catch(() => undefined);
    tab.expectClean();
  });

  it('signed out, the authorization asks to sign in first and comes back to the consent page', async () => {
    const tab = await browser.newTab();
    const { page } = tab;
    const { client, authorizationUrl } = await mcpClientAsking('Patient Assistant');
    await page.goto(authorizationUrl);
    await page.waitForURL(/\/oauth\/consent\/[^/]+$/);
    const consentUrl = page.url();
    expect(await heading(page)).toBe('Sign in');
    expect(await page.locator('main').innerText()).toContain('Patient Assistant asks to connect to your maker account. Sign in first');
    await screenshot(page, 'account-sign-in-for-app');
    await page.getByLabel('E-mail address').fill('patient@example.com');
    const mailsBefore = stack.mails.length;
    await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
    await page.waitForURL(`${stack.baseUrl}/signin`);
    const mail = stack.mails.slice(mailsBefore).find((m) => m.to === 'patient@example.com')!;
    await page.goto(/http:\/\/\S+\/signin\/link\/\S+/.exec(mail.text)![0]);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(consentUrl);
    await expectConsentPage(page, 'Patient Assistant');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(`${app.origin}/callback?**`);
    expect(await heading(page)).toBe('Connected');
    await client.close().catch(() => undefined);
    tab.expectClean();
  });

  it('every form works with JavaScript turned off', async () => {
    const tab = await browser.newTab({ javaScriptEnabled: false });
    const { page } = tab;
    await signIn(tab, 'no-script@example.com');
    const { client, authorizationUrl } = await mcpClientAsking('Scriptless Assistant');
    await page.goto(authorizationUrl);
    await expectConsentPage(page, 'Scriptless Assistant');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(`${app.origin}/callback?**`);
    expect(await heading(page)).toBe('Connected');
    await page.goto(`${stack.baseUrl}/settings/apps`);
    expect(await page.locator('tbody tr').count()).toBe(1);
    await page.getByRole('button', { name: 'Disconnect' }).click();
    await page.waitForURL(`${stack.baseUrl}/settings/apps?done=disconnected`);
    expect(await page.locator('main').innerText()).toContain('No app is connected to your account.');
    // Sign out is a form in the page header.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${stack.baseUrl}/`);
    await page.goto(`${stack.baseUrl}/settings/apps`);
    await page.waitForURL(`${stack.baseUrl}/signin?return_to=%2Fsettings%2Fapps`);
    await client.close().catch(() => undefined);
    tab.expectClean();
  });
});
