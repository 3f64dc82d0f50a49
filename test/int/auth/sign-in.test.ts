import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_IN_LIMITS } from '../../../src/auth/accounts.ts';
import { SESSION_COOKIE, SESSION_SECONDS } from '../../../src/auth/sessions.ts';
import { SIGN_IN_LINK_SECONDS } from '../../../src/auth/sign-in-links.ts';
import { CSRF_COOKIE } from '../../../src/web/maker-session.ts';
import { parsePage } from '../../helpers/html.ts';
import { Browser } from '../../helpers/oauth.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

/**
 * Signing in by e-mailed link, as a maker (and an attacker) sees it: the pages, the link, the
 * cookies, the limits, and where the mail goes (the service log without SMTP_URL, an SMTP server
 * with it). Requests carry X-Forwarded-For (TRUST_PROXY is on), so each test asks from addresses
 * of its own and the per-IP budget of one test does not spill into the next.
 */
let stack: TestStack;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  stack = await startTestStack({
    env: { TRUST_PROXY: 'true', RATE_LIMIT_OTHER_PER_MIN: '100000' },
    logger: pino({ level: 'info' }, logStream),
  });
});

afterAll(async () => {
  await stack?.stop();
});

let nextIp = 1;
/** A documentation address (RFC 5737) of its own for each caller; only ever a header value. */
function freshIp(): string {
  const n = nextIp++;
  return `203.0.113.${n}`;
}

const hash = (token: string) => createHash('sha256').update(token).digest();

interface Caller {
  browser: Browser;
  ip: string;
}

function caller(s: TestStack = stack, ip = freshIp()): Caller {
  return { browser: new Browser(s.baseUrl), ip };
}

function get(c: Caller, path: string) {
  return c.browser.request(path, { headers: { 'x-forwarded-for': c.ip } });
}

function post(c: Caller, path: string, form: Record<string, string>) {
  return c.browser.request(path, { form, headers: { 'x-forwarded-for': c.ip } });
}

async function csrfFrom(c: Caller, path = '/signin'): Promise<string> {
  return Browser.csrfOf(await (await get(c, path)).text());
}

/** Asks for a sign-in link from the sign-in page's form. */
async function askForLink(c: Caller, email: string, returnTo?: string): Promise<Response> {
  const _csrf = await csrfFrom(c);
  return post(c, '/signin', { email, _csrf, ...(returnTo !== undefined && { return_to: returnTo }) });
}

/** The path of the sign-in link in the newest mail to `email` (the link names PUBLIC_URL's host). */
function linkPathFor(email: string, mails = stack.mails): string {
  const mail = [...mails].reverse().find((m) => m.to === email);
  if (!mail) throw new Error(`no mail to ${email}`);
  return new URL(/https?:\/\/\S+\/signin\/link\/\S+/.exec(mail.text)![0]).pathname;
}

function tokenOf(linkPath: string): string {
  return linkPath.split('/').pop()!;
}

/** Opens a link and presses Sign in on the confirmation page. */
async function useLink(c: Caller, linkPath: string): Promise<Response> {
  const confirm = await get(c, linkPath);
  const html = await confirm.text();
  const _csrf = Browser.csrfOf(html);
  return post(c, linkPath, { _csrf });
}

async function signInAs(email: string, opts: { returnTo?: string; c?: Caller } = {}): Promise<{ c: Caller; done: Response }> {
  const c = opts.c ?? caller();
  expect((await askForLink(c, email, opts.returnTo)).status).toBe(200);
  const done = await useLink(c, linkPathFor(email));
  return { c, done };
}

function cookieAttributes(res: Response, name: string): string[] | undefined {
  const line = res.headers.getSetCookie().find((l) => l.startsWith(`${name}=`));
  return line?.split(';').slice(1).map((a) => a.trim().toLowerCase());
}

