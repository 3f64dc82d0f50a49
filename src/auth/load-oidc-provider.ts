import type * as OidcProvider from 'oidc-provider';

type OidcProviderModule = typeof OidcProvider;

/**
 * oidc-provider warns on import ("Unsupported runtime") on any Node.js release that is not an
 * LTS release of 22 or later. On Node.js 22 and later that warning is shown as the library
 * prints it (a Current release such as 26.10 gets it; an LTS release does not).
 */
const MUTED_BELOW_MAJOR = 22;

let loaded: Promise<OidcProviderModule> | undefined;

export function loadOidcProvider(): Promise<OidcProviderModule> {
  loaded ??= Number(process.versions.node.split('.')[0]) < MUTED_BELOW_MAJOR ? importMutingRuntimeWarning() : import('oidc-provider');
  return loaded;
}

/** Muted on Node.js 20 only: this service supports 20.19+, so the line would only alarm operators of a supported runtime. */
async function importMutingRuntimeWarning(): Promise<OidcProviderModule> {
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
}
