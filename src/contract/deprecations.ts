/**
 * What the API has deprecated, in one place (docs/compatibility.md). An operation or one of an
 * operation's parameters named here is marked `deprecated` in the OpenAPI document, and every
 * answer to a request that uses it carries, on whichever path answers it (REST, the direct read
 * path by handing such requests to the REST routes, MCP tools by the operation they read):
 * - `Deprecation: @<unix seconds>` (RFC 9745), the moment it was deprecated;
 * - `Sunset: <HTTP-date>` (RFC 8594), the moment after which it may stop answering;
 * - `Link: <url>; rel="deprecation"; type="text/html"`, where the change is described.
 *
 * Nothing is deprecated today. To deprecate, add an entry, regenerate openapi.json and the
 * reference (`npm run api-reference`) and name it in CHANGELOG.md's API section.
 */
export interface Deprecated {
  /** When it was deprecated (ISO 8601). */
  readonly since: string;
  /** When it may stop working (ISO 8601): at least the notice period of docs/compatibility.md after `since`. */
  readonly sunset: string;
  /** Where the change is described: an absolute URL, or a path on this service. */
  readonly link: string;
}

export interface Deprecations {
  /** By operationId. */
  readonly operations: Readonly<Record<string, Deprecated>>;
  /** By operationId, then by parameter name (a query parameter, or an MCP tool's argument of the same name). */
  readonly parameters: Readonly<Record<string, Readonly<Record<string, Deprecated>>>>;
}

/** The service's deprecations. */
export const DEPRECATIONS: Deprecations = { operations: {}, parameters: {} };

/** The operation each MCP read tool answers with, so a deprecated operation marks its tool's answers too. */
export const TOOL_OPERATIONS: Readonly<Record<string, string>> = {
  search_products: 'searchProducts',
  list_categories: 'listCategories',
  get_product: 'getProduct',
};

/** Response headers of deprecated use, as [name, value] pairs. */
type DeprecationHeaders = ReadonlyArray<readonly [name: string, value: string]>;

/** Reads a registry once and answers, per request, which deprecation headers it earns. */
export interface DeprecationReading {
  /** True when nothing is deprecated: no request needs looking at. */
  readonly none: boolean;
  /** True when the operation or any of its parameters is deprecated (the direct paths then hand over). */
  touches(operationId: string | undefined): boolean;
  /** The headers for a request to this operation with these parameters, or undefined when nothing used is deprecated. */
  headersFor(operationId: string | undefined, parameterNames: Iterable<string>): DeprecationHeaders | undefined;
}

export function readDeprecations(registry: Deprecations, publicUrl: string): DeprecationReading {
  const headersOf = new Map<Deprecated, DeprecationHeaders>();
  const headers = (d: Deprecated): DeprecationHeaders => {
    let h = headersOf.get(d);
    if (!h) {
      h = [
        ['deprecation', `@${Math.floor(instant(d.since, 'since') / 1000)}`],
        ['sunset', new Date(instant(d.sunset, 'sunset')).toUTCString()],
        ['link', `<${new URL(d.link, publicUrl).href}>; rel="deprecation"; type="text/html"`],
      ];
      headersOf.set(d, h);
    }
    return h;
  };
  // Checked at start: a wrong date fails the start, not a request.
  for (const d of Object.values(registry.operations)) headers(d);
  for (const params of Object.values(registry.parameters)) for (const d of Object.values(params)) headers(d);
  const touched = new Set([...Object.keys(registry.operations), ...Object.keys(registry.parameters).filter((op) => Object.keys(registry.parameters[op]!).length > 0)]);
  return {
    none: touched.size === 0,
    touches: (operationId) => operationId !== undefined && touched.has(operationId),
    headersFor(operationId, parameterNames) {
      if (operationId === undefined || !touched.has(operationId)) return undefined;
      const whole = registry.operations[operationId];
      if (whole) return headers(whole);
      // Of the deprecated parameters used, the one that stops working first.
      const params = registry.parameters[operationId] ?? {};
      let first: Deprecated | undefined;
      for (const name of parameterNames) {
        const d = Object.hasOwn(params, name) ? params[name] : undefined;
        if (d && (!first || instant(d.sunset, 'sunset') < instant(first.sunset, 'sunset'))) first = d;
      }
      return first && headers(first);
    },
  };
}

function instant(iso: string, what: string): number {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) throw new Error(`deprecation ${what} ${JSON.stringify(iso)} is not an ISO 8601 date`);
  return t;
}
