import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.ts';

/** The open-connection settings (docs/connections.md): defaults, bounds, and the one rule between two of them. */
describe('open-connection settings', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig({}).connections).toEqual({
      headersTimeoutSeconds: 10,
      requestTimeoutSeconds: 30,
      maxConnections: undefined,
      longPolls: { perAddress: 20, perKey: 20, total: 5000 },
      exports: { perAddress: 3, perKey: 3, total: 32 },
    });
  });

  it('reads every setting', () => {
    const c = loadConfig({
      HEADERS_TIMEOUT_SECONDS: '5',
      REQUEST_TIMEOUT_SECONDS: '5',
      MAX_CONNECTIONS: '20000',
      LONG_POLLS_PER_ADDRESS: '2',
      LONG_POLLS_PER_KEY: '50',
      LONG_POLLS_MAX: '100',
      EXPORTS_PER_ADDRESS: '1',
      EXPORTS_MAX: '4',
    });
    expect(c.connections).toEqual({
      headersTimeoutSeconds: 5,
      requestTimeoutSeconds: 5,
      maxConnections: 20000,
      longPolls: { perAddress: 2, perKey: 50, total: 100 },
      exports: { perAddress: 1, perKey: 1, total: 4 },
    });
  });

  it.each([
    ['HEADERS_TIMEOUT_SECONDS', '1', true],
    ['HEADERS_TIMEOUT_SECONDS', '0', 'HEADERS_TIMEOUT_SECONDS: must be at least 1'],
    ['HEADERS_TIMEOUT_SECONDS', '301', 'HEADERS_TIMEOUT_SECONDS: must be at most 300'],
    ['HEADERS_TIMEOUT_SECONDS', '2.5', 'HEADERS_TIMEOUT_SECONDS: must be a whole number from 1 to 300'],
    ['REQUEST_TIMEOUT_SECONDS', '3600', true],
    ['REQUEST_TIMEOUT_SECONDS', '3601', 'REQUEST_TIMEOUT_SECONDS: must be at most 3600'],
    ['REQUEST_TIMEOUT_SECONDS', '9', 'HEADERS_TIMEOUT_SECONDS: must be at most REQUEST_TIMEOUT_SECONDS (9)'],
    ['MAX_CONNECTIONS', '1', true],
    ['MAX_CONNECTIONS', '0', 'MAX_CONNECTIONS: must be at least 1'],
    ['MAX_CONNECTIONS', 'lots', 'MAX_CONNECTIONS: must be a whole number from 1 to 10000000'],
    ['LONG_POLLS_PER_ADDRESS', '1', true],
    ['LONG_POLLS_PER_ADDRESS', '0', 'LONG_POLLS_PER_ADDRESS: must be at least 1'],
    ['LONG_POLLS_PER_KEY', '1000001', 'LONG_POLLS_PER_KEY: must be at most 1000000'],
    ['LONG_POLLS_MAX', '0', 'LONG_POLLS_MAX: must be at least 1'],
    ['LONG_POLLS_MAX', '1000000', true],
    ['EXPORTS_PER_ADDRESS', '0', 'EXPORTS_PER_ADDRESS: must be at least 1'],
    ['EXPORTS_PER_ADDRESS', '10000', true],
    ['EXPORTS_MAX', '100001', 'EXPORTS_MAX: must be at most 100000'],
  ])('%s=%s: %s', (name, value, outcome) => {
    if (outcome === true) {
      expect(() => loadConfig({ [name]: value })).not.toThrow();
      return;
    }
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(outcome);
  });

  it('lets the header deadline equal the request deadline', () => {
    expect(loadConfig({ HEADERS_TIMEOUT_SECONDS: '30', REQUEST_TIMEOUT_SECONDS: '30' }).connections.headersTimeoutSeconds).toBe(30);
  });
});
