import * as pgListen from 'pg-listen';
import type { Subscriber } from 'pg-listen';

export type { Subscriber };

type CreateSubscriber = typeof pgListen.default.default;

// pg-listen is CommonJS with `exports.default`: under Node's ESM loader the default import is
// the exports object, under a bundler it is the function itself. Accept both.
const imported: unknown = pgListen.default;
const createSubscriberFn: CreateSubscriber =
  typeof imported === 'function' ? (imported as CreateSubscriber) : (imported as { default: CreateSubscriber }).default;

/**
 * A dedicated LISTEN connection that reconnects for ever with jittered exponential backoff
 * (pg-listen gives up after 3 s by default). Payloads are passed through as text.
 */
export function createListener(connectionString: string): Subscriber {
  return createSubscriberFn(
    { connectionString },
    {
      retryInterval: (attempt: number) => Math.min(200 * 2 ** attempt, 5000) * (0.5 + Math.random() / 2),
      retryLimit: Infinity,
      retryTimeout: 0,
      parse: (payload: string) => payload,
      serialize: (payload: unknown) => String(payload),
    },
  );
}