describe('asking for a link', () => {
  it('answers the same for an address with an account and one without, and makes no account', async () => {
    await signInAs('known@example.com');
    const known = await askForLink(caller(), 'known@example.com');
    const unknown = await askForLink(caller(), 'unknown@example.com');
    expect(unknown.status).toBe(known.status);
    expect(unknown.headers.get('content-type')).toBe(known.headers.get('content-type'));
    const knownPage = (await known.text()).replaceAll('known@example.com', 'ADDRESS');
    const unknownPage = (await unknown.text()).replaceAll('unknown@example.com', 'ADDRESS');
    expect(unknownPage).toBe(knownPage);
    expect(parsePage(knownPage).texts('h1')).toEqual(['Check your inbox']);
    // Both get a link; the new address gets an account only when its link is used.
    expect(stack.mails.filter((m) => m.to === 'unknown@example.com')).toHaveLength(1);
    const { rows } = await stack.db.pool.query('SELECT 1 FROM catalog.makers WHERE email = $1', ['unknown@example.com']);
    expect(rows).toEqual([]);
  });

  it('refuses an address that is not one, keeping what was typed', async () => {
    const c = caller();
    const mailsBefore = stack.mails.length;
    const res = await askForLink(c, 'not an address');
    expect(res.status).toBe(400);
    const page = parsePage(await res.text());
    const email = page.all('input').find((i) => page.attr(i, 'name') === 'email')!;
    expect(page.attr(email, 'value')).toBe('not an address');
    expect(page.texts('li').join(' ')).toMatch(/e-mail address/i);
    expect(stack.mails.length).toBe(mailsBefore);
  });
});

describe('the link', () => {
  it('is stored only as its hash', async () => {
    await askForLink(caller(), 'hashed-link@example.com');
    const token = tokenOf(linkPathFor('hashed-link@example.com'));
    const { rows } = await stack.db.pool.query<{ row: string }>('SELECT row_to_json(l)::text AS row FROM catalog.sign_in_links l WHERE email = $1', ['hashed-link@example.com']);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.row).not.toContain(token);
    const byHash = await stack.db.pool.query('SELECT email FROM catalog.sign_in_links WHERE token_hash = $1', [hash(token)]);
    expect(byHash.rows).toEqual([{ email: 'hashed-link@example.com' }]);
  });

  it('works once: opening it again, or pressing Sign in again, says it was used', async () => {
    const { c, done } = await signInAs('once@example.com');
    expect(done.status).toBe(303);
    const linkPath = linkPathFor('once@example.com');

    const other = caller();
    const again = await get(other, linkPath);
    expect(again.status).toBe(410);
    const html = await again.text();
    expect(html).toContain('already been used');
    const replay = await post(other, linkPath, { _csrf: Browser.csrfOf(html) });
    expect(replay.status).toBe(410);
    expect(replay.headers.getSetCookie().some((l) => l.startsWith(`${SESSION_COOKIE}=`))).toBe(false);
    // The first sign-in stands.
    expect((await get(c, '/settings/apps')).status).toBe(200);
  });

  it(`lasts ${SIGN_IN_LINK_SECONDS / 60} minutes: valid a moment before, refused a moment after`, async () => {
    await askForLink(caller(), 'expiry@example.com');
    const linkPath = linkPathFor('expiry@example.com');
    const token = hash(tokenOf(linkPath));
    const { rows } = await stack.db.pool.query<{ seconds: number }>('SELECT extract(epoch FROM expires_at - created_at)::int AS seconds FROM catalog.sign_in_links WHERE token_hash = $1', [token]);
    expect(rows[0]!.seconds).toBe(15 * 60);

    // As if asked for 14 minutes 50 seconds ago: still valid.
    const age = (seconds: number) =>
      stack.db.pool.query(
        `UPDATE catalog.sign_in_links SET created_at = now() - make_interval(secs => $2), expires_at = now() - make_interval(secs => $2) + make_interval(secs => $3) WHERE token_hash = $1`,
        [token, seconds, SIGN_IN_LINK_SECONDS],
      );
    await age(SIGN_IN_LINK_SECONDS - 10);
    const c = caller();
    const confirm = await get(c, linkPath);
    expect(confirm.status).toBe(200);
    const _csrf = Browser.csrfOf(await confirm.text());

    // 15 minutes and a second: expired, also for the confirmation page opened before.
    await age(SIGN_IN_LINK_SECONDS + 1);
    const late = await post(c, linkPath, { _csrf });
    expect(late.status).toBe(410);
    expect(await late.text()).toContain('expired');
    const reopened = await get(caller(), linkPath);
    expect(reopened.status).toBe(410);
    expect(await reopened.text()).toContain('expired');
  });

  it('that is not one says so', async () => {
    const res = await get(caller(), '/signin/link/not-a-real-token');
    expect(res.status).toBe(410);
    expect(await res.text()).toContain('not valid');
  });
});

