import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OTLP/HTTP receiver of the bench's own on loopback (`--traces`): it takes the exporters'
 * POSTs to /v1/traces and answers each with an empty success, so the catalog's processes pay
 * for their spans (made, batched, encoded, sent) and nothing leaves the machine. It counts what
 * it was sent.
 */
export interface OtlpSink {
  readonly url: string;
  /** Export requests and their bytes received so far. */
  received(): { posts: number; bytes: number };
  close(): Promise<void>;
}

export function startOtlpSink(): Promise<OtlpSink> {
  let posts = 0;
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') posts++;
      const json = (req.headers['content-type'] ?? '').includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        received: () => ({ posts, bytes }),
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    }),
  );
}
