import { describe, expect, it } from 'vitest';
import { parseWebsiteInput, websiteIdentity } from '../../../src/sites/website-identity.ts';

describe('websiteIdentity', () => {
  it.each([
    ['https://example.com', 'example.com'],
    ['https://example.com/', 'example.com'],
    ['http://example.com', 'example.com'],
    ['HTTPS://EXAMPLE.COM/', 'example.com'],
    ['https://www.example.com/', 'example.com'],
    ['https://WWW.Example.Com', 'example.com'],
    ['https://example.com.', 'example.com'],
    ['https://example.com:443/', 'example.com'],
    ['http://example.com:80/', 'example.com'],
    ['http://example.com:443/', 'example.com'],
    ['https://example.com:8443/', 'example.com:8443'],
    ['https://example.com/#pricing', 'example.com'],
    ['https://example.com/app/', 'example.com/app'],
    ['https://example.com/app//', 'example.com/app'],
    ['https://example.com/App', 'example.com/App'],
    ['https://example.com/?utm_source=x&utm_medium=y&UTM_Campaign=z', 'example.com'],
    ['https://example.com/?ref=producthunt', 'example.com'],
    ['https://example.com/?fbclid=1&gclid=2&dclid=3&msclkid=4&mc_cid=5&mc_eid=6&ref_src=7&igshid=8&_ga=9&yclid=10', 'example.com'],
    ['https://example.com/p?b=2&a=1', 'example.com/p?a=1&b=2'],
    ['https://example.com/p?a=2&a=1', 'example.com/p?a=1&a=2'],
    ['https://example.com/p?b=2&utm_source=x&a=1#top', 'example.com/p?a=1&b=2'],
    ['https://bücher.example/', 'xn--bcher-kva.example'],
    ['https://user:pass@example.com/', 'example.com'],
    ['https://www.com/', 'www.com'],
    ['  https://example.com/  ', 'example.com'],
  ])('%s → %s', (input, identity) => {
    expect(websiteIdentity(input)).toBe(identity);
  });

  it('makes the usual spellings of one site equal', () => {
    const spellings = ['http://www.example.com', 'https://example.com/', 'https://Example.com/?utm_source=news#hero', 'https://example.com:443'];
    expect(new Set(spellings.map(websiteIdentity)).size).toBe(1);
  });

  it('keeps different pages and sites apart', () => {
    expect(websiteIdentity('https://example.com/a')).not.toBe(websiteIdentity('https://example.com/b'));
    expect(websiteIdentity('https://example.com/app')).not.toBe(websiteIdentity('https://example.com/App'));
    expect(websiteIdentity('https://app.example.com')).not.toBe(websiteIdentity('https://example.com'));
    expect(websiteIdentity('https://example.com/?page=2')).not.toBe(websiteIdentity('https://example.com/'));
  });

  it('throws on what is not an http(s) URL', () => {
    expect(() => websiteIdentity('example.com')).toThrow(TypeError);
    expect(() => websiteIdentity('ftp://example.com/')).toThrow(TypeError);
    expect(() => websiteIdentity('javascript:alert(1)')).toThrow(TypeError);
  });
});

describe('parseWebsiteInput', () => {
  it.each([
    ['https://example.com', 'https://example.com/'],
    ['  https://example.com/app  ', 'https://example.com/app'],
    ['example.com', 'https://example.com/'],
    ['www.example.com/pricing', 'https://www.example.com/pricing'],
    ['//example.com/x', 'https://example.com/x'],
    ['http://example.com', 'http://example.com/'],
    ['HTTP://Example.COM/Path', 'http://example.com/Path'],
    ['example.com:8080/app', 'https://example.com:8080/app'],
    ['https://example.com/?utm_source=x&plan=pro#pricing', 'https://example.com/?plan=pro'],
    ['https://example.com/?a=1%202', 'https://example.com/?a=1%202'],
    ['https://example.com./', 'https://example.com/'],
    ['https://bücher.example/', 'https://xn--bcher-kva.example/'],
    ['https://my-app.co.uk', 'https://my-app.co.uk/'],
  ])('accepts %j as %s', (input, url) => {
    expect(parseWebsiteInput(input)).toEqual({ ok: true, url });
  });

  it.each([
    ['', /Enter your website/],
    ['   ', /Enter your website/],
    ['javascript:alert(1)', /http:\/\/ or https:\/\//],
    ['JavaScript://example.com/%0Aalert(1)', /http:\/\/ or https:\/\//],
    ['data:text/html,<b>x</b>', /http:\/\/ or https:\/\//],
    ['ftp://example.com/', /http:\/\/ or https:\/\//],
    ['file:///etc/passwd', /http:\/\/ or https:\/\//],
    ['mailto:me@example.com', /http:\/\/ or https:\/\//],
    ['https://user:pass@example.com/', /user name or password/],
    ['https://user@example.com/', /user name or password/],
    ['http://127.0.0.1/', /not an IP address/],
    ['127.0.0.1', /not an IP address/],
    ['http://2130706433/', /not an IP address/],
    ['http://0177.0.0.1/', /not an IP address/],
    ['http://0x7f.1/', /not an IP address/],
    ['http://127.1/', /not an IP address/],
    ['http://8.8.8.8/', /not an IP address/],
    ['http://[::1]/', /not an IP address/],
    ['http://[::ffff:127.0.0.1]/', /not an IP address/],
    ['http://[2001:4860:4860::8888]/', /not an IP address/],
    ['http://localhost/', /full domain name/],
    ['localhost:3000', /full domain name/],
    ['http://app.localhost/', /private network/],
    ['http://printer.local/', /private network/],
    ['http://metadata.google.internal/', /private network/],
    ['http://nas.home.arpa/', /private network/],
    ['http://intranet/', /full domain name/],
    ['https://exa_mple.com/', /not valid/],
    ['https://-example.com/', /not valid/],
    ['https://example-.com/', /not valid/],
    ['https://example..com/', /not valid/],
    ['https://exa mple.com/', /spaces/],
    ['https://[bad/', /not a valid web address/],
    ['http://999.1.1.1/', /not a valid web address/],
  ])('refuses %j', (input, message) => {
    const result = parseWebsiteInput(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(message);
  });

  it('accepts 2048 characters and refuses 2049', () => {
    const base = 'https://example.com/';
    const exact = base + 'a'.repeat(2048 - base.length);
    expect(parseWebsiteInput(exact)).toEqual({ ok: true, url: exact });
    const over = parseWebsiteInput(exact + 'a');
    expect(over.ok).toBe(false);
    if (!over.ok) expect(over.message).toMatch(/at most 2048/);
  });

  it('refuses a host name over 253 characters and a label over 63', () => {
    const label63 = 'a'.repeat(63);
    expect(parseWebsiteInput(`https://${label63}.com/`).ok).toBe(true);
    expect(parseWebsiteInput(`https://${label63}a.com/`).ok).toBe(false);
    const long = `${[label63, label63, label63, 'a'.repeat(58)].join('.')}.com`; // 254 characters
    expect(long.length).toBe(254);
    expect(parseWebsiteInput(`https://${long}/`).ok).toBe(false);
    expect(parseWebsiteInput(`https://${long.slice(1)}/`).ok).toBe(true);
  });

  it('gives the same identity to what it accepts as the usual spellings', () => {
    const parsed = parseWebsiteInput('www.example.com/?utm_source=x');
    expect(parsed.ok && websiteIdentity(parsed.url)).toBe(websiteIdentity('https://example.com'));
  });
});
