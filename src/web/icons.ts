import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { SERVED_ICONS, type ServedIcon } from '../contract/service-identity.ts';
import { ifNoneMatchMatches } from '../http/caching.ts';
import { projectPath } from '../util/project-file.ts';

/**
 * The service's icon (src/web/assets/icons/): the SVG mark at /icon.svg and its PNG renderings at
 * /icons/icon-{48,192,512}.png, the paths src/contract/service-identity.ts lists for MCP clients
 * and the registry's server.json. Pages link them in their head (components/layout.tsx).
 *
 * Unlike the stylesheet these paths never change, since clients are handed them once (the MCP
 * server's `icons`, a published server.json): each answer is cached for a day, with a strong
 * ETag (the content's hash) for a bodiless 304 after that. Other headers, on top of the page
 * scope's own (page-security.ts):
 *
 * - `X-Content-Type-Options: nosniff`: the files are only ever what their type says.
 * - `Cross-Origin-Resource-Policy: cross-origin`: MCP clients and registries show the icon on
 *   pages of their own origin, which the page scope's `same-origin` would refuse.
 * - For the SVG, `Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'`: opened
 *   on its own (a document, not an image) it may show its drawing and nothing else, never run
 *   script or load anything. The mark has no script and no reference to anything anyway.
 *
 * The files are read once per process; `scripts/render-icons.ts` makes the PNGs from the SVG.
 */
const ICON_CACHE_CONTROL = 'public, max-age=86400';
const SVG_ICON_CSP = "default-src 'none'; style-src 'unsafe-inline'";

interface IconFile {
  readonly icon: ServedIcon;
  readonly body: Buffer;
  readonly etag: string;
  readonly contentType: string;
}

let loaded: readonly IconFile[] | undefined;

/** The served files, read on first use: they ship with the sources and do not change while running. */
function iconFiles(): readonly IconFile[] {
  loaded ??= SERVED_ICONS.map((icon) => {
    const body = readFileSync(projectPath(`src/web/assets/icons/${path.posix.basename(icon.path)}`));
    const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
    return { icon, body, etag, contentType: icon.mimeType };
  });
  return loaded;
}

/** The path of the served icon of this size (`any` for the SVG). */
function servedPath(size: string): string {
  const icon = SERVED_ICONS.find((i) => i.sizes.includes(size));
  if (!icon) throw new Error(`no served icon of size ${size} (src/contract/service-identity.ts)`);
  return icon.path;
}

/** What the pages' head links, by purpose. */
export const ICON_LINKS = {
  svg: servedPath('any'),
  /** A PNG for browsers that show no SVG icon. */
  png: servedPath('48x48'),
  /** The home-screen icon of iOS and iPadOS. */
  touch: servedPath('192x192'),
} as const;

/** GET (and HEAD) of every icon: not counted against any budget (see pages.ts). */
export function registerIcons(scope: FastifyInstance): void {
  for (const file of iconFiles()) {
    const svg = file.icon.mimeType === 'image/svg+xml';
    scope.get(file.icon.path, async (request, reply) => {
      reply
        .header('cache-control', ICON_CACHE_CONTROL)
        .header('etag', file.etag)
        .header('x-content-type-options', 'nosniff')
        .header('cross-origin-resource-policy', 'cross-origin');
      if (svg) reply.header('content-security-policy', SVG_ICON_CSP);
      if (ifNoneMatchMatches(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
      return reply.type(file.contentType).send(file.body);
    });
  }
}
