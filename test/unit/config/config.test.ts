import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, maskUrlCredentials } from '../../../src/config/config.ts';

describe('configuration from the environment', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c.databaseUrl).toBeUndefined();
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(3000);
    expect(c.publicUrl).toBe('http://127.0.0.1:3000');
    expect(c.siteUrl).toBe(c.publicUrl);
    expect(c.meili).toBeUndefined();
    expect(c.trustProxy).toBe(false);
    expect(c.rateLimits).toEqual({ searchPerMinute: 30, otherPerMinute: 60, pagesPerMinute: 300, exportPerMinute: 6, changesPerMinute: 120, signedIn: { searchPerMinute: 30, otherPerMinute: 60 } });
    expect(c.changesRetentionHours).toBe(7 * 24);
    expect(c.cache.maxAgeSeconds).toBe(300);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('derives SITE_URL from PUBLIC_URL and strips trailing slashes', () => {
    const c = loadConfig({ PUBLIC_URL: 'https://catalog.example.com/', MEILI_URL: 'http://127.0.0.1:7700', MEILI_KEY: 'k' });
    expect(c.publicUrl).toBe('https://catalog.example.com');
    expect(c.siteUrl).toBe('https://catalog.example.com');
    expect(c.meili).toEqual({ url: 'http://127.0.0.1:7700', key: 'k', index: 'products' });
  });

  it('reads TRUST_PROXY as a flag, a hop count or a list of addresses', () => {
    for (const yes of ['true', 'TRUE', 'yes', 'on']) expect(loadConfig({ TRUST_PROXY: yes }).trustProxy).toBe(true);
    for (const no of ['false', 'no', 'off', '', '0']) expect(loadConfig({ TRUST_PROXY: no }).trustProxy).toBe(false);
    // A number is a hop count, 1 among them (never the flag true).
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '1000' }).trustProxy).toBe(1000);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(loadConfig({ TRUST_PROXY: 'loopback,fd00::/8,192.168.0.0/255.255.0.0' }).trustProxy).toEqual(['loopback', 'fd00::/8', '192.168.0.0/255.255.0.0']);
  });

  it('reads IPV6_CLIENT_PREFIX, a /64 unless set', () => {
    expect(loadConfig({}).ipv6ClientPrefix).toBe(64);
    expect(loadConfig({ IPV6_CLIENT_PREFIX: '48' }).ipv6ClientPrefix).toBe(48);
    expect(loadConfig({ IPV6_CLIENT_PREFIX: '128' }).ipv6ClientPrefix).toBe(128);
  });

  it('accepts origins and * in MCP_ALLOWED_ORIGINS', () => {
    expect(loadConfig({ MCP_ALLOWED_ORIGINS: 'https://a.example, http://localhost:5173/,*' }).mcpAllowedOrigins).toEqual([
      'https://a.example',
      'http://localhost:5173',
      '*',
    ]);
  });

  it('reads the export and change-feed budgets and how long changes are kept', () => {
    const c = loadConfig({ RATE_LIMIT_EXPORT_PER_MIN: '2', RATE_LIMIT_CHANGES_PER_MIN: '300', CHANGES_RETENTION_DAYS: '30' });
    expect(c.rateLimits).toMatchObject({ exportPerMinute: 2, changesPerMinute: 300 });
    expect(c.changesRetentionHours).toBe(30 * 24);
  });

  it("gives a signed-in maker's grant an address's budgets unless told otherwise", () => {
    expect(loadConfig({ RATE_LIMIT_SEARCH_PER_MIN: '40', RATE_LIMIT_OTHER_PER_MIN: '70' }).rateLimits.signedIn).toEqual({ searchPerMinute: 40, otherPerMinute: 70 });
    expect(loadConfig({ RATE_LIMIT_SIGNED_IN_SEARCH_PER_MIN: '300', RATE_LIMIT_SIGNED_IN_OTHER_PER_MIN: '600' }).rateLimits.signedIn).toEqual({ searchPerMinute: 300, otherPerMinute: 600 });
    expect(() => loadConfig({ RATE_LIMIT_SIGNED_IN_OTHER_PER_MIN: '0' })).toThrow(/RATE_LIMIT_SIGNED_IN_OTHER_PER_MIN: must be at least 1/);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' }).port).toBe(3000);
  });

  it.each([
    ['PORT', 'abc', 'PORT: must be a whole number'],
    ['PORT', '70000', 'PORT: must be at most 65535'],
    ['DATABASE_URL', 'mysql://x', 'DATABASE_URL: must be a postgres:// or postgresql:// URL'],
    ['PUBLIC_URL', 'ftp://x', 'PUBLIC_URL: must be an http(s) URL'],
    ['REDIS_URL', 'http://x', 'REDIS_URL: must be a redis:// or rediss:// URL'],
    ['TRUST_PROXY', 'maybe', 'TRUST_PROXY: "maybe" is not an address or CIDR range: must be false, true, a hop count'],
    ['TRUST_PROXY', '1001', 'TRUST_PROXY: a hop count must be at most 1000'],
    ['TRUST_PROXY', '10.0.0.0/33', 'TRUST_PROXY: "10.0.0.0/33" is not an address or CIDR range'],
    ['TRUST_PROXY', '127.0.0.1,,10.0.0.1', 'TRUST_PROXY: "" is not an address or CIDR range'],
    ['TRUST_PROXY', '1.2.3.300', 'TRUST_PROXY: "1.2.3.300" is not an address'],
    ['IPV6_CLIENT_PREFIX', '0', 'IPV6_CLIENT_PREFIX: must be at least 1'],
    ['IPV6_CLIENT_PREFIX', '129', 'IPV6_CLIENT_PREFIX: must be at most 128'],
    ['RATE_LIMIT_SEARCH_PER_MIN', '0', 'RATE_LIMIT_SEARCH_PER_MIN: must be at least 1'],
    ['CACHE_MAX_AGE_SECONDS', '301', 'CACHE_MAX_AGE_SECONDS: must be at most 300'],
    ['RATE_LIMIT_EXPORT_PER_MIN', '0', 'RATE_LIMIT_EXPORT_PER_MIN: must be at least 1'],
    ['RATE_LIMIT_CHANGES_PER_MIN', 'many', 'RATE_LIMIT_CHANGES_PER_MIN: must be a whole number'],
    ['CHANGES_RETENTION_DAYS', '6', 'CHANGES_RETENTION_DAYS: must be at least 7'],
    ['LOG_LEVEL', 'loud', 'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent'],
    ['MCP_ALLOWED_ORIGINS', 'not-an-origin', 'MCP_ALLOWED_ORIGINS: must be a comma-separated list of origins'],
    ['MCP_ALLOWED_ORIGINS', 'https://a.example/path', 'MCP_ALLOWED_ORIGINS: must be a comma-separated list of origins'],
    ['SMTP_URL', 'mail.example.com', 'SMTP_URL: must be an smtp:// or smtps:// URL'],
    ['FETCH_ALLOW_LOOPBACK', 'maybe', 'FETCH_ALLOW_LOOPBACK: must be true or false'],
    ['OAUTH_CLIENT_IDLE_DAYS', '0', 'OAUTH_CLIENT_IDLE_DAYS: must be at least 1'],
    ['DRAFT_CAP_PER_DAY', '0', 'DRAFT_CAP_PER_DAY: must be at least 1'],
    ['PREMIUM_PRICE', '29', 'PREMIUM_PRICE: must be an amount and an ISO 4217 currency code, e.g. "29.00 USD", "1500 JPY" or "5.250 KWD"'],
    ['PREMIUM_PRICE', '0.00 USD', 'PREMIUM_PRICE: must be more than zero'],
    ['PREMIUM_PRICE', '1500.5 JPY', 'PREMIUM_PRICE: JPY has no minor unit: give a whole amount, e.g. "1500 JPY"'],
    ['PREMIUM_PRICE', '1500.00 JPY', 'PREMIUM_PRICE: JPY has no minor unit'],
    ['PREMIUM_PRICE', '29.999 USD', 'PREMIUM_PRICE: USD has 2 decimals: give at most 2, e.g. "29.99 USD"'],
    ['PREMIUM_PRICE', '5.2501 KWD', 'PREMIUM_PRICE: KWD has 3 decimals: give at most 3'],
    ['PREMIUM_PRICE', '10 ABC', 'PREMIUM_PRICE: ABC is not an ISO 4217 currency code'],
    ['PREMIUM_PRICE', '1 XAU', 'PREMIUM_PRICE: XAU is not a currency a price can be paid in'],
    ['PREMIUM_PRICE', '2147483648 JPY', 'PREMIUM_PRICE: is too large: at most 2147483647 JPY'],
    ['SITE_BLOCKLIST', 'ok.example, not a host', 'SITE_BLOCKLIST: must be a comma-separated list of host names'],
    ['STRIPE_SECRET_KEY', 'pk_test_abc', 'STRIPE_SECRET_KEY: must be a Stripe secret key'],
  ])('rejects %s=%s with a line naming the variable', (name, value, message) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(message);
    expect((error as Error).message.split('\n')).toHaveLength(1);
  });

  it('reads the write side\'s settings', () => {
    const c = loadConfig({ PREMIUM_PRICE: '12.5 eur', SITE_BLOCKLIST: 'www.Spam.example, junk.example', DRAFT_CAP_PER_DAY: '3' });
    expect(c.payments.premiumPrice).toEqual({ amountMinor: 1250, currency: 'eur' });
    expect(c.makers).toEqual({ draftCapPerDay: 3, blocklist: ['spam.example', 'junk.example'] });
    expect(loadConfig({}).payments).toMatchObject({ premiumPrice: { amountMinor: 2900, currency: 'usd' }, stripe: undefined });
  });

  it.each([
    ['29.00 USD', { amountMinor: 2900, currency: 'usd' }],
    ['1500 JPY', { amountMinor: 1500, currency: 'jpy' }],
    ['5.250 KWD', { amountMinor: 5250, currency: 'kwd' }],
    ['5.25 kwd', { amountMinor: 5250, currency: 'kwd' }],
    ['JPY 1500', { amountMinor: 1500, currency: 'jpy' }],
    ['2147483647 JPY', { amountMinor: 2147483647, currency: 'jpy' }],
    ['990 ISK', { amountMinor: 990, currency: 'isk' }],
    ['1.2345 CLF', { amountMinor: 12345, currency: 'clf' }],
  ])('reads PREMIUM_PRICE=%s in the currency\'s ISO 4217 minor unit', (value, price) => {
    expect(loadConfig({ PREMIUM_PRICE: value }).payments.premiumPrice).toEqual(price);
  });

  it.each([
    ['5.255 KWD', 'PREMIUM_PRICE: Stripe charges KWD only in steps of 0.010 KWD, so it cannot charge 5.255 KWD: use 5.250 KWD or 5.260 KWD (STRIPE_SECRET_KEY is set)'],
    ['1000.50 MGA', 'PREMIUM_PRICE: Stripe charges MGA only in steps of 1.00 MGA, so it cannot charge 1000.50 MGA: use 1000.00 MGA or 1001.00 MGA (STRIPE_SECRET_KEY is set)'],
    ['0.005 BHD', 'PREMIUM_PRICE: Stripe charges BHD only in steps of 0.010 BHD, so it cannot charge 0.005 BHD: use 0.010 BHD (STRIPE_SECRET_KEY is set)'],
  ])('with Stripe, refuses PREMIUM_PRICE=%s, which Stripe cannot charge exactly, naming the variable', (value, message) => {
    expect(() => loadConfig({ PREMIUM_PRICE: value, STRIPE_SECRET_KEY: 'sk_test_abc' })).toThrow(expect.objectContaining({ name: 'ConfigError', message }));
    // The built-in checkout charges nothing, so any amount in the currency's decimals will do.
    expect(() => loadConfig({ PREMIUM_PRICE: value })).not.toThrow();
  });

  it('with Stripe, takes the prices Stripe can charge, zero-decimal, three-decimal and its special cases alike', () => {
    for (const value of ['1500 JPY', '5.250 KWD', '990 ISK', '12.34 HUF', '99.99 TWD', '5000 UGX', '1000 MGA', '29.00 USD']) {
      expect(() => loadConfig({ PREMIUM_PRICE: value, STRIPE_SECRET_KEY: 'sk_test_abc' }), value).not.toThrow();
    }
  });

  it('reports every bad variable, one line each', () => {
    expect(() => loadConfig({ PORT: 'x', LOG_LEVEL: 'loud' })).toThrow(/PORT: .*\nLOG_LEVEL: /);
  });
});

describe('a URL as a message shows it', () => {
  it.each([
    ['postgres://u:p@h/db', 'postgres://***@h/db'],
    // A password that was not percent-encoded may hold / ? # or @: all of it is hidden.
    ['postgres://u:p/ss@h/db', 'postgres://***@h/db'],
    ['postgres://u:p#ss@h/db', 'postgres://***@h/db'],
    ['postgres://u:p?ss@h/db', 'postgres://***@h/db'],
    ['postgres://u:p@ss@h/db', 'postgres://***@h/db'],
    ['u:p@h/db', '***@h/db'],
    ['postgres://h/db?password=secret&sslmode=require', 'postgres://h/db?password=***&sslmode=require'],
    ['postgres://h/db?sslmode=require&sslpassword=secret', 'postgres://h/db?sslmode=require&sslpassword=***'],
    ['redis://h:6379/0', 'redis://h:6379/0'],
  ])('%s → %s', (url, shown) => {
    expect(maskUrlCredentials(url)).toBe(shown);
    expect(maskUrlCredentials(url)).not.toMatch(/secret|p\/ss|p#ss|p\?ss|p@ss|u:p/);
  });
});
