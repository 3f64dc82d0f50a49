/**
 * Which browser origins may call the MCP endpoint (protection against DNS rebinding and
 * cross-site calls).
 *
 * Allowed: the origin of PUBLIC_URL and every origin in MCP_ALLOWED_ORIGINS (comma-separated;
 * `*` allows any). A request without an Origin header passes: server-side MCP clients send
 * none, and a browser always sends one on a POST, same-origin or not, so a page whose host
 * name was rebound to this server is still recognised by its foreign Origin.
 *
 * The Host header is deliberately not checked. The service is public and runs behind proxies
 * and load balancers that present many host names (and tests reach it as 127.0.0.1 while
 * PUBLIC_URL names another host); a Host allow-list would refuse legitimate clients while
 * adding nothing here: the only method that does work is POST, every browser POST carries an
 * Origin, and the tools read public catalog data only.
 */
export interface OriginPolicy {
  /** True when a request with this Origin header (or none) may be served. */
  allows(origin: string | undefined): boolean;
  /** The allowed origins in canonical form, `*` when any origin is allowed. */
  readonly allowed: readonly string[];
}

/** scheme://host[:port] in canonical form (lowercase, default port dropped), or undefined. */
function canonicalOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

export function createOriginPolicy(publicUrl: string, extraOrigins: readonly string[]): OriginPolicy {
  const anyOrigin = extraOrigins.includes('*');
  const allowed = new Set<string>();
  for (const value of [publicUrl, ...extraOrigins]) {
    if (value === '*') continue;
    const origin = canonicalOrigin(value);
    if (origin) allowed.add(origin);
  }
  return {
    allowed: anyOrigin ? ['*'] : [...allowed],
    allows(origin) {
      if (origin === undefined) return true;
      if (anyOrigin) return true;
      const canonical = canonicalOrigin(origin);
      return canonical !== undefined && allowed.has(canonical);
    },
  };
}
