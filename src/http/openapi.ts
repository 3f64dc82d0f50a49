import { DEPRECATIONS, type Deprecated, type Deprecations } from '../contract/deprecations.ts';
import type { Config, HeldLimits } from '../config/config.ts';
import { z } from 'zod';
import {
  CHANGES_LIMITS,
  CURSOR_PATTERN,
  SEARCH_LIMITS,
  SLUG_MAX,
  SLUG_PATTERN,
  categoryListSchema,
  changePageSchema,
  changeSchema,
  categorySchema,
  errorSchema,
  faqItemSchema,
  productSchema,
  promoSchema,
  searchResultSchema,
  validationIssueSchema,
} from '../contract/schemas.ts';
import { KEY_LENGTH, KEY_PREFIX } from '../auth/consumer-keys/consumer-keys.ts';
import { BROTLI_QUALITY, GZIP_LEVEL } from './feed/export-stream.ts';
import { DEFAULT_CHANGES_PER_MINUTE, DEFAULT_EXPORT_PER_MINUTE } from '../budgets/lease-store.ts';

/**
 * The machine-readable description of the REST API: OpenAPI 3.1, version
 * 1.0.0. The object schemas are generated from the contract's zod schemas, the very schemas the
 * projector serializes every product through, so the document cannot drift from the answers.
 * Parameter constraints come from the same constants the validation uses (SEARCH_LIMITS,
 * SLUG_PATTERN, SLUG_MAX); the parameter schemas themselves accept strings and numbers and
 * transform them, which JSON Schema cannot express, so they are written out here.
 */
const API_VERSION = '1.0.0';
export const API_PREFIX = '/api/v1';

type JsonObject = Record<string, unknown>;

const COMPONENT_SCHEMAS = {
  Product: productSchema,
  FaqItem: faqItemSchema,
  Promo: promoSchema,
  Category: categorySchema,
  SearchResult: searchResultSchema,
  CategoryList: categoryListSchema,
  Change: changeSchema,
  ChangePage: changePageSchema,
  Error: errorSchema,
  ValidationIssue: validationIssueSchema,
} as const;

type ComponentName = keyof typeof COMPONENT_SCHEMAS;

const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/** Drops what JSON Schema output adds but an OpenAPI component must not carry or need not repeat. */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node as JsonObject)) {
    if (key === '$schema' || key === '$id') continue;
    // zod's integer bounds restate the safe-integer range: noise in a reference.
    if (key === 'minimum' && value === -SAFE_INTEGER) continue;
    if (key === 'maximum' && value === SAFE_INTEGER) continue;
    out[key] = tidy(value);
  }
  return out;
}

function componentSchemas(): Record<ComponentName, JsonObject> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(COMPONENT_SCHEMAS)) registry.add(schema as z.ZodType, { id });
  const out = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'output',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, JsonObject> };
  const schemas = {} as Record<ComponentName, JsonObject>;
  for (const name of Object.keys(COMPONENT_SCHEMAS) as ComponentName[]) {
    const schema = out.schemas[name];
    if (!schema) throw new Error(`contract schema ${name} did not convert to JSON Schema`);
    schemas[name] = tidy(schema) as JsonObject;
  }
  return schemas;
}

const ref = (kind: 'schemas' | 'parameters' | 'headers' | 'responses', name: string) => ({ $ref: `#/components/${kind}/${name}` });

const slugFilter = (what: string, description: string): JsonObject => ({
  name: what,
  in: 'query',
  required: false,
  description,
  schema: { type: 'string', minLength: 1, maxLength: SLUG_MAX, pattern: SLUG_PATTERN.source },
});

