import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildServerJson, deriveRegistryName, publicUrlWarnings, REGISTRY_NAME, registryNameProblem, SERVER_SCHEMA_URL } from '../../../src/cli/mcp.ts';
import { SERVICE_DESCRIPTION, SERVICE_TITLE, serviceIcons } from '../../../src/contract/service-identity.ts';
import { SERVICE_VERSION } from '../../../src/util/version.ts';
import { SERVER_SCHEMA, serverJsonValidator } from '../../helpers/server-json-schema.ts';

/**
 * `catalog mcp server-json`'s document and the registry name it derives from PUBLIC_URL's host,
 * against the registry's rules, and its schema of 2025-12-11 where it is at hand
 * (test/helpers/server-json-schema.ts; test/int/cli/cli-mcp.test.ts runs the command).
 */
const validate = serverJsonValidator();
const nameOf = (url: string) => deriveRegistryName(url).name;

describe('the registry name', () => {
  it("is the reverse-DNS form of PUBLIC_URL's host, then /catalog, whatever the port, path or case", () => {
    expect(nameOf('https://catalog.example.com')).toBe('com.example.catalog/catalog');
    expect(nameOf('https://catalog.example.com:8443/')).toBe('com.example.catalog/catalog');
    expect(nameOf('https://Catalog.Example.COM/directory')).toBe('com.example.catalog/catalog');
    expect(nameOf('https://example.com')).toBe('com.example/catalog');
    expect(nameOf('https://catalog.example.com.')).toBe('com.example.catalog/catalog');
    // An internationalized name as DNS knows it (punycode), which is what a TXT record is on.
    expect(nameOf('https://bücher.example')).toBe('example.xn--bcher-kva/catalog');
  });

  it('is valid for a host a registry cannot verify: loopback, an IP address, one label, odd characters', () => {
    expect(nameOf('http://127.0.0.1:3000')).toBe('1.0.0.127/catalog');
    expect(nameOf('http://localhost:3000')).toBe('localhost/catalog');
    expect(nameOf('http://[::1]:3000')).toBe('0-0-0-0-0-0-0-1/catalog');
    expect(nameOf('http://[2001:db8::8:800:200c:417a]')).toBe('2001-db8-0-0-8-800-200c-417a/catalog');
    expect(nameOf('http://intranet:8080')).toBe('intranet/catalog');
    expect(nameOf('http://x')).toBe('host-x/catalog');
    expect(nameOf('https://my_host.example.com')).toBe('com.example.my-host/catalog');
    expect(nameOf('https://-edge-.example.com')).toBe('com.example.edge/catalog');
  });

  it('past 200 characters, is the name of a parent domain, and says so', () => {
    const labels = Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(97 + i)}${'x'.repeat(30)}`);
    const host = `${labels.join('.')}.example.com`;
    const derived = deriveRegistryName(`https://${host}`);
    expect(derived.name.length).toBeLessThanOrEqual(200);
    expect(derived.name).toMatch(REGISTRY_NAME);
    // The most specific labels go first: what is left is a suffix of the host, reversed.
    const namespace = derived.name.slice(0, -'/catalog'.length);
    expect(host.endsWith(namespace.split('.').reverse().join('.'))).toBe(true);
    expect(namespace.startsWith('com.example.')).toBe(true);
    expect(derived.warnings).toEqual([expect.stringContaining('parent domain')]);
    expect(deriveRegistryName('https://catalog.example.com').warnings).toEqual([]);
  });

  it('for any http(s) URL, is one the schema and the registry accept', () => {
    fc.assert(
      fc.property(fc.webUrl({ validSchemes: ['http', 'https'], authoritySettings: { withIPv4: true, withIPv6: true, withIPv4Extended: true, withPort: true }, withQueryParameters: true, withFragments: true }), (url) => {
        const name = nameOf(url);
        expect(registryNameProblem(name), `${url} → ${name}`).toBeUndefined();
        expect(validate(buildServerJson(url.replace(/[?#].*$/, ''), name).document), url).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('an override must be NAMESPACE/NAME as the registry reads it', () => {
    expect(registryNameProblem('com.example/catalog')).toBeUndefined();
    expect(registryNameProblem('io.github.someone/product-catalog')).toBeUndefined();
    for (const bad of ['catalog', 'com.example/', '/catalog', 'com.example/a/b', 'com example/catalog', '.com.example/catalog', 'com.example/catalog-', 'a/', 'x'.repeat(195) + '/catalog']) {
      expect(registryNameProblem(bad), bad).toBeDefined();
    }
  });
});

describe('the document', () => {
  it("holds the service's identity and PUBLIC_URL's addresses, and the schema accepts it", () => {
    const { document, warnings } = buildServerJson('https://catalog.example.com', 'com.example.catalog/catalog');
    expect(document).toEqual({
      $schema: SERVER_SCHEMA_URL,
      name: 'com.example.catalog/catalog',
      title: SERVICE_TITLE,
      description: SERVICE_DESCRIPTION,
      version: SERVICE_VERSION,
      websiteUrl: 'https://catalog.example.com',
      icons: serviceIcons('https://catalog.example.com'),
      remotes: [{ type: 'streamable-http', url: 'https://catalog.example.com/api/mcp' }],
    });
    expect(warnings).toEqual([]);
    expect(validate(document)).toEqual([]);
    expect(SERVICE_DESCRIPTION.length).toBeLessThanOrEqual(100);
  });

  it.skipIf(!SERVER_SCHEMA)('names the schema it is checked against (the registry\'s of 2025-12-11)', () => {
    expect(SERVER_SCHEMA!.$id).toBe(SERVER_SCHEMA_URL);
  });

  it('leaves out an icon whose address is longer than the schema allows', () => {
    const long = `https://${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.example.com/${'d'.repeat(40)}`;
    const { document, warnings } = buildServerJson(long, 'com.example/catalog');
    // The SVG's address is the shortest: it stays.
    expect(document.icons.map((i) => i.mimeType)).toEqual(['image/svg+xml']);
    expect(document.icons.every((i) => i.src.length <= 255)).toBe(true);
    expect(warnings).toEqual([expect.stringContaining('left out')]);
    expect(validate(document)).toEqual([]);
  });

  it('the schema refuses what a registry refuses: the check can fail', () => {
    const { document } = buildServerJson('https://catalog.example.com', 'com.example.catalog/catalog');
    expect(validate({ ...document, name: 'no-slash' })).not.toEqual([]);
    expect(validate({ ...document, description: 'x'.repeat(101) })).not.toEqual([]);
    expect(validate({ ...document, remotes: [{ type: 'streamable-http', url: 'ftp://catalog.example.com/api/mcp' }] })).not.toEqual([]);
    expect(validate({ ...document, icons: [{ src: 'not a uri' }] })).not.toEqual([]);
  });
});

describe('warnings', () => {
  it('for a host a registry cannot verify, and for http', () => {
    expect(publicUrlWarnings('https://catalog.example.com')).toEqual([]);
    expect(publicUrlWarnings('http://127.0.0.1:3000')).toEqual([expect.stringContaining('127.0.0.1 is a loopback address'), expect.stringContaining('not https')]);
    expect(publicUrlWarnings('https://[::1]')).toEqual([expect.stringContaining('[::1] is a loopback address')]);
    expect(publicUrlWarnings('https://203.0.113.7')).toEqual([expect.stringContaining('203.0.113.7 is an IP address')]);
    expect(publicUrlWarnings('https://localhost:3000')).toEqual([expect.stringContaining('loopback name')]);
    expect(publicUrlWarnings('https://app.localhost')).toEqual([expect.stringContaining('loopback name')]);
    expect(publicUrlWarnings('https://intranet')).toEqual([expect.stringContaining('not a public domain name')]);
  });
});
