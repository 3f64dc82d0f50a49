import { isIP } from 'node:net';

/**
 * What a product's website IS, for telling whether two listings point at the same site and
 * whether a badge links to a listing. One normalisation, used everywhere duplicates are judged.
 *
 * Two addresses are the same website when they differ only in: scheme (http/https), letter case
 * of the host, a leading `www.`, a trailing dot on the host, a default port (80 or 443, whichever
 * scheme), a fragment, tracking parameters (utm_*, fbclid, gclid, ref …), the order of the other
 * query parameters, or a trailing slash on the path. The path keeps its case: servers may treat
 * /App and /app as different pages. International names compare in punycode (the URL parser
 * converts them).
 *
 * The identity is `host[:port][/path][?sorted query]`, e.g. `example.com/pricing?plan=team`.
 */

/** Query parameters that say where a visitor came from, not which page they asked for. */
const TRACKING_PARAMS = new Set([
  'fbclid',
  'gclid',
  'gclsrc',
  'dclid',
  'gbraid',
  'wbraid',
  'msclkid',
  'mc_cid',
  'mc_eid',
  'ref',
  'ref_src',
  'ref_url',
  'igshid',
  '_ga',
  '_gl',
  'yclid',
  'twclid',
  'ttclid',
  'li_fat_id',
  'mkt_tok',
  '_hsenc',
  '_hsmi',
  'oly_anon_id',
  'oly_enc_id',
  'vero_id',
  'wickedid',
  's_cid',
  'srsltid',
]);

function isTrackingParam(name: string): boolean {
  const n = name.toLowerCase();
  return n.startsWith('utm_') || TRACKING_PARAMS.has(n);
}

/** Removes tracking parameters; the rest keep their order. */
function withoutTracking(params: URLSearchParams): [string, string][] {
  return [...params].filter(([name]) => !isTrackingParam(name));
}

/**
 * The identity of an http(s) URL (see above). Throws a TypeError when the string is not an
 * absolute http(s) URL.
 */
export function websiteIdentity(url: string): string {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    throw new TypeError(`not a URL: ${url}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError(`not an http(s) URL: ${url}`);
  let host = u.hostname.replace(/\.$/, '');
  // www.com is a site of its own; www.example.com is example.com
  if (host.startsWith('www.') && host.slice(4).includes('.')) host = host.slice(4);
  const port = u.port === '' || u.port === '80' || u.port === '443' ? '' : `:${u.port}`;
  const path = u.pathname.replace(/\/+$/, '');
  const query = withoutTracking(u.searchParams).sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  const search = query.length ? `?${new URLSearchParams(query).toString()}` : '';
  return `${host}${port}${path}${search}`;
}

/* ------------------------------------------------------------------------------------------ */

export const WEBSITE_INPUT_MAX = 2048;

export type WebsiteInputResult = { ok: true; url: string } | { ok: false; message: string };

/** Names that only mean something inside a private network (or this machine). */
const LOCAL_SUFFIXES = ['localhost', 'local', 'localdomain', 'internal', 'intranet', 'lan', 'home.arpa'];

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/**
 * Checks what a maker typed as their website and returns it as a canonical URL.
 *
 * Accepted: an http(s) address, or a bare host (`example.com/app`, then https:// is assumed),
 * at most 2048 characters, with a public DNS-style host name: at least two labels, letters,
 * digits and hyphens (international names are converted to punycode), a top-level label that is
 * not all digits. Refused: other schemes (javascript:, data:, ftp: …), a user name or password,
 * IP addresses in every notation (the URL parser turns 2130706433, 0x7f.1 and 0177.0.0.1 into
 * 127.0.0.1 first), localhost and private-network names (.local, .internal, .lan, .home.arpa …).
 * The returned URL keeps the scheme and host as given (www. included) but loses the fragment and
 * tracking parameters. Whether the site is reachable is a separate question (safe-fetch.ts).
 */
export function parseWebsiteInput(input: string): WebsiteInputResult {
  const text = input.trim();
  if (text === '') return { ok: false, message: "Enter your website's address, such as https://example.com." };
  if (text.length > WEBSITE_INPUT_MAX) return { ok: false, message: `The address is too long: at most ${WEBSITE_INPUT_MAX} characters.` };
  if (/\s/.test(text)) return { ok: false, message: 'The address must not contain spaces.' };

  let candidate = text;
  const scheme = SCHEME.exec(text);
  // "example.com:8080/app" starts like a scheme too; a port after the colon says it is a host
  if (scheme && (text.slice(scheme[0].length).startsWith('/') || !/^\d+(?:[/?#]|$)/.test(text.slice(scheme[0].length)))) {
    const name = scheme[1]!.toLowerCase();
    if (name !== 'http' && name !== 'https') {
      return { ok: false, message: `Only web addresses starting with http:// or https:// are accepted, not ${name}:.` };
    }
  } else if (text.startsWith('//')) {
    candidate = `https:${text}`;
  } else {
    candidate = `https://${text}`;
  }

  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return { ok: false, message: 'This is not a valid web address.' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, message: 'Only web addresses starting with http:// or https:// are accepted.' };
  }
  if (url.username || url.password) return { ok: false, message: 'The address must not contain a user name or password.' };

  const hostname = url.hostname.replace(/\.$/, '');
  if (hostname.startsWith('[') || isIP(hostname) !== 0) {
    return { ok: false, message: "Give your website's domain name, not an IP address." };
  }
  const labels = hostname.split('.');
  if (labels.length < 2) return { ok: false, message: 'The address needs a full domain name, such as example.com.' };
  if (LOCAL_SUFFIXES.some((s) => hostname === s || hostname.endsWith(`.${s}`))) {
    return { ok: false, message: 'This address only works inside a private network; give the public address of your website.' };
  }
  if (hostname.length > 253 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels[labels.length - 1]!)) {
    return { ok: false, message: 'The domain name is not valid: use letters, digits, hyphens and dots, such as example.com.' };
  }

  url.hostname = hostname;
  url.hash = '';
  const kept = withoutTracking(url.searchParams);
  // rewritten only when something was dropped, so the maker's own query stays as typed
  if (kept.length !== [...url.searchParams].length) url.search = kept.length ? new URLSearchParams(kept).toString() : '';
  const canonical = url.href;
  if (canonical.length > WEBSITE_INPUT_MAX) return { ok: false, message: `The address is too long: at most ${WEBSITE_INPUT_MAX} characters.` };
  return { ok: true, url: canonical };
}