function parameters(): Record<string, JsonObject> {
  return {
    q: {
      name: 'q',
      in: 'query',
      required: false,
      description: `Full-text search over name, tagline and description; ${SEARCH_LIMITS.qMin} to ${SEARCH_LIMITS.qMax} characters (surrounding spaces not counted). Any characters are accepted; a q with no letter or digit names no word and matches nothing.`,
      schema: { type: 'string', minLength: SEARCH_LIMITS.qMin, maxLength: SEARCH_LIMITS.qMax },
    },
    category: slugFilter('category', 'Only listings in this category (category slug).'),
    label: slugFilter('label', 'Only listings carrying this label (label slug).'),
    tag: slugFilter('tag', 'Only listings carrying this tag (tag slug).'),
    page: {
      name: 'page',
      in: 'query',
      required: false,
      description: `Page number, ${SEARCH_LIMITS.pageMin} to ${SEARCH_LIMITS.pageMax}.`,
      schema: { type: 'integer', minimum: SEARCH_LIMITS.pageMin, maximum: SEARCH_LIMITS.pageMax, default: SEARCH_LIMITS.pageDefault },
    },
    limit: {
      name: 'limit',
      in: 'query',
      required: false,
      description: `Products per page, ${SEARCH_LIMITS.limitMin} to ${SEARCH_LIMITS.limitMax}.`,
      schema: { type: 'integer', minimum: SEARCH_LIMITS.limitMin, maximum: SEARCH_LIMITS.limitMax, default: SEARCH_LIMITS.limitDefault },
    },
    slug: {
      name: 'slug',
      in: 'path',
      required: true,
      description: `The slug in the listing URL, 1 to ${SLUG_MAX} characters.`,
      schema: { type: 'string', minLength: 1, maxLength: SLUG_MAX },
    },
    since: {
      name: 'since',
      in: 'query',
      required: false,
      description:
        'The cursor to continue from: the `cursor` of the last answer (or of the last change applied), or the Catalog-Cursor header of an export. Omitted: the answer is the current head, with no changes. Cursors are opaque; one older than the changes the feed keeps (at least 7 days) is answered 410.',
      schema: { type: 'string', pattern: CURSOR_PATTERN.source },
    },
    changesLimit: {
      name: 'limit',
      in: 'query',
      required: false,
      description: `At most this many changes per answer, ${CHANGES_LIMITS.limitMin} to ${CHANGES_LIMITS.limitMax} (fewer when their products pass 8 MB).`,
      schema: { type: 'integer', minimum: CHANGES_LIMITS.limitMin, maximum: CHANGES_LIMITS.limitMax, default: CHANGES_LIMITS.limitDefault },
    },
    wait: {
      name: 'wait',
      in: 'query',
      required: false,
      description: `Long poll: with nothing after \`since\`, hold the request open up to this many seconds (${CHANGES_LIMITS.waitMin} to ${CHANGES_LIMITS.waitMax}) and answer as soon as a change arrives, or with no changes when the time is up.`,
      schema: { type: 'integer', minimum: CHANGES_LIMITS.waitMin, maximum: CHANGES_LIMITS.waitMax, default: CHANGES_LIMITS.waitDefault },
    },
    acceptEncoding: {
      name: 'Accept-Encoding',
      in: 'header',
      required: false,
      description: '`br` or `gzip` (or both): the export is compressed, as it streams, with the one preferred (br on a tie).',
      schema: { type: 'string' },
    },
    ifNoneMatch: {
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description: 'ETag(s) of a copy the client holds; a match is answered 304 Not Modified without a body.',
      schema: { type: 'string' },
    },
  };
}

const integerHeader = (description: string): JsonObject => ({ description, schema: { type: 'integer', minimum: 0 } });
const stringHeader = (description: string): JsonObject => ({ description, schema: { type: 'string' } });

