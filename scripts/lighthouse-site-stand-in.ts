import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

/**
 * The makers' sites, as far as a directory page needs them, on loopback: an HTTP proxy for
 * Chromium (--proxy-server) that answers every image request with a neutral PNG of a listing
 * image's size (a cover 1200×630, anything else 256×256), over http and over https (CONNECT,
 * with a throwaway self-signed certificate; the browser runs with --ignore-certificate-errors),
 * and refuses everything else. It never opens a connection anywhere: a page under audit renders
 * as it would with the makers' images, and nothing leaves the machine.
 */
export interface SiteStandIn {
  port: number;
  /** URLs asked for that were not images (answered 502). */
  refused: string[];
  close(): Promise<void>;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG of one colour: 8-bit RGB, every scanline unfiltered. */
export function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // bit depth 8, colour type RGB, deflate, no filter, no interlace
  const line = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) line.set(rgb, 1 + x * 3);
  const pixels = Buffer.concat(Array.from({ length: height }, () => line));
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(pixels, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

const NEUTRAL: [number, number, number] = [0xdd, 0xe1, 0xe6];
const COVER = solidPng(1200, 630, NEUTRAL);
const SQUARE = solidPng(256, 256, NEUTRAL);

function isImageRequest(req: IncomingMessage, url: URL): boolean {
  return /\.(png|jpe?g|gif|webp|avif|svg|ico)$/i.test(url.pathname) || (req.headers.accept ?? '').startsWith('image/');
}

/** A throwaway self-signed certificate from openssl, for the https side of the stand-in. */
function selfSignedCertificate(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lighthouse-stand-in-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=makers-sites-stand-in', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startSiteStandIn(): Promise<SiteStandIn> {
  const refused: string[] = [];
  const answer = (scheme: 'http' | 'https') => (req: IncomingMessage, res: ServerResponse) => {
    // A proxied http request names the whole URL; one inside a CONNECT tunnel only its path.
    const url = new URL(req.url ?? '/', `${scheme}://${req.headers.host ?? 'unknown'}`);
    if (req.method === 'GET' && isImageRequest(req, url)) {
      const body = /cover/i.test(url.pathname) ? COVER : SQUARE;
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': body.length, 'cache-control': 'max-age=86400' }).end(body);
    } else {
      refused.push(url.href);
      res.writeHead(502, { 'content-type': 'text/plain' }).end('not reachable from here\n');
    }
  };
  const tls = https.createServer(selfSignedCertificate(), answer('https'));
  const proxy = http.createServer(answer('http'));
  const sockets = new Set<Socket>();
  proxy.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  proxy.on('connect', (_req: IncomingMessage, socket: Socket) => {
    // The tunnel ends here: its TLS is spoken by the stand-in itself, never forwarded.
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    tls.emit('connection', socket);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    port: (proxy.address() as AddressInfo).port,
    refused,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      tls.close();
    },
  };
}