describe('return_to', () => {
  it('keeps a local path and drops anything that would leave the site', async () => {
    const kept = await signInAs('return-ok@example.com', { returnTo: '/settings/apps?from=mail' });
    expect(kept.done.headers.get('location')).toBe('/settings/apps?from=mail');

    const dropped = ['//evil.example', 'https://evil.example', '/\\evil.example', '/\\/evil.example', 'javascript:alert(1)', 'evil.example', '/ //evil.example', `/${'a'.repeat(2001)}`];
    for (const [i, returnTo] of dropped.entries()) {
      // The sign-in page does not carry it on...
      const c = caller();
      const form = parsePage(await (await get(c, `/signin?return_to=${encodeURIComponent(returnTo)}`)).text());
      expect(form.all('input').filter((input) => form.attr(input, 'name') === 'return_to'), returnTo).toEqual([]);
      // ...and a form posted with it anyway signs in to the default page.
      const { done } = await signInAs(`return-${i}@example.com`, { returnTo, c });
      expect(done.headers.get('location'), returnTo).toBe('/dashboard');
    }
  });
});

describe('limits on asking for links', () => {
  it(`allows ${SIGN_IN_LIMITS.perIpPerHour} asks from one network in an hour and refuses the next with 429 and a clear message`, async () => {
    const ip = freshIp();
    for (let i = 0; i < SIGN_IN_LIMITS.perIpPerHour; i++) {
      const res = await askForLink(caller(stack, ip), `per-ip-${i}@example.com`);
      expect(res.status, `ask ${i + 1}`).toBe(200);
    }
    const mailsBefore = stack.mails.length;
    const refused = await askForLink(caller(stack, ip), 'per-ip-last@example.com');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const page = parsePage(await refused.text());
    expect(page.texts('p').join(' ') + page.texts('li').join(' ')).toMatch(/Too many sign-in links were asked for from your network recently\. .*try again in \d+ minutes?\./);
    expect(stack.mails.length).toBe(mailsBefore);
    // Another network is not affected.
    expect((await askForLink(caller(), 'per-ip-last@example.com')).status).toBe(200);
  });

  it(`allows ${SIGN_IN_LIMITS.perAddressPerHour} asks for one e-mail address in an hour and refuses the next, whatever the network or letter case`, async () => {
    for (let i = 0; i < SIGN_IN_LIMITS.perAddressPerHour; i++) {
      const res = await askForLink(caller(), i % 2 ? 'Per-Address@Example.com' : 'per-address@example.com');
      expect(res.status, `ask ${i + 1}`).toBe(200);
    }
    const mailsBefore = stack.mails.length;
    for (const email of ['per-address@example.com', 'PER-ADDRESS@EXAMPLE.COM']) {
      const refused = await askForLink(caller(), email);
      expect(refused.status, email).toBe(429);
      const text = parsePage(await refused.text()).texts('li').join(' ');
      expect(text).toMatch(/Too many sign-in links were asked for for this address recently\. Use the latest link you received/);
    }
    expect(stack.mails.length).toBe(mailsBefore);
  });
});

describe('the session', () => {
  it('cookies are HttpOnly, SameSite=Lax, on the whole site, and not Secure on an http PUBLIC_URL', async () => {
    const c = caller();
    const form = await get(c, '/signin');
    expect(cookieAttributes(form, CSRF_COOKIE)).toEqual(expect.arrayContaining(['path=/', 'httponly', 'samesite=lax']));
    expect(cookieAttributes(form, CSRF_COOKIE)).not.toContain('secure');
    await form.text();
    const { done } = await signInAs('cookie@example.com', { c });
    const attributes = cookieAttributes(done, SESSION_COOKIE)!;
    expect(attributes).toEqual(expect.arrayContaining(['path=/', 'httponly', 'samesite=lax', `max-age=${SESSION_SECONDS}`]));
    expect(attributes).not.toContain('secure');
    expect(attributes.some((a) => a.startsWith('domain='))).toBe(false);
  });

  it('sign-out deletes the session on the server: the old cookie no longer signs in', async () => {
    const { c } = await signInAs('signout@example.com');
    const cookie = c.browser.jar.get(SESSION_COOKIE)!;
    const apps = await get(c, '/settings/apps');
    expect(apps.status).toBe(200);
    const _csrf = Browser.csrfOf(await apps.text());

    // Without the form's token, nothing happens.
    const forged = await post(c, '/signout', {});
    expect(forged.status).toBe(403);
    expect((await get(c, '/settings/apps')).status).toBe(200);

    const out = await post(c, '/signout', { _csrf });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/');
    expect(c.browser.jar.get(SESSION_COOKIE)).toBeUndefined();
    const { rows } = await stack.db.pool.query('SELECT 1 FROM catalog.sessions WHERE token_hash = $1', [hash(cookie)]);
    expect(rows).toEqual([]);

    // Someone who kept a copy of the cookie is signed out too.
    const copy = caller();
    copy.browser.jar.set(SESSION_COOKIE, cookie);
    const after = await get(copy, '/settings/apps');
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/signin?return_to=%2Fsettings%2Fapps');
  });
});