function headers(opts: Required<OpenApiOptions>): Record<string, JsonObject> {
  return {
    ETag: stringHeader('Strong entity tag of the body; send it back in If-None-Match.'),
    'Cache-Control': stringHeader(
      'How long the answer may be kept: at most 300 s by shared caches (edge), at most 60 s by browsers; `private, max-age=60` on an answer to a request with a consumer key (never kept by a shared cache); `no-store` on errors.',
    ),
    Vary: stringHeader('`Authorization` on every cacheable answer: a shared cache never answers a request made with a key with a copy fetched without it (the export adds `Accept-Encoding`).'),
    'X-RateLimit-Limit': integerHeader(
      `Requests allowed per minute in this route's budget: per IP ${opts.searchPerMinute} for searches, ${opts.exportPerMinute} for exports, ${opts.changesPerMinute} for the change feed, ${opts.otherPerMinute} for other calls; with a consumer key, the key's own budgets.`,
    ),
    'X-RateLimit-Remaining': integerHeader('Requests left in the current window.'),
    'X-RateLimit-Reset': integerHeader('Unix time (seconds) at which the current window ends.'),
    RateLimit: stringHeader('IETF draft RateLimit field: `"<bucket>";r=<remaining>;t=<seconds to reset>`.'),
    'RateLimit-Policy': stringHeader('IETF draft RateLimit-Policy field: `"<bucket>";q=<quota>;w=<window seconds>`.'),
    'Retry-After': integerHeader('Seconds to wait before retrying: until the window ends when a budget is spent; a few seconds when too many requests are held open (long polls, exports).'),
    'X-Request-Id': stringHeader('Identifier of this request in the service logs; a valid X-Request-Id sent by the client is kept.'),
    'Catalog-Cursor': stringHeader('The change-feed position the export is consistent with: pass it as `since` to GET /changes to follow the catalog from there.'),
    'WWW-Authenticate': stringHeader('On a 401: `Bearer error="invalid_token", error_description="…"` (the key is malformed, unknown, revoked or expired).'),
    Deprecation: stringHeader('On every answer to a request that uses a deprecated operation or parameter (RFC 9745): `@<unix seconds>`, when it was deprecated. Nothing is deprecated today (docs/compatibility.md).'),
    Sunset: stringHeader('With Deprecation (RFC 8594): the HTTP-date after which the deprecated operation or parameter may stop working.'),
    Link: stringHeader('With Deprecation: `<url>; rel="deprecation"; type="text/html"`, where the change is described.'),
  };
}

const RATE_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy', 'X-Request-Id'];

function headerRefs(names: string[]): Record<string, unknown> {
  return Object.fromEntries(names.map((n) => [n, ref('headers', n)]));
}

const json = (schemaName: ComponentName) => ({ 'application/json': { schema: ref('schemas', schemaName) } });

function responses(): Record<string, JsonObject> {
  return {
    NotModified: {
      description: 'Not Modified: the copy named in If-None-Match is current. No body.',
      headers: headerRefs(['ETag', 'Cache-Control', ...RATE_HEADERS]),
    },
    BadRequest: {
      description: 'Invalid input: `code` BAD_REQUEST, one entry per rejected parameter under `data.issues`.',
      headers: headerRefs(['Cache-Control', ...RATE_HEADERS]),
      content: json('Error'),
    },
    NotFound: {
      description: 'No live listing has this slug (it does not exist or is not live): `code` NOT_FOUND.',
      headers: headerRefs(['Cache-Control', ...RATE_HEADERS]),
      content: json('Error'),
    },
    CursorExpired: {
      description: 'The feed cannot continue from this cursor (older than the changes it keeps, or from another catalog database): `code` CURSOR_EXPIRED. Export again and follow the feed from the new Catalog-Cursor.',
      headers: headerRefs(['Cache-Control', ...RATE_HEADERS]),
      content: json('Error'),
    },
    InvalidKey: {
      description:
        'The Authorization header holds no valid consumer key: `code` INVALID_KEY, the message says whether it is malformed, unknown, revoked or expired. Never answered as if no key had been sent. More than 20 such answers to one address in a minute are followed by 429.',
      headers: headerRefs(['WWW-Authenticate', 'Cache-Control', 'X-Request-Id']),
      content: json('Error'),
    },
    TooManyRequests: {
      description: 'The budget for the minute (the address\'s, or the consumer key\'s) is spent: `code` TOO_MANY_REQUESTS; slow down and retry after Retry-After seconds.',
      headers: headerRefs(['Retry-After', 'Cache-Control', ...RATE_HEADERS]),
      content: json('Error'),
    },
  };
}

/** A 429 of a route that holds requests open: its budget, or its cap on those held (docs/connections.md). */
function heldTooMany(description: string): JsonObject {
  return { description, headers: headerRefs(['Retry-After', 'Cache-Control', ...RATE_HEADERS]), content: json('Error') };
}

/** A 503 of a route that holds requests open: the process holds as many as it allows. */
function heldFull(description: string): JsonObject {
  return { description, headers: headerRefs(['Retry-After', 'Cache-Control', ...RATE_HEADERS]), content: json('Error') };
}

function ok(description: string, schemaName: ComponentName): JsonObject {
  return { description, headers: headerRefs(['ETag', 'Cache-Control', 'Vary', ...RATE_HEADERS]), content: json(schemaName) };
}

