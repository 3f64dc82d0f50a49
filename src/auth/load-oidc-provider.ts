import type * as OidcProvider from 'oidc-provider';

/**
 * Loads oidc-provider. On import it prints a warning on every Node.js release older than the 22
 * LTS line. This service supports Node.js 20.19 and later, and its OAuth tests run on Node.js 20,
 * so that one line is kept out of the service's log (JSON lines on a pipe). Every other warning
 * of the library still shows.
 */
type OidcProviderModule = typeof OidcProvider;

let loaded: Promise<OidcProviderModule> | undefined;

export function loadOidcProvider(): Promise<OidcProviderModule> {
  loaded ??= (async () => {
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && args[0].includes('oidc-provider WARNING: Unsupported runtime')) return;
      warn(...args);
    };
    try {
      return await import('oidc-provider');
    } finally {
      console.warn = warn;
    }
  })();
  return loaded;
}