describe('without SMTP_URL', () => {
  it('writes the mail to the service log, and the logged link signs in', async () => {
    const before = logLines.length;
    await askForLink(caller(), 'logged@example.com');
    const line = logLines.slice(before).find((l) => (l.mail as { to?: string } | undefined)?.to === 'logged@example.com');
    expect(line).toBeDefined();
    expect(line!.msg).toBe('e-mail (SMTP_URL is not set, so it is logged instead of sent)');
    expect(line!.level).toBe(30);
    const text = (line!.mail as { text: string }).text;
    const linkPath = new URL(/https?:\/\/\S+\/signin\/link\/\S+/.exec(text)![0]).pathname;
    expect(linkPath).toBe(linkPathFor('logged@example.com'));
    const done = await useLink(caller(), linkPath);
    expect(done.status).toBe(303);
  });
});

describe('with PUBLIC_URL on https and SMTP_URL set', () => {
  let httpsStack: TestStack;
  let smtp: SMTPServer;
  const received: { from: string; to: string[]; raw: string }[] = [];
  let refuseMail = false;

  beforeAll(async () => {
    smtp = new SMTPServer({
      // Plain SMTP on loopback; the service upgrades to TLS only when offered.
      disabledCommands: ['STARTTLS', 'AUTH'],
      authOptional: true,
      logger: false,
      onData(stream, session, done) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (refuseMail) return done(Object.assign(new Error('mailbox unavailable'), { responseCode: 451 }));
          received.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const { port } = smtp.server.address() as AddressInfo;
    httpsStack = await startTestStack({
      seed: false,
      env: { PUBLIC_URL: 'https://catalog.test', SMTP_URL: `smtp://127.0.0.1:${port}`, TRUST_PROXY: 'true', RATE_LIMIT_OTHER_PER_MIN: '100000' },
    });
  });

  afterAll(async () => {
    await httpsStack?.stop();
    await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  });

  /** The body of a received message, its quoted-printable soft breaks and escapes undone. */
  function bodyOf(raw: string): string {
    const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
    return /content-transfer-encoding: quoted-printable/i.test(raw)
      ? body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
      : body;
  }

  it('sends the mail through the SMTP server, and the link in it signs in with Secure cookies', async () => {
    const c = caller(httpsStack);
    const form = await get(c, '/signin');
    expect(cookieAttributes(form, CSRF_COOKIE)).toEqual(expect.arrayContaining(['secure', 'httponly', 'samesite=lax', 'path=/']));
    const _csrf = Browser.csrfOf(await form.text());
    const asked = await post(c, '/signin', { email: 'smtp-maker@example.com', _csrf });
    expect(asked.status).toBe(200);

    const message = received.find((m) => m.to.includes('smtp-maker@example.com'));
    expect(message).toBeDefined();
    expect(message!.from).toBe('no-reply@catalog.test');
    expect(message!.raw).toMatch(/^Subject: Your sign-in link for the product directory\r$/m);
    expect(message!.raw).toMatch(/^To: smtp-maker@example\.com\r$/m);
    const link = new URL(/https:\/\/catalog\.test\/signin\/link\/[A-Za-z0-9_-]+/.exec(bodyOf(message!.raw))![0]);

    const done = await useLink(c, link.pathname);
    expect(done.status).toBe(303);
    expect(cookieAttributes(done, SESSION_COOKIE)).toEqual(expect.arrayContaining(['secure', 'httponly', 'samesite=lax', 'path=/']));
    expect((await get(c, '/settings/apps')).status).toBe(200);
  });

  it('says so when the mail cannot be sent, keeping the address typed', async () => {
    refuseMail = true;
    try {
      const c = caller(httpsStack);
      const _csrf = await csrfFrom(c);
      const res = await post(c, '/signin', { email: 'smtp-down@example.com', _csrf });
      expect(res.status).toBe(503);
      const page = parsePage(await res.text());
      expect(page.texts('h1')).toEqual(['Sign in']);
      expect(page.texts('li').join(' ')).toMatch(/could not be sent/);
      const email = page.all('input').find((i) => page.attr(i, 'name') === 'email')!;
      expect(page.attr(email, 'value')).toBe('smtp-down@example.com');
    } finally {
      refuseMail = false;
    }
  });
});
