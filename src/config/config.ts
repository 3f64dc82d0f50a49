import os from 'node:os';
import path from 'node:path';
import proxyAddr from '@fastify/proxy-addr';
import { z } from 'zod';
import { parsePrice, type Price } from '../money/money.ts';
import { stripeAmountProblem } from '../money/stripe-amounts.ts';

/**
 * The whole configuration of a process, read once from the environment.
 * Every variable is documented in the configuration table of docs/operating.md.
 */
const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .transform((v) => v.replace(/\/+$/, ''));

const postgresUrl = z
  .string()
  .regex(/^postgres(ql)?:\/\//, { error: 'must be a postgres:// or postgresql:// URL' });

const redisUrl = z.string().regex(/^rediss?:\/\//, { error: 'must be a redis:// or rediss:// URL' });

const smtpUrl = z.string().regex(/^smtps?:\/\/[^\s]+$/, { error: 'must be an smtp:// or smtps:// URL, e.g. smtp://user:password@mail.example.com:587' });

const flag = (byDefault: 'true' | 'false' = 'false') =>
  z
    .string()
    .default(byDefault)
    .transform((v, ctx) => {
      const lower = v.toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(lower)) return true;
      if (['false', '0', 'no', 'off'].includes(lower)) return false;
      ctx.addIssue({ code: 'custom', message: 'must be true or false' });
      return z.NEVER;
    });

const positiveInt = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { error: `must be a whole number from ${min} to ${max}` })
    .transform(Number)
    .pipe(z.number().int().min(min, { error: `must be at least ${min}` }).max(max, { error: `must be at most ${max}` }));

/** The most proxies TRUST_PROXY may count: more is a mistake, not a network. */
const MAX_TRUSTED_HOPS = 1000;

/** Whether proxy-addr takes the entry: an IPv4 or IPv6 address, a CIDR range or netmask, or one of its names. */
function trustEntryValid(entry: string): boolean {
  if (entry === '') return false;
  try {
    proxyAddr.compile([entry]);
    return true;
  } catch {
    return false;
  }
}

