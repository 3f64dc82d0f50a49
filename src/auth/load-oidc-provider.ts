import { stripVTControlCharacters } from 'node:util';
import type * as OidcProvider from 'oidc-provider';

type OidcProviderModule = typeof OidcProvider;

/**
 * oidc-provider prints its warnings on import with console.warn, e.g. "oidc-provider WARNING:
 * Unsupported runtime" on any Node.js release that is not an LTS release of 22 or later. Those
 * lines go to the service's log instead, as warnings, so a JSON log stays one object per line.
 * That one warning is muted on Node.js 20 only (see MUTED_BELOW_MAJOR); on 22 and later every
 * warning is logged as the library words it (a Current release such as 26.10 gets it).
 */
const RUNTIME_WARNING = 'oidc-provider WARNING: Unsupported runtime';
/** Below this major the runtime warning is dropped: the service supports 20.19+, so it would only alarm operators of a supported runtime. */
const MUTED_BELOW_MAJOR = 22;

export interface WarningLog {
  warn(message: string): void;
}

let loaded: Promise<OidcProviderModule> | undefined;

/** The library, imported once per process; its import-time warnings go to the first caller's log. */
export function loadOidcProvider(log: WarningLog): Promise<OidcProviderModule> {
  loaded ??= importRelayingWarnings(log);
  return loaded;
}

async function importRelayingWarnings(log: WarningLog): Promise<OidcProviderModule> {
  const muteRuntimeWarning = Number(process.versions.node.split('.')[0]) < MUTED_BELOW_MAJOR;
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    const line = typeof args[0] === 'string' && args.length === 1 ? stripVTControlCharacters(args[0]) : undefined;
    if (line === undefined || !line.startsWith('oidc-provider ')) return warn(...args);
    if (muteRuntimeWarning && line.startsWith(RUNTIME_WARNING)) return;
    log.warn(line);
  };
  try {
    return await import('oidc-provider');
  } finally {
    console.warn = warn;
  }
}
