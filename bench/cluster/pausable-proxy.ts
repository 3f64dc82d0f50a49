import net from 'node:net';

/**
 * A TCP proxy on a spare loopback port in front of one server, that can stop forwarding without
 * closing anything: a network partition as the two ends see it. While paused, nothing is read
 * from either side (bytes and closes wait in the sockets, in order), new connections are
 * accepted and left unanswered, and no connection is made to the server; resumed, everything
 * held is delivered and new connections are made. Only ever in front of a server on loopback.
 */
export interface PausableProxy {
  readonly port: number;
  readonly paused: boolean;
  /** `url` (postgres://…, redis://…) with its host and port replaced by the proxy's. */
  through(url: string): string;
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startPausableProxy(target: { host: string; port: number }): Promise<PausableProxy> {
  if (!/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(target.host)) throw new Error(`the proxy forwards to loopback only, not to ${target.host}`);
  let paused = false;
  const sockets = new Set<net.Socket>();
  /** Connections accepted while paused, connected to the server on resume. */
  const waiting: Array<() => void> = [];

  const forward = (from: net.Socket, to: net.Socket) => {
    from.on('data', (chunk: Buffer) => {
      if (!to.write(chunk)) {
        from.pause();
        to.once('drain', () => {
          if (!paused) from.resume();
        });
      }
    });
    from.on('end', () => to.end());
    from.on('error', () => undefined);
    from.on('close', (hadError) => {
      sockets.delete(from);
      if (hadError) to.destroy();
    });
  };

  const link = (client: net.Socket) => {
    const server = net.connect({ host: target.host, port: target.port });
    sockets.add(server);
    forward(client, server);
    forward(server, client);
  };

  const proxy = net.createServer({ pauseOnConnect: true }, (client) => {
    sockets.add(client);
    if (paused) waiting.push(() => link(client));
    else {
      link(client);
      client.resume();
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as net.AddressInfo).port;

  return {
    port,
    get paused() {
      return paused;
    },
    through(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    pause() {
      paused = true;
      for (const s of sockets) s.pause();
    },
    resume() {
      if (!paused) return;
      paused = false;
      for (const connect of waiting.splice(0)) connect();
      for (const s of sockets) s.resume();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
