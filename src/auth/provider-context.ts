import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * oidc-provider runs each request it handles inside an AsyncLocalStorage of its own (read back
 * while it fetches a client's metadata document). On Node.js before 24, an AsyncLocalStorage
 * once run stays enabled, and an enabled one calls a hook on every promise and asynchronous
 * resource the process makes from then on: after the first OAuth request (a client reading
 * the discovery document), every answer of the catalog, its fastest included, would cost
 * about 3 µs more. So the storage is turned off whenever no request of the provider is in
 * progress; its next request turns it on again. From Node.js 24 on, AsyncLocalStorage costs
 * nothing while unused, and the handler is left as it is.
 */
export async function withProviderContextReleased(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  nodeMajor = Number(process.versions.node.split('.')[0]),
): Promise<(req: IncomingMessage, res: ServerResponse) => Promise<void>> {
  if (nodeMajor >= 24) return handle;
  const storage = await providerStorage();
  if (!storage) return handle;
  let inProgress = 0;
  const done = () => {
    if (--inProgress === 0) storage.disable();
  };
  return (req, res) => {
    inProgress++;
    const handling = handle(req, res);
    handling.then(done, done);
    return handling;
  };
}

/** The library's own AsyncLocalStorage (lib/helpers/als.js of oidc-provider 9), or undefined if it has none there. */
export async function providerStorage(): Promise<AsyncLocalStorage<unknown> | undefined> {
  try {
    const { default: storage } = (await import('oidc-provider/lib/helpers/als.js')) as { default?: unknown };
    return storage instanceof AsyncLocalStorage ? (storage as AsyncLocalStorage<unknown>) : undefined;
  } catch {
    return undefined;
  }
}