/** Every operation: no credential, or a consumer key (optional bearer scheme). */
const SECURITY = [{}, { consumerKey: [] }];
const UNAUTHORIZED = { '401': ref('responses', 'InvalidKey') };

export interface OpenApiOptions {
  publicUrl: string;
  searchPerMinute: number;
  otherPerMinute: number;
  exportPerMinute?: number;
  changesPerMinute?: number;
  /** Long polls held at once (LONG_POLLS_PER_ADDRESS, LONG_POLLS_PER_KEY, LONG_POLLS_MAX). */
  longPolls?: HeldLimits;
  /** Exports being sent at once (EXPORTS_PER_ADDRESS, EXPORTS_MAX). */
  exports?: HeldLimits;
  /** What is deprecated, marked `deprecated` in the document (src/contract/deprecations.ts). */
  deprecations?: Deprecations;
}

/** The document's options as a configuration sets them (what the service serves). */
export function openApiOptions(config: Config): OpenApiOptions {
  return {
    publicUrl: config.publicUrl,
    searchPerMinute: config.rateLimits.searchPerMinute,
    otherPerMinute: config.rateLimits.otherPerMinute,
    exportPerMinute: config.rateLimits.exportPerMinute,
    changesPerMinute: config.rateLimits.changesPerMinute,
    longPolls: config.connections.longPolls,
    exports: config.connections.exports,
  };
}

/** The caps' defaults (src/config/config.ts; docs/connections.md). */
const DEFAULT_LONG_POLLS: HeldLimits = { perAddress: 20, perKey: 20, total: 5000 };
const DEFAULT_EXPORTS: HeldLimits = { perAddress: 3, perKey: 3, total: 32 };

export type OpenApiDocument = JsonObject & {
  openapi: string;
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string; description?: string }>;
  paths: Record<string, Record<string, JsonObject>>;
  components: {
    schemas: Record<ComponentName, JsonObject>;
    parameters: Record<string, JsonObject>;
    headers: Record<string, JsonObject>;
    responses: Record<string, JsonObject>;
    securitySchemes: Record<string, JsonObject>;
  };
};

