import { SERVER_INFO_META_KEY, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { SERVICE_NAME, SERVICE_TITLE } from '../contract/service-identity.ts';
import { SERVICE_VERSION } from '../util/version.ts';

/**
 * The protocol revisions the endpoint serves, in two eras (the MCP specification's words):
 * - modern, 2026-07-28: no handshake; every request carries its version and the client's
 *   capabilities in `params._meta`, mirrored in the `MCP-Protocol-Version`, `Mcp-Method` and
 *   `Mcp-Name` headers; every result carries `resultType`, and cacheable ones `ttlMs` and
 *   `cacheScope`;
 * - legacy, 2025-11-25 back to 2024-10-07: an `initialize` handshake, then requests in the
 *   negotiated version.
 * Both arrive on the same endpoint, statelessly; the SDK (`@modelcontextprotocol/server`) tells
 * them apart by the request (route.ts).
 */
export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSIONS: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;
/** Newest first, as an UnsupportedProtocolVersion error lists them. */
export const SUPPORTED_VERSIONS: readonly string[] = [MODERN_VERSION, ...LEGACY_VERSIONS];

export type Era = 'modern' | 'legacy';

/** `_meta` keys of a modern request's envelope (2026-07-28, basic/index). */
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';

const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/**
 * What a result's `_meta` says of the server (2026-07-28: servers SHOULD identify themselves in
 * each result): name, title and version only. The full identity, with the description, icons
 * and website, is in `server/discover` (and `initialize`): repeating it in every answer would
 * cost each tool call some 400 bytes. Handlers stamp it themselves (modernResultMeta), which the
 * SDK then leaves as it is.
 */
const RESULT_SERVER_INFO = { name: SERVICE_NAME, title: SERVICE_TITLE, version: SERVICE_VERSION } as const;

/** The `_meta` a result carries in the modern era (none in the legacy one). */
export function resultMeta(era: Era): { _meta: Record<string, unknown> } | undefined {
  return era === 'modern' ? { _meta: { [SERVER_INFO_META_KEY]: RESULT_SERVER_INFO } } : undefined;
}

/**
 * The body of an UnsupportedProtocolVersion refusal (400): answered to any request whose
 * `MCP-Protocol-Version` header names a revision not in SUPPORTED_VERSIONS, whatever its body
 * (route.ts), so a client learns what to retry with before anything else is looked at.
 * `data.supported` lists what the request's era can retry with: a request in the modern shape
 * (an envelope in `params._meta`) gets the modern revisions, as `server/discover` lists them; any
 * other gets every revision, the 2025 ones being reached through `initialize`. The message names
 * them all.
 */
export function unsupportedVersionBody(requested: string, body: unknown) {
  const shown = requested.length > 64 ? `${requested.slice(0, 64)}…` : requested;
  return {
    jsonrpc: '2.0' as const,
    id: requestIdOf(body),
    error: {
      code: UNSUPPORTED_PROTOCOL_VERSION,
      message: `Unsupported protocol version: ${shown}. Supported: ${MODERN_VERSION} (each request naming it), ${LEGACY_VERSIONS.join(', ')} (after initialize).`,
      data: { supported: modernShaped(body) ? [MODERN_VERSION] : [...SUPPORTED_VERSIONS], requested: requested.slice(0, 64) },
    },
  };
}

/** A request's id, when it has one a response may echo. */
export function requestIdOf(body: unknown): string | number | null {
  const id = isObject(body) ? body.id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A request that claims the modern era: an envelope naming a version in `params._meta`. */
function modernShaped(body: unknown): boolean {
  const params = isObject(body) ? body.params : undefined;
  const meta = isObject(params) ? params._meta : undefined;
  return isObject(meta) && META_PROTOCOL_VERSION in meta;
}
