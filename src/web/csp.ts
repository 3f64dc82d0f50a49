/**
 * The Content-Security-Policy of every HTML page the directory serves. The pages run no inline
 * script and load nothing from elsewhere but images: the stylesheet and the search page's one
 * script come from this origin, forms post to this origin, and no page may be framed. A script
 * injected through a listing's text would therefore not run even if escaping ever failed (an
 * inline one is refused; this origin serves no file a listing can write).
 */
export interface CspOptions {
  /** The service's public URL; when it is https, browsers are told to upgrade http subresources. */
  publicUrl: string;
  /**
   * Where a form on the page may also send the browser, as URLs or origins. The OAuth consent
   * page names the client's redirect URI here: Chrome applies form-action to the redirect that
   * follows the Approve POST, so without it the browser would stop on the way back to the app.
   */
  formAction?: readonly string[];
}

export type CspDirectives = Record<string, string[]>;

/** Schemes a form must never be allowed to reach: they run or embed content rather than navigate. */
const REFUSED_SCHEMES = new Set(['javascript:', 'data:', 'blob:', 'filesystem:', 'file:', 'about:']);

/**
 * What a source expression may look like: a scheme, or an origin whose host is a DNS name or an
 * IP address. URL parsing alone is not enough: it keeps `;` in a host (`https://a.example;x/`),
 * which would end the directive and start another.
 */
const SOURCE = /^[a-z][a-z0-9+.-]*:(?:\/\/(?:\[[0-9a-f:.]+\]|[a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::\d{1,5})?)?$/i;

/**
 * The CSP source expression that allows navigating to `target`: its origin for http(s), the bare
 * scheme for an app's private scheme (`com.example.app:/callback` → `com.example.app:`).
 */
export function cspSourceFor(target: string): string {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new TypeError(`form-action target ${JSON.stringify(target)} is not an absolute URL`);
  }
  if (REFUSED_SCHEMES.has(url.protocol)) throw new TypeError(`form-action target ${JSON.stringify(target)} has a refused scheme`);
  const source = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
  if (!SOURCE.test(source)) throw new TypeError(`form-action target ${JSON.stringify(target)} cannot be written in a policy`);
  return source;
}

export function cspDirectives(opts: CspOptions): CspDirectives {
  const formAction = ["'self'", ...new Set((opts.formAction ?? []).map(cspSourceFor))];
  const directives: CspDirectives = {
    'default-src': ["'none'"],
    'style-src': ["'self'"],
    // The search page's script (src/web/assets/search.js, a file of this origin: never inline)
    // and the requests it makes for results.
    'script-src': ["'self'"],
    'connect-src': ["'self'"],
    'img-src': ["'self'", 'https:', 'data:'],
    'form-action': formAction,
    'base-uri': ["'none'"],
    'frame-ancestors': ["'none'"],
  };
  if (new URL(opts.publicUrl).protocol === 'https:') directives['upgrade-insecure-requests'] = [];
  return directives;
}

/** The header value, written exactly as helmet writes the same directives. */
export function contentSecurityPolicy(opts: CspOptions): string {
  return Object.entries(cspDirectives(opts))
    .map(([name, values]) => (values.length > 0 ? `${name} ${values.join(' ')}` : name))
    .join(';');
}