export function buildOpenApiDocument(options: OpenApiOptions): OpenApiDocument {
  const opts: Required<OpenApiOptions> = {
    exportPerMinute: DEFAULT_EXPORT_PER_MINUTE,
    changesPerMinute: DEFAULT_CHANGES_PER_MINUTE,
    longPolls: DEFAULT_LONG_POLLS,
    exports: DEFAULT_EXPORTS,
    deprecations: DEPRECATIONS,
    ...options,
  };
  const p = (name: string) => ref('parameters', name);
  return markDeprecations(opts.deprecations, {
    openapi: '3.1.0',
    info: {
      title: 'Product catalog API',
      version: API_VERSION,
      description: [
        'Read-only JSON access to the live listings of the product directory: search and list products, list categories, fetch one listing by slug; export the whole catalog and follow its changes.',
        '',
        'Only live listings are ever returned; a listing that is not live is treated as absent. No key is needed. Every endpoint is a GET, answers JSON and allows cross-origin requests.',
        '',
        `Requests are limited per IP: ${opts.searchPerMinute} searches, ${opts.exportPerMinute} exports, ${opts.changesPerMinute} change-feed requests (a long poll counts once) and ${opts.otherPerMinute} other calls per minute; over the limit the answer is 429 until the minute ends.`,
        `Requests held open are capped too: ${opts.longPolls.perAddress} long polls (\`/changes\` with \`wait\`) and ${opts.exports.perAddress} exports at once per IP (or per consumer key), past which the answer is 429; when the service holds as many as it allows in all, 503. Both carry Retry-After.`,
        '',
        '## Higher limits',
        '',
        'Higher limits are available only by arrangement with the operator, who then gives you a consumer key (`ck_…`) with budgets of its own. Send it on every request as `Authorization: Bearer ck_…` (the `consumerKey` scheme): the rate-limit headers then show the key\'s budgets, counted across every server. A key that is malformed, unknown, revoked or expired is answered 401 `INVALID_KEY`, never served as if no key had been sent. Keep a key on your servers: never in a browser, an app others can unpack, or a URL (URLs end up in logs and histories). Answers to keyed requests are `Cache-Control: private`.',
        'Answers may be served from an edge cache for up to five minutes, so a listing change takes up to that long to show.',
        '',
        'Anyone showing a listing elsewhere should link to its listing page (the product `url`).',
      ].join('\n'),
    },
    servers: [{ url: `${opts.publicUrl}${API_PREFIX}`, description: 'This service' }],
    tags: [
      { name: 'products', description: 'Live listings' },
      { name: 'categories', description: 'Categories with live-listing counts' },
      { name: 'feed', description: 'The whole catalog at once, then its changes: for consumers that keep a copy' },
    ],
    paths: {
      '/search': {
        get: {
          operationId: 'searchProducts',
          tags: ['products'],
          summary: 'Search live listings',
          description: 'Returns live listings, newest first (ties by id). Every filter is optional and filters combine. Unknown parameters are rejected.',
          parameters: [p('q'), p('category'), p('label'), p('tag'), p('page'), p('limit'), p('ifNoneMatch')],
          security: SECURITY,
          responses: {
            '200': ok('One page of matching live listings, with the total across every page.', 'SearchResult'),
            '304': ref('responses', 'NotModified'),
            '400': ref('responses', 'BadRequest'),
            ...UNAUTHORIZED,
            '429': ref('responses', 'TooManyRequests'),
          },
        },
      },
      '/categories': {
        get: {
          operationId: 'listCategories',
          tags: ['categories'],
          summary: 'List categories',
          description: 'Every category with its live-listing count (0 when none is live), ordered by name. Takes no parameters: any query parameter is rejected (400, naming it).',
          parameters: [p('ifNoneMatch')],
          security: SECURITY,
          responses: {
            '200': ok('Every category, ordered by name.', 'CategoryList'),
            '304': ref('responses', 'NotModified'),
            '400': ref('responses', 'BadRequest'),
            ...UNAUTHORIZED,
            '429': ref('responses', 'TooManyRequests'),
          },
        },
      },
      '/products/{slug}': {
        get: {
          operationId: 'getProduct',
          tags: ['products'],
          summary: 'Fetch one live listing',
          description: 'The live listing with this slug, including its premium profile and promo when present. Takes no query parameters: any one given is rejected (400, naming it).',
          parameters: [p('slug'), p('ifNoneMatch')],
          security: SECURITY,
          responses: {
            '200': ok('The listing.', 'Product'),
            '304': ref('responses', 'NotModified'),
            '400': ref('responses', 'BadRequest'),
            '404': ref('responses', 'NotFound'),
            ...UNAUTHORIZED,
            '429': ref('responses', 'TooManyRequests'),
          },
        },
      },
      '/export': {
        get: {
          operationId: 'exportProducts',
          tags: ['feed'],
          summary: 'Export every live listing',
          description: [
            'The whole live catalog in one answer: one Product per line (NDJSON), newest first (as `/search` orders them), each line byte for byte what `/products/{slug}` answers.',
            'The `Catalog-Cursor` header names the change-feed position the export is consistent with: follow `/changes` from it and the copy stays equal to the live catalog.',
            `Streamed as it is read; compressed when asked (\`br\` at quality ${BROTLI_QUALITY}, \`gzip\` at level ${GZIP_LEVEL}). The same catalog has the same ETag on every server. Takes no query parameters: any one given is rejected (400, naming it).`,
          ].join(' '),
          parameters: [p('acceptEncoding'), p('ifNoneMatch')],
          security: SECURITY,
          responses: {
            '200': {
              description: 'Every live listing, one Product per line, newest first.',
              headers: {
                ...headerRefs(['ETag', 'Catalog-Cursor']),
                'Cache-Control': stringHeader('`public, max-age=300`: a copy up to five minutes old is still followed exactly from its own cursor.'),
                'Content-Encoding': stringHeader('`br` or `gzip` when the export is compressed; absent otherwise.'),
                ...headerRefs(RATE_HEADERS),
              },
              content: {
                'application/x-ndjson': {
                  schema: { type: 'string', description: 'NDJSON: one Product object per line, each line ending in a newline.' },
                  'x-item-schema': ref('schemas', 'Product'),
                },
              },
            },
            '304': ref('responses', 'NotModified'),
            '400': ref('responses', 'BadRequest'),
            ...UNAUTHORIZED,
            '429': heldTooMany(
              `The export budget for the minute is spent, or this IP (or consumer key) is already being sent ${opts.exports.perAddress} exports: \`code\` TOO_MANY_REQUESTS; retry after Retry-After seconds.`,
            ),
            '503': heldFull(`The service is sending as many exports as it allows at once (${opts.exports.total}): \`code\` SERVICE_UNAVAILABLE; retry after Retry-After seconds.`),
          },
        },
      },
      '/changes': {
        get: {
          operationId: 'listChanges',
          tags: ['feed'],
          summary: 'Follow the changes to the live catalog',
          description: [
            'The changes after `since`, oldest first: `upsert` carries the Product as it now reads, `delete` means no live listing has the slug any more (hidden, rejected, back in review, deleted). A slug that changes shows as a delete of the old slug and an upsert of the new one.',
            'Apply them in order to a copy keyed by slug, then continue from the answer\'s `cursor`. Cursors stay valid across a rebuild of the projection and a change of projector; no change is skipped or reordered.',
            'Unknown parameters are rejected.',
          ].join(' '),
          parameters: [p('since'), p('changesLimit'), p('wait')],
          security: SECURITY,
          responses: {
            '200': {
              description: 'The changes after `since` (none when there is nothing new), and the cursor to continue from.',
              headers: { 'Cache-Control': stringHeader('`no-store`: the feed is always read from the service.'), ...headerRefs(RATE_HEADERS) },
              content: json('ChangePage'),
            },
            '400': ref('responses', 'BadRequest'),
            '410': ref('responses', 'CursorExpired'),
            ...UNAUTHORIZED,
            '429': heldTooMany(
              `The change-feed budget for the minute is spent, or this IP already has ${opts.longPolls.perAddress} long polls waiting (a consumer key: ${opts.longPolls.perKey}): \`code\` TOO_MANY_REQUESTS; retry after Retry-After seconds, or once one of its polls has answered. A request without \`wait\` is never refused for the polls held.`,
            ),
            '503': heldFull(`The service holds as many long polls as it allows (${opts.longPolls.total}): \`code\` SERVICE_UNAVAILABLE; retry after Retry-After seconds, or ask without \`wait\` (answered at once).`),
          },
        },
      },
    },
    components: {
      schemas: componentSchemas(),
      parameters: parameters(),
      headers: headers(opts),
      responses: responses(),
      securitySchemes: {
        consumerKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: `${KEY_PREFIX} followed by ${KEY_LENGTH - KEY_PREFIX.length} letters and digits`,
          description: 'A consumer key from the operator (higher limits by arrangement). Optional: without it, requests spend their address\'s budgets.',
        },
      },
    },
  });
}

