import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUsage, listKeys, newUsageBatchId, utcDay } from '../../../../src/auth/consumer-keys/consumer-keys.ts';
import { findOrCreateMaker, setAdmin } from '../../../../src/auth/makers.ts';
import { parsePage } from '../../../helpers/html.ts';
import { fillAndPost, formEntries, post, shownErrors, shownValue, typed } from '../../../helpers/maker-pages.ts';
import { Browser, signIn } from '../../../helpers/oauth.ts';
import { startTestStack, type TestStack } from '../../../helpers/stack.ts';

/**
 * The admins' consumer keys page (/admin/keys) from outside: signed in by the e-mailed link, its
 * forms read from the served page and posted with their CSRF token, each key then tried on
 * /api/v1 with `Authorization: Bearer` as its client would (the service reloads its keys when
 * they change, so a change is awaited, never assumed). Every log line the service writes is
 * kept, to show that no secret is ever in one.
 */
let stack: TestStack;
let admin: Browser;
let maker: Browser;
const logLines: string[] = [];
const ADMIN = 'keys-admin@example.com';
const KEY = /ck_[0-9A-Za-z]{38}/g;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  stack = await startTestStack({ realPublicUrl: true, seed: false, logger: pino({ level: 'debug' }, sink) });
  await setAdmin(stack.db.pool, (await findOrCreateMaker(stack.db.pool, ADMIN)).id, true);
  admin = await signIn(stack, ADMIN);
  maker = await signIn(stack, 'keys-maker@example.com');
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** The answer of /api/v1/categories to a client sending this key. */
async function withKey(key: string): Promise<{ status: number; limit: string | null; code: unknown }> {
  const res = await fetch(`${stack.baseUrl}/api/v1/categories`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await res.json()) as { code?: unknown };
  return { status: res.status, limit: res.headers.get('x-ratelimit-limit'), code: body.code };
}

/**
 * Waits (up to 2 s) until the service's table of keys takes this key (or, `false`, refuses it):
 * it reloads the table when notified of a change. Asked of the table rather than of /api/v1, so
 * that the waiting sends no refused key (an address may send only a few a minute).
 */
