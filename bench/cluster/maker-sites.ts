import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';

/**
 * The makers' websites of a cluster run, on one loopback server: each name ending in
 * `.cluster.example` (see loopback-names.js) is a site with a title, a description, a cover
 * image and an icon, so a submission of it is published by the automatic check. A site given a
 * badge link shows the directory's badge linking to that listing page. Every request is
 * counted per host name, so a run can tell how often the service looked at a site.
 */
export interface MakerSites {
  readonly port: number;
  /** The address of a site, e.g. http://w12.cluster.example:PORT/ */
  url(host: string): string;
  /** host → the listing page its badge links to. */
  readonly badges: Map<string, string>;
  /** Requests received per host name. */
  requestsTo(host: string): number;
  close(): Promise<void>;
}

export async function startMakerSites(): Promise<MakerSites> {
  const badges = new Map<string, string>();
  const requests = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').split(':')[0]!.toLowerCase();
    requests.set(host, (requests.get(host) ?? 0) + 1);
    if ((req.url ?? '/').startsWith('/favicon.ico')) return void res.writeHead(404).end();
    const badge = badges.get(host);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html><head><title>${host} app</title><meta name="description" content="What ${host} does for you">` +
        `<meta property="og:image" content="https://cdn.${host}/cover.png"><link rel="icon" href="https://cdn.${host}/icon.png"></head>` +
        `<body><h1>${host}</h1>${badge ? `<a href="${badge}"><img src="${badge}.svg" alt="Listed on Product directory"></a>` : ''}</body></html>`,
    );
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (host) => `http://${host}:${port}/`,
    badges,
    requestsTo: (host) => requests.get(host) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