const envSchema = z.object({
  DATABASE_URL: postgresUrl.optional(),
  DATA_DIR: z.string().min(1).default('.data'),
  SNAPSHOT_CACHE_DIR: z.string().min(1).optional(),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: positiveInt(0, 65535).default(3000),
  PUBLIC_URL: httpUrl.optional(),
  SITE_URL: httpUrl.optional(),
  MEILI_URL: httpUrl.optional(),
  MEILI_KEY: z.string().min(1).optional(),
  MEILI_INDEX: z.string().regex(/^[A-Za-z0-9_-]{1,400}$/, { error: 'must be letters, digits, - or _' }).default('products'),
  REDIS_URL: redisUrl.optional(),
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((v, ctx) => {
      const value = v.trim();
      const lower = value.toLowerCase();
      // A proxy that overwrites X-Forwarded-For: its one entry is the client (a warning at start).
      if (['true', 'yes', 'on'].includes(lower)) return true as const;
      if (['false', 'no', 'off', ''].includes(lower)) return false as const;
      // A hop count: the socket and N-1 further proxies are trusted, the Nth address from the right is the client.
      if (/^\d+$/.test(value)) {
        const hops = Number(value);
        if (hops > MAX_TRUSTED_HOPS) {
          ctx.addIssue({ code: 'custom', message: `a hop count must be at most ${MAX_TRUSTED_HOPS}` });
          return z.NEVER;
        }
        return hops === 0 ? (false as const) : hops;
      }
      // A comma-separated list of proxy addresses, CIDR ranges or proxy-addr's names (loopback, linklocal, uniquelocal).
      const list = value.split(',').map((s) => s.trim());
      const bad = list.find((entry) => !trustEntryValid(entry));
      if (bad === undefined) return list;
      ctx.addIssue({
        code: 'custom',
        message: `${JSON.stringify(bad)} is not an address or CIDR range: must be false, true, a hop count, or a comma-separated list of proxy addresses/CIDRs (loopback, linklocal, uniquelocal allowed)`,
      });
      return z.NEVER;
    }),
  IPV6_CLIENT_PREFIX: positiveInt(1, 128).default(64),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty'], { error: 'must be auto, json or pretty' }).default('auto'),
  RATE_LIMIT_SEARCH_PER_MIN: positiveInt(1, 10_000_000).default(30),
  RATE_LIMIT_OTHER_PER_MIN: positiveInt(1, 10_000_000).default(60),
  RATE_LIMIT_PAGES_PER_MIN: positiveInt(1, 10_000_000).default(300),
  RATE_LIMIT_EXPORT_PER_MIN: positiveInt(1, 10_000_000).default(6),
  RATE_LIMIT_CHANGES_PER_MIN: positiveInt(1, 10_000_000).default(120),
  RATE_LIMIT_SIGNED_IN_SEARCH_PER_MIN: positiveInt(1, 10_000_000).optional(),
  RATE_LIMIT_SIGNED_IN_OTHER_PER_MIN: positiveInt(1, 10_000_000).optional(),
  CHANGES_RETENTION_DAYS: positiveInt(7, 3650).default(7),
  CACHE_MAX_ENTRIES: positiveInt(0, 10_000_000).default(5000),
  CACHE_MAX_AGE_SECONDS: positiveInt(0, 300).default(300),
  DIRECT_READS: flag('true'),
  HEADERS_TIMEOUT_SECONDS: positiveInt(1, 300).default(10),
  REQUEST_TIMEOUT_SECONDS: positiveInt(1, 3600).default(30),
  MAX_CONNECTIONS: positiveInt(1, 10_000_000).optional(),
  LONG_POLLS_PER_ADDRESS: positiveInt(1, 1_000_000).default(20),
  LONG_POLLS_PER_KEY: positiveInt(1, 1_000_000).default(20),
  LONG_POLLS_MAX: positiveInt(1, 1_000_000).default(5000),
  EXPORTS_PER_ADDRESS: positiveInt(1, 10_000).default(3),
  EXPORTS_MAX: positiveInt(1, 100_000).default(32),
  MCP_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .refine(
      (v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .every((o) => o === '*' || /^https?:\/\/[^/\s?#]+\/?$/.test(o)),
      { error: 'must be a comma-separated list of origins such as https://app.example.com, or *' },
    ),
  READY_MAX_LAG_SECONDS: positiveInt(1, 86_400).default(30),
  PROJECTOR_BATCH_SIZE: positiveInt(1, 100_000).default(500),
  PROJECTOR_POLL_MS: positiveInt(50, 60_000).default(1000),
  DEMO_COUNT: positiveInt(0, 1_000_000).default(2000),
  SMTP_URL: smtpUrl.optional(),
  MAIL_FROM: z.string().min(3).max(320).optional(),
  OAUTH_CLIENT_IDLE_DAYS: positiveInt(1, 3650).default(30),
  FETCH_ALLOW_LOOPBACK: flag(),
  DRAFT_CAP_PER_DAY: positiveInt(1, 10_000_000).default(200),
  PREMIUM_PRICE: z
    .string()
    .default('29.00 USD')
    .transform((v, ctx) => {
      const parsed = parsePrice(v);
      if (parsed.ok) return parsed.price;
      ctx.addIssue({ code: 'custom', message: parsed.message });
      return z.NEVER;
    }),
  SITE_BLOCKLIST: z
    .string()
    .default('')
    .transform((v, ctx) => {
      const hosts = v.split(',').map((h) => h.trim().toLowerCase().replace(/^www\./, '')).filter(Boolean);
      const bad = hosts.find((h) => !/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(h));
      if (bad) {
        ctx.addIssue({ code: 'custom', message: `must be a comma-separated list of host names such as spam.example; "${bad}" is not one` });
        return z.NEVER;
      }
      return hosts;
    }),
  STRIPE_SECRET_KEY: z.string().regex(/^(sk|rk)_(test|live)_[A-Za-z0-9]+$/, { error: 'must be a Stripe secret key (sk_test_… or sk_live_…)' }).optional(),
  STRIPE_WEBHOOK_SECRET: z.string().regex(/^whsec_[A-Za-z0-9]+$/, { error: 'must be a Stripe webhook signing secret (whsec_…)' }).optional(),
  STRIPE_API_BASE: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://127.0.0.1:12111' })
    .refine(
      (v) => {
        // Runs after a failed URL check too: an unparseable value is left to that check's message.
        const u = URL.parse(v);
        return u === null || (u.pathname === '/' && u.search === '' && u.hash === '' && u.username === '' && u.password === '');
      },
      { error: 'must be an origin only (scheme, host and port), such as http://127.0.0.1:12111' },
    )
    .optional(),
});

export type Env = z.infer<typeof envSchema>;

export interface Config {
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  /** Folder of this host's copy of the projection snapshot; undefined keeps none. */
  readonly snapshotCacheDir: string | undefined;
  readonly host: string;
  readonly port: number;
  /** The service's public origin, without a trailing slash. */
  readonly publicUrl: string;
  /** The directory site's origin for listing and category `url`s. */
  readonly siteUrl: string;
  /** Whether SITE_URL or PUBLIC_URL was set, rather than derived from HOST and PORT. */
  readonly siteUrlConfigured: boolean;
  readonly meili: { readonly url: string; readonly key: string | undefined; readonly index: string } | undefined;
  readonly redisUrl: string | undefined;
  /** Whom X-Forwarded-For is believed from: nobody, everybody (a proxy that overwrites it), a hop count, or proxy addresses (src/http/client/client-address.ts). */
  readonly trustProxy: boolean | number | string[];
  /** An IPv6 client is counted by its network of this many leading bits (IPv4 by its address). */
  readonly ipv6ClientPrefix: number;
  readonly logLevel: Env['LOG_LEVEL'];
  /** json: one object per line; pretty: readable lines; auto: pretty on a terminal. */
  readonly logFormat: Env['LOG_FORMAT'];
  readonly rateLimits: {
    readonly searchPerMinute: number;
    readonly otherPerMinute: number;
    readonly pagesPerMinute: number;
    /** GET /api/v1/export. */
    readonly exportPerMinute: number;
    /** GET /api/v1/changes. */
    readonly changesPerMinute: number;
    /** A maker's MCP calls through one connected app (one grant): an address's budgets unless set. */
    readonly signedIn: { readonly searchPerMinute: number; readonly otherPerMinute: number };
  };
  /** How long the change feed keeps a change (a cursor older than that must export again). */
  readonly changesRetentionHours: number;
  readonly cache: { readonly maxEntries: number; readonly maxAgeSeconds: number };
  readonly mcpAllowedOrigins: readonly string[];
  readonly readyMaxLagSeconds: number;
  readonly projector: { readonly batchSize: number; readonly pollMs: number };
  readonly demoCount: number;
  /** Outgoing mail: SMTP when set, else messages are written to the log. */
  readonly mail: { readonly smtpUrl: string | undefined; readonly from: string };
  readonly oauth: { readonly clientIdleSeconds: number };
  /**
   * Lets the service fetch sites and client documents on loopback addresses. For local
   * development and tests only; private and link-local addresses stay refused regardless.
   */
  readonly fetchAllowLoopback: boolean;
  /**
   * Whether products, categories and cached searches are answered beneath Fastify's routing
   * (src/http/direct-reads.ts); the answers are the same either way.
   */
  readonly directReads: boolean;
  /**
   * Open connections (docs/connections.md): how long a request's headers, and the whole request
   * with its body, may take to arrive; how many long polls and exports may be open at once, per
   * address (per consumer key for a keyed request) and in the process.
   */
  readonly connections: {
    readonly headersTimeoutSeconds: number;
    readonly requestTimeoutSeconds: number;
    /** Connections held at once; undefined: 16,384, or fewer if the file-descriptor limit allows fewer (src/http/connection-limits.ts). */
    readonly maxConnections: number | undefined;
    readonly longPolls: HeldLimits;
    readonly exports: HeldLimits;
  };
  readonly makers: {
    /** Drafts accepted from everyone in any 24 hours (besides 5 per IP). */
    readonly draftCapPerDay: number;
    /** Hosts whose submissions always wait for review. */
    readonly blocklist: readonly string[];
  };
  readonly payments: {
    /** In any ISO 4217 currency, counted in its minor unit (src/money/money.ts). */
    readonly premiumPrice: Price;
    /** Stripe Checkout when set; otherwise the built-in checkout, which moves no money. */
    readonly stripe:
      | {
          readonly secretKey: string;
          readonly webhookSecret: string | undefined;
          /** Where the Stripe client sends API calls instead of Stripe's own (STRIPE_API_BASE; for tests). */
          readonly apiBase: string | undefined;
        }
      | undefined;
  };
}

/** How many requests of one kind may be held open at once: per address, per consumer key, in all. */
export interface HeldLimits {
  readonly perAddress: number;
  readonly perKey: number;
  readonly total: number;
}

/** One bad setting: the variable, the value given as it may be shown, and what is accepted. */
export interface ConfigProblem {
  readonly variable: string;
  /** The value given, quoted, with passwords and keys hidden; undefined when unset. */
  readonly given: string | undefined;
  readonly message: string;
}

export class ConfigError extends Error {
  constructor(
    message: string,
    /** Each bad setting, for a caller that reports them with the values given. */
    readonly problems: readonly ConfigProblem[] = [],
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Variables whose values are secrets: never repeated in a message. */
const SECRET_VARIABLES = new Set(['MEILI_KEY', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET']);

/**
 * A URL with its credentials shown as ***, parseable or not: everything between the scheme and
 * the last `@` (a password may hold `/`, `?` or `#` when it was not percent-encoded), and any
 * password given as a query parameter (`?password=…`, libpq's `sslpassword`).
 */
export function maskUrlCredentials(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0].length ?? 0;
  const at = url.lastIndexOf('@');
  const masked = at >= scheme ? `${url.slice(0, scheme)}***${url.slice(at)}` : url;
  return masked.replace(/([?&;](?:ssl)?(?:password|passwd|pwd|pass)=)[^&;#]*/gi, '$1***');
}

/**
 * A value as an error message may repeat it: quoted (so that spaces and control characters show
 * and it stays on one line), shortened, a URL's user and password hidden, a secret not at all.
 */
function shownValue(variable: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (SECRET_VARIABLES.has(variable)) return '(hidden)';
  const safe = variable.endsWith('_URL') ? maskUrlCredentials(value) : value;
  return JSON.stringify(safe.length > 80 ? `${safe.slice(0, 79)}…` : safe);
}

function configError(problems: ConfigProblem[]): ConfigError {
  return new ConfigError(problems.map((p) => `${p.variable}: ${p.message}`).join('\n'), problems);
}

/**
 * Parses the environment. On a bad value throws a ConfigError whose message is one line per
 * problem, each naming the variable: `PORT: must be a whole number from 0 to 65535`; its
 * `problems` carry the values given too.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Record<keyof Env, string>> = {}): Config {
  const raw: Record<string, string | undefined> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = overrides[key as keyof Env] ?? env[key];
    // An empty variable counts as unset, as shells and compose files often leave them empty.
    raw[key] = value === '' ? undefined : value;
  }
  const parsed = envSchema.safeParse(raw);
  if (!parsed.success) {
    throw configError(
      parsed.error.issues.map((issue) => {
        const variable = issue.path.join('.') || 'environment';
        return { variable, given: shownValue(variable, raw[variable]), message: issue.message };
      }),
    );
  }
  const e = parsed.data;
  // Stripe counts some currencies in other units than ISO 4217 does (src/money/stripe-amounts.ts):
  // a price it cannot charge exactly stops the start rather than the first payment.
  const stripeProblem = e.STRIPE_SECRET_KEY ? stripeAmountProblem(e.PREMIUM_PRICE) : undefined;
  if (stripeProblem) {
    throw configError([{ variable: 'PREMIUM_PRICE', given: shownValue('PREMIUM_PRICE', raw.PREMIUM_PRICE), message: `${stripeProblem} (STRIPE_SECRET_KEY is set)` }]);
  }
  // Node refuses a header deadline past the request's (the headers are part of the request).
  if (e.HEADERS_TIMEOUT_SECONDS > e.REQUEST_TIMEOUT_SECONDS) {
    throw configError([
      {
        variable: 'HEADERS_TIMEOUT_SECONDS',
        // Left unset, its default is what is too long.
        given: shownValue('HEADERS_TIMEOUT_SECONDS', String(e.HEADERS_TIMEOUT_SECONDS)),
        message: `must be at most REQUEST_TIMEOUT_SECONDS (${e.REQUEST_TIMEOUT_SECONDS})`,
      },
    ]);
  }
  const publicUrl = e.PUBLIC_URL ?? `http://${e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST === '0.0.0.0' ? 'localhost' : e.HOST}:${e.PORT}`;
  const config: Config = {
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    snapshotCacheDir:
      e.SNAPSHOT_CACHE_DIR === 'off'
        ? undefined
        : (e.SNAPSHOT_CACHE_DIR ?? (e.DATABASE_URL ? path.join(os.tmpdir(), 'catalog-snapshots') : path.join(e.DATA_DIR, 'snapshots'))),
    host: e.HOST,
    port: e.PORT,
    publicUrl,
    siteUrl: e.SITE_URL ?? publicUrl,
    siteUrlConfigured: e.SITE_URL !== undefined || e.PUBLIC_URL !== undefined,
    meili: e.MEILI_URL ? { url: e.MEILI_URL, key: e.MEILI_KEY, index: e.MEILI_INDEX } : undefined,
    redisUrl: e.REDIS_URL,
    trustProxy: e.TRUST_PROXY,
    ipv6ClientPrefix: e.IPV6_CLIENT_PREFIX,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    rateLimits: {
      searchPerMinute: e.RATE_LIMIT_SEARCH_PER_MIN,
      otherPerMinute: e.RATE_LIMIT_OTHER_PER_MIN,
      pagesPerMinute: e.RATE_LIMIT_PAGES_PER_MIN,
      exportPerMinute: e.RATE_LIMIT_EXPORT_PER_MIN,
      changesPerMinute: e.RATE_LIMIT_CHANGES_PER_MIN,
      signedIn: {
        searchPerMinute: e.RATE_LIMIT_SIGNED_IN_SEARCH_PER_MIN ?? e.RATE_LIMIT_SEARCH_PER_MIN,
        otherPerMinute: e.RATE_LIMIT_SIGNED_IN_OTHER_PER_MIN ?? e.RATE_LIMIT_OTHER_PER_MIN,
      },
    },
    changesRetentionHours: e.CHANGES_RETENTION_DAYS * 24,
    cache: { maxEntries: e.CACHE_MAX_ENTRIES, maxAgeSeconds: e.CACHE_MAX_AGE_SECONDS },
    mcpAllowedOrigins: e.MCP_ALLOWED_ORIGINS.split(',').map((s) => s.trim().replace(/\/+$/, '')).filter(Boolean),
    readyMaxLagSeconds: e.READY_MAX_LAG_SECONDS,
    projector: { batchSize: e.PROJECTOR_BATCH_SIZE, pollMs: e.PROJECTOR_POLL_MS },
    demoCount: e.DEMO_COUNT,
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM ?? `Product directory <no-reply@${new URL(publicUrl).hostname}>` },
    oauth: { clientIdleSeconds: e.OAUTH_CLIENT_IDLE_DAYS * 86_400 },
    fetchAllowLoopback: e.FETCH_ALLOW_LOOPBACK,
    directReads: e.DIRECT_READS,
    connections: {
      headersTimeoutSeconds: e.HEADERS_TIMEOUT_SECONDS,
      requestTimeoutSeconds: e.REQUEST_TIMEOUT_SECONDS,
      maxConnections: e.MAX_CONNECTIONS,
      longPolls: { perAddress: e.LONG_POLLS_PER_ADDRESS, perKey: e.LONG_POLLS_PER_KEY, total: e.LONG_POLLS_MAX },
      exports: { perAddress: e.EXPORTS_PER_ADDRESS, perKey: e.EXPORTS_PER_ADDRESS, total: e.EXPORTS_MAX },
    },
    makers: { draftCapPerDay: e.DRAFT_CAP_PER_DAY, blocklist: e.SITE_BLOCKLIST },
    payments: {
      premiumPrice: e.PREMIUM_PRICE,
      stripe: e.STRIPE_SECRET_KEY ? { secretKey: e.STRIPE_SECRET_KEY, webhookSecret: e.STRIPE_WEBHOOK_SECRET, apiBase: e.STRIPE_API_BASE } : undefined,
    },
  };
  return Object.freeze(config);
}
