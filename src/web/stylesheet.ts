import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { ifNoneMatchMatches } from '../http/caching.ts';
import { projectPath } from '../util/project-file.ts';

/**
 * The site's static files (src/web/assets/): the stylesheet every page links and the search
 * page's script, each served at a path that names its content's hash. A page always links the
 * file it was rendered with, so browsers and edges may keep it for a year without revalidating:
 * an edit changes the path, never what a path answers. Any other hash is a 404 rather than
 * today's file, so an edge can never store new content under a path that names old content, or
 * the reverse, while two versions run side by side.
 */
export interface StaticAsset {
  /** e.g. /assets/site.3f2a9c0d1b7e.css */
  readonly href: string;
  readonly body: Buffer;
  readonly etag: string;
  readonly contentType: string;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

const loaded = new Map<string, StaticAsset>();

/** Read once per process: the files ship with the sources and do not change while running. */
function asset(name: string, ext: string, contentType: string): StaticAsset {
  let a = loaded.get(name);
  if (!a) {
    const body = readFileSync(projectPath(`src/web/assets/${name}.${ext}`));
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
    a = { href: `/assets/${name}.${hash}.${ext}`, body, etag: `"${hash}"`, contentType };
    loaded.set(name, a);
  }
  return a;
}

export function siteStylesheet(): StaticAsset {
  return asset('site', 'css', 'text/css; charset=utf-8');
}

/** The search page's progressive enhancement: results that follow the search box as one types. */
export function siteScript(): StaticAsset {
  return asset('search', 'js', 'text/javascript; charset=utf-8');
}

function serve(scope: FastifyInstance, file: StaticAsset): void {
  scope.get(file.href, async (request, reply) => {
    reply.header('cache-control', IMMUTABLE).header('etag', file.etag);
    if (ifNoneMatchMatches(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
    return reply.type(file.contentType).send(file.body);
  });
}

/** The stylesheet and the script, not counted against any budget (see pages.ts). */
export function registerStylesheet(scope: FastifyInstance): void {
  serve(scope, siteStylesheet());
  serve(scope, siteScript());
}
