import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Card } from '../../src/web/components/card.tsx';
import { Button, Checkbox, ErrorSummary, Field, Form, FormActions, LinkButton, Select, TextArea } from '../../src/web/components/forms.tsx';
import { STATUS_LABELS, StatusBadge, type ListingStatus } from '../../src/web/components/status-badge.tsx';
import { Page, type Session } from '../../src/web/components/layout.tsx';
import { registerPageSecurity } from '../../src/web/page-security.ts';
import { sendPrivatePage } from '../../src/web/render.ts';
import { registerIcons } from '../../src/web/icons.ts';
import { registerStylesheet } from '../../src/web/stylesheet.ts';
import { describeInBrowser, screenshot } from '../helpers/browser.ts';

/**
 * The components the maker pages are built from, in Chromium, on a page served the way the
 * service serves pages (same security headers, same stylesheet): they render under the strict
 * policy, their labels name their fields, and their forms post, token included, with
 * JavaScript turned off.
 */
const SESSION: Session = { email: 'ada@example.com', csrfToken: 'csrf-token-1', isAdmin: true };
const STATES = Object.keys(STATUS_LABELS) as ListingStatus[];

function KitPage() {
  return (
    <Page title="Edit Pixel Forge" nav="dashboard" session={SESSION} notice={{ kind: 'error', message: 'Nothing was saved: two fields need a change.' }}>
      <h1>Edit Pixel Forge</h1>
      <ErrorSummary errors={{ name: 'Enter a name of at most 60 characters', website: 'Enter an address starting with https://' }} />
      <Form action="/kit" csrfToken={SESSION.csrfToken}>
        <Field label="Name" name="name" value="" required maxLength={60} error="Enter a name of at most 60 characters" />
        <Field label="Website" name="website" type="url" value="ftp://pixelforge" required hint="The page visitors open" error="Enter an address starting with https://" />
        <TextArea label="Description" name="description" value="Sketch to vector." hint="Plain text or simple HTML" maxLength={5000} />
        <Select
          label="Category"
          name="category"
          emptyOption="Choose a category"
          value="design"
          required
          options={[
            { value: 'design', label: 'Design' },
            { value: 'developer-tools', label: 'Developer Tools' },
          ]}
        />
        <Checkbox label="Show the promo code" name="promo" checked />
        <FormActions>
          <Button>Save</Button>
          <Button variant="secondary" name="intent" value="preview">
            Preview
          </Button>
          <Button variant="danger" name="intent" value="delete">
            Delete
          </Button>
          <Button variant="link" name="intent" value="cancel">
            Cancel
          </Button>
        </FormActions>
      </Form>
      <Card title="Your listings">
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Listing</th>
                <th>Status</th>
                <th>Action</th>
              </tr>
            </thead>
            <tbody>
              {STATES.map((status) => (
                <tr>
                  <td>Listing {status}</td>
                  <td>
                    <StatusBadge status={status} />
                  </td>
                  <td>
                    <LinkButton href={`/kit?edit=${status}`}>Edit</LinkButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Card>
    </Page>
  );
}

function Received({ body }: { body: Record<string, string> }) {
  return (
    <Page title="Received" session={null}>
      <h1>Received</h1>
      <dl>
        {Object.entries(body).map(([k, v]) => (
          <>
            <dt>{k}</dt>
            <dd data-field={k}>{v}</dd>
          </>
        ))}
      </dl>
    </Page>
  );
}

describeInBrowser('the page components in a browser', (browser) => {
  let app: FastifyInstance;
  let baseUrl: string;

  beforeAll(async () => {
    app = Fastify();
    await app.register(formbody);
    await app.register(async (web) => {
      await registerPageSecurity(web, { publicUrl: 'http://127.0.0.1' });
      registerStylesheet(web);
      registerIcons(web);
      web.get('/kit', async (_request, reply) => sendPrivatePage(reply, <KitPage />));
      web.post<{ Body: Record<string, string> }>('/kit', async (request, reply) => sendPrivatePage(reply, <Received body={request.body} />));
      web.post<{ Body: Record<string, string> }>('/signout', async (request, reply) => sendPrivatePage(reply, <Received body={request.body} />));
    });
    baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('render under the strict policy, styled, with fields named by their labels', async () => {
    const tab = await browser.newTab();
    const { page } = tab;
    await page.goto(`${baseUrl}/kit`);
    expect(await page.getByRole('alert').first().innerText()).toContain('Nothing was saved');
    expect(await page.getByRole('textbox', { name: 'Name' }).getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('textbox', { name: 'Website' }).inputValue()).toBe('ftp://pixelforge');
    expect(await page.getByRole('textbox', { name: 'Description (optional)' }).inputValue()).toBe('Sketch to vector.');
    expect(await page.getByRole('combobox', { name: 'Category' }).inputValue()).toBe('design');
    expect(await page.getByRole('checkbox', { name: 'Show the promo code' }).isChecked()).toBe(true);
    expect(await page.locator('.badge').allInnerTexts()).toEqual(STATES.map((s) => STATUS_LABELS[s]));
    expect(await page.getByRole('navigation', { name: 'Your account' }).getByRole('link').allInnerTexts()).toEqual(['Dashboard', 'Connected apps', 'Review', 'Keys']);
    // The error summary's links lead to the fields.
    await page.getByRole('link', { name: 'Enter an address starting with https://' }).click();
    await page.waitForURL(`${baseUrl}/kit#field-website`);
    // Styled: a primary button is filled, a field in error has a thicker border.
    const styles = (await page.evaluate(
      "[getComputedStyle(document.querySelector('.form-actions .button')).backgroundColor, getComputedStyle(document.querySelector('#field-name')).borderTopWidth]",
    )) as [string, string];
    expect(styles[0]).not.toBe('rgba(0, 0, 0, 0)');
    expect(styles[1]).toBe('2px');
    await screenshot(page, 'maker-components');
    tab.expectClean();
  });

  it('a form posts its fields and the CSRF token with JavaScript turned off', async () => {
    const tab = await browser.newTab({ javaScriptEnabled: false });
    const { page } = tab;
    await page.goto(`${baseUrl}/kit`);
    await page.getByRole('textbox', { name: 'Name' }).fill('Pixel Forge');
    await page.getByRole('textbox', { name: 'Website' }).fill('https://pixelforge.example.com');
    await page.getByRole('combobox', { name: 'Category' }).selectOption('developer-tools');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.waitForURL(`${baseUrl}/kit`);
    const field = (name: string) => page.locator(`dd[data-field="${name}"]`).innerText();
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Received');
    expect(await field('_csrf')).toBe('csrf-token-1');
    expect(await field('name')).toBe('Pixel Forge');
    expect(await field('website')).toBe('https://pixelforge.example.com');
    expect(await field('category')).toBe('developer-tools');
    expect(await field('promo')).toBe('on');
    expect(await field('intent')).toBe('preview');
    tab.expectClean();
  });

  it('Sign out is a POST carrying the token, without JavaScript', async () => {
    const tab = await browser.newTab({ javaScriptEnabled: false });
    const { page } = tab;
    await page.goto(`${baseUrl}/kit`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${baseUrl}/signout`);
    expect(await page.locator('dd[data-field="_csrf"]').innerText()).toBe('csrf-token-1');
    tab.expectClean();
  });
});