async function keyLoaded(key: string, works = true): Promise<void> {
  const deadline = Date.now() + 2000;
  while (stack.service.budgets.keys.check(`Bearer ${key}`).ok !== works && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

/** The secrets a page shows. */
const secretsOn = (html: string) => html.match(KEY) ?? [];

/** Makes a key through the page's form; answers the response and the secret it shows. */
async function makeKey(changes: Record<string, string>): Promise<{ res: Response; html: string; key: string }> {
  const res = await fillAndPost(admin, '/admin/keys', '/admin/keys', changes);
  const html = await res.text();
  expect(res.status, html).toBe(200);
  const page = parsePage(html);
  const key = page.text(page.byId('issued-key')!).trim();
  return { res, html, key };
}

describe('who may see /admin/keys', () => {
  it('answers a signed-out visitor 403 with a way to sign in, for the page and its forms', async () => {
    const anonymous = new Browser(stack.baseUrl);
    const res = await anonymous.request('/admin/keys');
    expect(res.status).toBe(403);
    const html = await res.text();
    expect(parsePage(html).texts('h1')).toEqual(['For admins only']);
    expect(html).not.toContain('Consumer keys');
    expect(parsePage(html).all('a').map((a) => parsePage(html).attr(a, 'href'))).toContain('/signin?return_to=%2Fadmin%2Fkeys');
    const form = await anonymous.request('/signin');
    const csrf = Browser.csrfOf(await form.text());
    expect((await anonymous.request('/admin/keys', { form: { _csrf: csrf, name: 'sneaky' } })).status).toBe(403);
    expect((await anonymous.request('/admin/keys/sneaky/revoke')).status).toBe(403);
  });

  it('answers a signed-in maker who is not an admin 403, and makes nothing', async () => {
    const res = await maker.request('/admin/keys');
    expect(res.status).toBe(403);
    const html = await res.text();
    expect(html).toContain('keys-maker@example.com is not one');
    // the maker's own header has no link to the admin pages
    const links = parsePage(html).all('a').map((a) => parsePage(html).attr(a, 'href'));
    expect(links).not.toContain('/admin/keys');
    const made = await maker.request('/admin/keys', { form: { _csrf: Browser.csrfOf(html), name: 'by-a-maker' } });
    expect(made.status).toBe(403);
    expect(secretsOn(await made.text())).toEqual([]);
    expect((await listKeys(stack.db.pool)).map((k) => k.name)).not.toContain('by-a-maker');
  });

  it('links the page from the admin navigation, beside the review queue', async () => {
    const html = await (await admin.request('/admin/review')).text();
    const page = parsePage(html);
    const nav = page.all('nav').find((n) => page.attr(n, 'aria-label') === 'Your account')!;
    expect(page.all('a', nav).map((a) => page.attr(a, 'href'))).toEqual(expect.arrayContaining(['/admin/review', '/admin/keys']));
  });
});

describe('making a key', () => {
  it('shows the new key once, no-store, not in an address; it works on /api/v1 with its own budget', async () => {
    const { res, html, key } = await makeKey({ name: 'acme-search', other: '250', expires: '2999-12-31' });
    expect(res.headers.get('cache-control')).toMatch(/no-store/);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.getSetCookie().join('\n')).not.toContain('ck_');
    expect(key).toMatch(/^ck_[0-9A-Za-z]{38}$/);
    expect(secretsOn(html)).toEqual([key]);
    const page = parsePage(html);
    expect(page.texts('h1')).toEqual(['The key acme-search is made']);
    expect(page.text(page.all('div').find((d) => page.attr(d, 'role') === 'alert')!)).toContain('it is shown this once');
    expect(page.text(page.all('main')[0]!)).toContain('600 searches, 250 other calls, 30 exports and 1,200 change-feed requests a minute');
    expect(page.text(page.all('main')[0]!)).toContain('2999-12-31 (UTC)');

    await keyLoaded(key);
    expect(await withKey(key)).toMatchObject({ status: 200, limit: '250' });

    // The list shows the key's start and budgets, never the secret again.
    const list = await admin.request('/admin/keys');
    const listHtml = await list.text();
    expect(list.status).toBe(200);
    expect(secretsOn(listHtml)).toEqual([]);
    const table = parsePage(listHtml);
    const row = table.all('tr').find((tr) => table.text(tr).includes('acme-search'))!;
    const cells = table.all('td', row).map((td) => table.text(td).trim());
    expect(cells.slice(0, 8)).toEqual(['acme-search', 'Active', `${key.slice(0, 11)}…`, '600', '250', '30', '1,200', '2999-12-31']);
    expect(logLines.join('')).not.toContain(key);
  });

  it('refuses the form without its CSRF token (403) and makes nothing', async () => {
    const page = await admin.request('/admin/keys');
    const entries = formEntries(await page.text(), '/admin/keys').filter(([name]) => name !== '_csrf');
    const res = await post(admin, '/admin/keys', typed(entries, { name: 'no-token' }));
    expect(res.status).toBe(403);
    expect(secretsOn(await res.text())).toEqual([]);
    const forged = await post(admin, '/admin/keys', typed(entries, { name: 'no-token', _csrf: 'forged' }));
    expect(forged.status).toBe(403);
    expect((await listKeys(stack.db.pool)).map((k) => k.name)).not.toContain('no-token');
  });

  it('sends bad input back (400) with each message at its field and everything typed kept', async () => {
    await makeKey({ name: 'taken-name' });
    const res = await fillAndPost(admin, '/admin/keys', '/admin/keys', { name: 'taken-name', search: '700', other: '0', export: '12', expires: '2020-01-01' });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(secretsOn(html)).toEqual([]);
    const shown = shownErrors(html);
    expect(shown.fields).toEqual({
      other: 'Other calls per minute must be from 1 to 10,000,000, not 0.',
      expires: expect.stringMatching(/^The expiry 2020-01-01 is in the past \(today is \d{4}-\d{2}-\d{2} UTC\); a key works through its last day\.$/),
    });
    expect(shown.summary.map((e) => e.href)).toEqual(['#field-other', '#field-expires']);
    expect([shownValue(html, 'field-name'), shownValue(html, 'field-search'), shownValue(html, 'field-other'), shownValue(html, 'field-export'), shownValue(html, 'field-changes'), shownValue(html, 'field-expires')]).toEqual([
      'taken-name',
      '700',
      '0',
      '12',
      '',
      '2020-01-01',
    ]);

    // With the budgets and the day put right, the name is the problem: it is taken.
    const again = await fillAndPost(admin, '/admin/keys', '/admin/keys', { name: 'taken-name', search: '700' });
    expect(again.status).toBe(400);
    const againHtml = await again.text();
    expect(shownErrors(againHtml).fields).toEqual({ name: 'A key named "taken-name" exists already (names are never reused, revoked keys\' included).' });
    expect(shownValue(againHtml, 'field-name')).toBe('taken-name');
    expect(shownValue(againHtml, 'field-search')).toBe('700');

    const badName = await fillAndPost(admin, '/admin/keys', '/admin/keys', { name: 'Not A Name', changes: 'lots' });
    expect(badName.status).toBe(400);
    const badHtml = await badName.text();
    expect(shownErrors(badHtml).fields).toEqual({
      name: 'The name "Not A Name" is not 1 to 64 of a-z, 0-9 and -.',
      changes: 'Change-feed requests per minute must be a whole number from 1 to 10,000,000, not "lots".',
    });
    expect(shownValue(badHtml, 'field-changes')).toBe('lots');
    expect((await listKeys(stack.db.pool)).filter((k) => k.name === 'taken-name')).toHaveLength(1);
  });
});

describe('revoking a key', () => {
  it('asks first, then revokes: the key is refused with 401 INVALID_KEY on /api/v1', async () => {
    const { key } = await makeKey({ name: 'to-revoke' });
    await keyLoaded(key);
    expect((await withKey(key)).status).toBe(200);

    const confirm = await admin.request('/admin/keys/to-revoke/revoke');
    expect(confirm.status).toBe(200);
    const confirmHtml = await confirm.text();
    expect(parsePage(confirmHtml).texts('h1')).toEqual(['Revoke the key to-revoke?']);
    // Nothing is revoked by looking at the question.
    expect((await listKeys(stack.db.pool)).find((k) => k.name === 'to-revoke')!.status).toBe('active');

    const done = await post(admin, '/admin/keys/to-revoke/revoke', formEntries(confirmHtml, '/admin/keys/to-revoke/revoke'));
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/admin/keys?done=revoked&key=to-revoke');
    const list = await admin.request(done.headers.get('location')!);
    const page = parsePage(await list.text());
    expect(page.text(page.all('div').find((d) => page.attr(d, 'role') === 'status')!).trim()).toBe('The key to-revoke is revoked: every API process refuses it within a second.');
    const row = page.all('tr').find((tr) => page.text(tr).includes('to-revoke'))!;
    expect(page.text(row)).toContain('Revoked');
    // a revoked key offers neither rotation nor revocation
    expect(page.all('form').map((f) => page.attr(f, 'action'))).not.toContain('/admin/keys/to-revoke/rotate');

    await keyLoaded(key, false);
    expect(await withKey(key)).toMatchObject({ status: 401, code: 'INVALID_KEY' });
  });

  it('refuses a revocation without its CSRF token, and answers an unknown key 404', async () => {
    await makeKey({ name: 'kept-key' });
    expect((await admin.request('/admin/keys/kept-key/revoke', { form: { nothing: '' } })).status).toBe(403);
    expect((await listKeys(stack.db.pool)).find((k) => k.name === 'kept-key')!.status).toBe('active');
    expect((await admin.request('/admin/keys/no-such-key/revoke')).status).toBe(404);
    expect((await admin.request('/admin/keys/NOT..valid/revoke')).status).toBe(404);
  });
});

describe('rotating a key', () => {
  it('shows a new secret once; the old and the new both work during the grace period', async () => {
    const { key: old } = await makeKey({ name: 'rotating', other: '321' });
    await keyLoaded(old);

    const listHtml = await (await admin.request('/admin/keys')).text();
    const rotate = await post(admin, '/admin/keys/rotating/rotate', formEntries(listHtml, '/admin/keys/rotating/rotate'));
    const html = await rotate.text();
    expect(rotate.status, html).toBe(200);
    expect(rotate.headers.get('cache-control')).toMatch(/no-store/);
    const page = parsePage(html);
    expect(page.texts('h1')).toEqual(['A new secret for rotating']);
    const fresh = page.text(page.byId('issued-key')!).trim();
    expect(fresh).toMatch(/^ck_[0-9A-Za-z]{38}$/);
    expect(fresh).not.toBe(old);
    expect(secretsOn(html)).toEqual([fresh]);
    expect(page.text(page.all('main')[0]!)).toContain(`${old.slice(0, 11)}… keeps working until`);

    await keyLoaded(fresh);
    expect(await withKey(fresh)).toMatchObject({ status: 200, limit: '321' });
    expect(await withKey(old)).toMatchObject({ status: 200, limit: '321' });

    // The list names the previous secret as retiring.
    const after = parsePage(await (await admin.request('/admin/keys')).text());
    const row = after.all('tr').find((tr) => after.text(tr).includes('rotating'))!;
    expect(after.text(row)).toContain(`${fresh.slice(0, 11)}…`);
    expect(after.text(row)).toContain(`previous ${old.slice(0, 11)}… until`);

    // The same form posted again (a reload of the answer) changes nothing.
    const again = await post(admin, '/admin/keys/rotating/rotate', formEntries(listHtml, '/admin/keys/rotating/rotate'));
    expect(again.status).toBe(409);
    const againHtml = await again.text();
    expect(secretsOn(againHtml)).toEqual([]);
    expect(shownErrors(againHtml).fields['grace-rotating']).toContain('This key was rotated since the page was loaded');
    expect((await listKeys(stack.db.pool)).find((k) => k.name === 'rotating')!.prefix).toBe(fresh.slice(0, 11));
    expect(logLines.join('')).not.toMatch(KEY);
  });

  it('sends bad grace hours back (400) with the message, the hours typed kept', async () => {
    await makeKey({ name: 'grace-check' });
    const res = await fillAndPost(admin, '/admin/keys', '/admin/keys/grace-check/rotate', { grace_hours: '1000' });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(shownErrors(html).fields).toEqual({ 'grace-grace-check': 'The grace period must be a number of hours from 0 to 720, not "1000".' });
    expect(shownValue(html, 'field-grace-grace-check')).toBe('1000');
    expect(secretsOn(html)).toEqual([]);
    expect((await listKeys(stack.db.pool)).find((k) => k.name === 'grace-check')!.retiring).toEqual([]);
  });
});

describe('the usage chart', () => {
  it('charts each key\'s last 30 days as SVG with a title, a description and a table of the numbers', async () => {
    const { key } = await makeKey({ name: 'charted' });
    await keyLoaded(key);
    for (let i = 0; i < 3; i++) expect((await withKey(key)).status).toBe(200);
    await stack.service.usageRecorder.flush();
    // Three days ago: 40 answered and 10 refused, as an API process would have counted them.
    const { rows } = await stack.db.pool.query<{ id: string }>("SELECT id FROM auth.consumer_keys WHERE name = 'charted'");
    const keyId = rows[0]!.id;
    const earlier = utcDay(Date.now() - 3 * 86_400_000);
    await addUsage(stack.db.pool, newUsageBatchId(), [
      { keyId, day: earlier, column: 'search', count: 30 },
      { keyId, day: earlier, column: 'export', count: 10 },
      { keyId, day: earlier, column: 'refused', count: 10 },
    ]);

    const html = await (await admin.request('/admin/keys')).text();
    const page = parsePage(html);
    const figure = page.byId('usage-charted')!;
    const svg = page.all('svg', figure)[0]!;
    expect(page.attr(svg, 'role')).toBe('img');
    expect(page.attr(svg, 'aria-labelledby')).toBe('usage-charted-title usage-charted-desc');
    expect(page.text(page.byId('usage-charted-title')!)).toMatch(/^Requests per day to the key charted, \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}$/);
    expect(page.text(page.byId('usage-charted-desc')!)).toBe(`43 requests answered and 10 refused from ${utcDay(Date.now() - 29 * 86_400_000)} to ${utcDay(Date.now())} (UTC); the busiest day was ${earlier} with 50.`);
    // a bar for today (answered) and two stacked for three days ago; the scale's top is 50
    expect(page.all('rect', svg).map((r) => page.attr(r, 'class'))).toEqual(['usage-bar-answered', 'usage-bar-refused', 'usage-bar-answered']);
    expect(page.all('rect', svg).map((r) => page.attr(r, 'height'))).toEqual(['80', '20', '6']);
    expect(page.text(figure)).toContain('Answered: 43');
    expect(page.text(figure)).toContain('Refused (429): 10');

    const table = page.all('table', figure)[0]!;
    const rowsShown = page.all('tr', table).slice(1).map((tr) => page.all('th', tr).concat(page.all('td', tr)).map((c) => page.text(c)));
    expect(rowsShown).toHaveLength(30);
    expect(rowsShown.find((r) => r[0] === earlier)).toEqual([earlier, '30', '0', '10', '0', '10']);
    expect(rowsShown.at(-1)).toEqual([utcDay(Date.now()), '0', '3', '0', '0', '0']);
    // last use is recorded for the key
    const row = page.all('tr').find((tr) => page.text(tr).startsWith('charted'))!;
    const lastUsed = page.text(page.all('td', row)[8]!);
    expect(lastUsed).toMatch(/^\d{1,2} \w{3} \d{4}, \d{2}:\d{2}$/);
  });
});
