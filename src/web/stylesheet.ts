import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { ifNoneMatchMatches } from '../http/caching.ts';
import { projectPath } from '../util/project-file.ts';

/**
 * The site stylesheet (src/web/assets/site.css), served at a path that names its content's hash.
 * A page always links the stylesheet it was rendered with, so browsers and edges may keep it
 * for a year without revalidating: an edit changes the path, never what a path answers. Any
 * other hash is a 404 rather than today's file, so an edge can never store new content under
 * a path that names old content, or the reverse, while two versions run side by side.
 */
export interface Stylesheet {
  /** e.g. /assets/site.3f2a9c0d1b7e.css */
  readonly href: string;
  readonly body: Buffer;
  readonly etag: string;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

let loaded: Stylesheet | undefined;

/** Read once per process: the file ships with the sources and does not change while running. */
export function siteStylesheet(): Stylesheet {
  if (!loaded) {
    const body = readFileSync(projectPath('src/web/assets/site.css'));
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
    loaded = { href: `/assets/site.${hash}.css`, body, etag: `"${hash}"` };
  }
  return loaded;
}

export function registerStylesheet(scope: FastifyInstance): void {
  const sheet = siteStylesheet();
  scope.get(sheet.href, async (request, reply) => {
    reply.header('cache-control', IMMUTABLE).header('etag', sheet.etag);
    if (ifNoneMatchMatches(request.headers['if-none-match'], sheet.etag)) return reply.code(304).send();
    return reply.type('text/css; charset=utf-8').send(sheet.body);
  });
}
