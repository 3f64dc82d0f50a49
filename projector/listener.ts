import { createListener, type Subscriber } from '../src/db/listen.ts';
import type { Log } from '../src/util/log.ts';

const OUTBOX_CHANNEL = 'catalog_outbox';

/**
 * Wakes the projector when a write-model transaction commits an outbox row. The notification is
 * only a nudge: the poll is the guarantee, so a lost connection costs latency, never changes.
 * pg-listen reconnects with jittered backoff; after a reconnect we wake too, since notifications
 * sent while the connection was down are lost.
 */
export interface OutboxListener {
  start(): Promise<void>;
  close(): Promise<void>;
}

export function createOutboxListener(connectionString: string, opts: { onWake: () => void; log: Log }): OutboxListener {
  let subscriber: Subscriber | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let attempt = 0;

  async function connect(): Promise<void> {
    const s = createListener(connectionString);
    subscriber = s;
    s.events.on('error', (err: Error) => opts.log.warn({ err }, 'outbox listener error; polling continues'));
    s.events.on('connected', () => {
      // A reconnect that finishes after close() left a fresh session behind: close it too.
      if (closed) void s.close().catch(() => undefined);
      else opts.onWake();
    });
    s.notifications.on(OUTBOX_CHANNEL, () => opts.onWake());
    try {
      await s.connect();
      await s.listenTo(OUTBOX_CHANNEL);
      attempt = 0;
    } catch (err) {
      // pg-listen retries lost connections, not a first connect that failed: retry ourselves.
      await s.close().catch(() => undefined);
      if (closed) return;
      const delay = Math.min(200 * 2 ** attempt++, 10_000) * (0.5 + Math.random() / 2);
      opts.log.warn({ err, retryInMs: Math.round(delay) }, 'outbox listener could not connect; polling continues');
      retry = setTimeout(() => void connect(), delay);
      retry.unref();
    }
  }

  return {
    start: connect,
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await subscriber?.close().catch(() => undefined);
    },
  };
}
