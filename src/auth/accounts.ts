import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { createPool, type Pool } from '../db/pool.ts';
import type { SiteFetcherOptions } from '../sites/safe-fetch.ts';
import { createGuardedFetch } from '../sites/safe-fetch.ts';
import { createKeyedLimiter, type KeyedLimiter } from '../util/keyed-limiter.ts';
import { createAccessTokenVerifier, type AccessTokenVerifier } from './access-tokens.ts';
import { createAuthorizationServer, type AuthorizationServer, type AuthorizationServerOptions, type ClientReading, type ErrorPage, type OAuthErrorForPage } from './authorization-server.ts';
import { CLIENT_DOCUMENT_MAX_BYTES } from './client-document-problem.ts';
import { createMailer, type MailMessage, type Mailer } from './mailer.ts';
import { createRefreshReplays, REFRESH_LOCK_DEADLINES, type RefreshReplays } from './refresh-replay.ts';
import { loadServiceKeys, type ServiceKeys } from './service-keys.ts';

/**
 * Everything about makers' identities one API process needs: the authorization server, the
 * access-token check of the MCP endpoint, mail, and the limits on sign-in and registration.
 */
export interface Accounts {
  readonly keys: ServiceKeys;
  readonly oauth: AuthorizationServer;
  readonly replays: RefreshReplays;
  readonly accessTokens: AccessTokenVerifier;
  readonly mailer: Mailer;
  readonly limits: {
    readonly signInPerIp: KeyedLimiter;
    readonly signInPerAddress: KeyedLimiter;
    readonly registrationsPerIp: KeyedLimiter;
  };
  /** The MCP endpoint's URL: the resource and audience of every access token. */
  readonly mcpUrl: string;
  close(): Promise<void>;
}

/** Asks for sign-in links: per IP and per address, each over an hour. */
export const SIGN_IN_LIMITS = { perIpPerHour: 20, perAddressPerHour: 5 } as const;
/** Dynamic client registrations per IP per hour. */
const REGISTRATIONS_PER_IP_PER_HOUR = 30;

export interface AccountsOptions {
  config: Config;
  pool: Pool;
  /** Who a request comes from (TRUST_PROXY), for the authorization server. */
  clients: ClientReading;
  /** The database, for the connections that hold per-token locks (refresh-replay.ts). */
  connectionString: string;
  redis: Redis | undefined;
  log: Logger;
  mcpPath: string;
  renderErrorPage: (error: OAuthErrorForPage) => ErrorPage;
  /** For tests: trusted certificates and a resolver for the fetches of client documents. */
  fetchOptions?: Pick<SiteFetcherOptions, 'ca' | 'resolver'>;
  onMail?: (message: MailMessage) => void;
}

export async function createAccounts(opts: AccountsOptions): Promise<Accounts> {
  const { config, pool } = opts;
  const mcpUrl = `${config.publicUrl}${opts.mcpPath}`;
  const keys = await loadServiceKeys(pool);
  const replays = createRefreshReplays(pool, createPool(opts.connectionString, { max: 5, applicationName: 'catalog refresh locks', deadlines: REFRESH_LOCK_DEADLINES }));
  const oauth = createAuthorizationServer({
    issuer: config.publicUrl,
    resource: mcpUrl,
    pool,
    keys,
    trustProxy: config.trustProxy !== false,
    clients: opts.clients,
    clientIdleSeconds: config.oauth.clientIdleSeconds,
    // The server fetches nothing but client documents, so their size limit holds for the whole
    // fetch; the library's own count fails on a body that streams past it (it cancels a stream
    // it is still reading), this one reports it as too large.
    // undici's fetch types and the global fetch types differ only in their stream generics.
    fetch: createGuardedFetch({
      allowLoopback: config.fetchAllowLoopback,
      maxBodyBytes: CLIENT_DOCUMENT_MAX_BYTES,
      ...opts.fetchOptions,
    }) as unknown as AuthorizationServerOptions['fetch'],
    renderErrorPage: opts.renderErrorPage,
    onRefreshAnswered: (spent, body) => replays.remember(spent, body),
    log: opts.log.child({ component: 'oauth' }),
  });
  const mailer = createMailer({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, log: opts.log.child({ component: 'mail' }), ...(opts.onMail && { onSend: opts.onMail }) });
  const hour = 3600;
  return {
    keys,
    oauth,
    replays,
    accessTokens: createAccessTokenVerifier({ pool, issuer: config.publicUrl, audience: mcpUrl, publicKeys: keys.publicKeys, log: opts.log }),
    mailer,
    limits: {
      signInPerIp: createKeyedLimiter({ keyPrefix: 'catalog:signin-ip', points: SIGN_IN_LIMITS.perIpPerHour, durationSeconds: hour, redis: opts.redis }),
      signInPerAddress: createKeyedLimiter({ keyPrefix: 'catalog:signin-address', points: SIGN_IN_LIMITS.perAddressPerHour, durationSeconds: hour, redis: opts.redis }),
      registrationsPerIp: createKeyedLimiter({ keyPrefix: 'catalog:oauth-register', points: REGISTRATIONS_PER_IP_PER_HOUR, durationSeconds: hour, redis: opts.redis }),
    },
    mcpUrl,
    async close() {
      mailer.close();
      await replays.close();
    },
  };
}