/**
 * Marks what is deprecated: an operation gets `deprecated: true` and a sentence naming its
 * sunset; a deprecated parameter is written out in that operation (a shared `$ref` cannot be
 * marked for one operation alone) with `deprecated: true`.
 */
function markDeprecations(deprecations: Deprecations, doc: OpenApiDocument): OpenApiDocument {
  const notice = (d: Deprecated) => `Deprecated since ${d.since.slice(0, 10)}; works until ${d.sunset.slice(0, 10)} (${d.link}).`;
  for (const methods of Object.values(doc.paths)) {
    for (const op of Object.values(methods)) {
      const id = op.operationId as string | undefined;
      if (id === undefined) continue;
      const whole = deprecations.operations[id];
      if (whole) {
        op.deprecated = true;
        op.description = `${notice(whole)} ${String(op.description ?? '')}`.trim();
      }
      const params = deprecations.parameters[id];
      if (!params || !Array.isArray(op.parameters)) continue;
      op.parameters = (op.parameters as JsonObject[]).map((param) => {
        const refName = typeof param.$ref === 'string' ? param.$ref.slice(param.$ref.lastIndexOf('/') + 1) : undefined;
        const resolved = refName === undefined ? param : doc.components.parameters[refName]!;
        const d = typeof resolved.name === 'string' && Object.hasOwn(params, resolved.name) ? params[resolved.name] : undefined;
        if (!d) return param;
        return { ...resolved, deprecated: true, description: `${notice(d)} ${String(resolved.description ?? '')}`.trim() };
      });
    }
  }
  return doc;
}
