/**
 * Which redirect URIs a public client may use, and whether any port on loopback matches them.
 * Run on every client the authorization server meets (dynamically registered or described by a
 * Client ID Metadata Document):
 * - https: matched exactly;
 * - http only on a loopback address (127.0.0.1, [::1], localhost), matched on any port (RFC 8252
 *   section 7.3: a native app listens on whatever port is free);
 * - an app's own scheme (e.g. com.example.app:/callback), matched exactly;
 * - never with a user name or password before the host (user@host), whatever the scheme.
 * A client with any loopback or own-scheme redirect is a native app for the library, which is what
 * makes it ignore the loopback port; every other redirect stays an exact match.
 */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'about:', 'blob:', 'filesystem:', 'ftp:', 'ws:', 'wss:']);

export function normalizeRedirectKind(metadata: Record<string, unknown>, fail: (message: string) => Error): void {
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris)) return;
  let native = false;
  for (const uri of uris) {
    if (typeof uri !== 'string') continue;
    const parsed = URL.parse(uri);
    if (!parsed) throw fail(`redirect_uris: ${JSON.stringify(uri)} is not a URL`);
    // https://app.example@evil.example/ goes to evil.example while it reads as app.example (on
    // the consent page too): a redirect URI never needs a user name or password.
    if (parsed.username || parsed.password || /^[^/?#]*\/\/[^/?#]*@/.test(uri)) throw fail('redirect_uris must not carry a user name or password (user@host)');
    if (parsed.protocol === 'https:') continue;
    if (parsed.protocol === 'http:') {
      if (!LOOPBACK_HOSTS.has(parsed.hostname)) {
        throw fail('redirect_uris must use https, or http on a loopback address (127.0.0.1, [::1] or localhost)');
      }
      native = true;
      continue;
    }
    if (FORBIDDEN_SCHEMES.has(parsed.protocol)) throw fail(`redirect_uris must not use the ${parsed.protocol.slice(0, -1)} scheme`);
    native = true;
  }
  if (native) metadata.application_type = 'native';
}

/**
 * A client's registered `scope` may name this resource's scopes (the MCP SDK registers with the
 * scopes it will ask for); the library checks a client's scope against its own scopes only, so
 * the resource's are taken out of it here. What a client is granted is decided per request, on
 * the consent page.
 */
export function dropResourceScopes(metadata: Record<string, unknown>, resourceScopes: readonly string[]): void {
  if (typeof metadata.scope !== 'string') return;
  const kept = metadata.scope.split(' ').filter((s) => s && !resourceScopes.includes(s));
  if (kept.length) metadata.scope = kept.join(' ');
  else delete metadata.scope;
}
