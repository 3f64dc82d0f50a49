/**
 * How the service names and shows itself to machines: the MCP server's identity
 * (`server/discover`, `initialize`, results' `_meta`), the registry's `server.json`
 * (`catalog mcp server-json`) and the pages' icons all read it from here, so they never disagree.
 */

/** The MCP server's `name` (its identity in serverInfo; the registry name is derived per deployment). */
export const SERVICE_NAME = 'catalog';
export const SERVICE_TITLE = 'Product catalog';
/** One sentence, at most 100 characters (the registry's limit for `description`). */
export const SERVICE_DESCRIPTION = 'Search a directory of software and digital products; makers submit and manage their listings.';

/** One icon file the service serves from its own origin (src/web: /icon.svg, /icons/…). */
export interface ServedIcon {
  /** The path on PUBLIC_URL. */
  readonly path: string;
  readonly mimeType: 'image/svg+xml' | 'image/png';
  /** `any` for the scalable mark, `WxH` for a raster size. */
  readonly sizes: readonly string[];
}

/**
 * The mark: one SVG for every size, and PNG renderings of it for clients that cannot show SVG
 * (MCP clients may support only PNG and JPEG; browsers' touch icons and manifests want PNG).
 */
export const SERVED_ICONS: readonly ServedIcon[] = [
  { path: '/icon.svg', mimeType: 'image/svg+xml', sizes: ['any'] },
  { path: '/icons/icon-48.png', mimeType: 'image/png', sizes: ['48x48'] },
  { path: '/icons/icon-192.png', mimeType: 'image/png', sizes: ['192x192'] },
  { path: '/icons/icon-512.png', mimeType: 'image/png', sizes: ['512x512'] },
];

/** An MCP `Icon` (2025-11-25 and later): an absolute URL on the deployment's public origin. */
export interface McpIcon {
  src: string;
  mimeType: string;
  sizes: string[];
}

/** The icons as MCP and the registry list them, on `publicUrl` (no trailing slash). */
export function serviceIcons(publicUrl: string): McpIcon[] {
  const base = publicUrl.replace(/\/+$/, '');
  return SERVED_ICONS.map((icon) => ({ src: `${base}${icon.path}`, mimeType: icon.mimeType, sizes: [...icon.sizes] }));
}
