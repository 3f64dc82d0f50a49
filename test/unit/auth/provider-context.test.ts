import { setTimeout as sleep } from 'node:timers/promises';
import { expect, test } from 'vitest';
import { providerStorage, withProviderContextReleased } from '../../../src/auth/provider-context.ts';

/** Node's own flag on an AsyncLocalStorage before 24 (whether its hook is on); undefined where it has none. */
function enabled(storage: object): boolean | undefined {
  return (storage as { enabled?: boolean }).enabled;
}

test("oidc-provider's request storage is where the service looks for it", async () => {
  // Should an upgrade move it, the service would keep the storage's hook on for good on Node 20 and 22.
  expect(await providerStorage()).toBeDefined();
});

test('the storage is turned off only once no request of the provider is in progress, and each request still reads its own context', async () => {
  const storage = (await providerStorage())!;
  const seen: unknown[] = [];
  // A stand-in for the provider's callback: runs in its storage, reads it back after a wait.
  const handle = withProviderContextReleased(async (req) => {
    const ctx = { url: req.url };
    await storage.run(ctx, async () => {
      await sleep(req.url === '/slow' ? 60 : 10);
      seen.push(storage.getStore() === ctx ? req.url : 'lost');
    });
  }, 20);
  const wrapped = await handle;
  const slow = wrapped({ url: '/slow' } as never, {} as never);
  await wrapped({ url: '/fast' } as never, {} as never);
  // One request is still in progress: its context must survive the other's end.
  expect(enabled(storage)).not.toBe(false);
  await slow;
  expect(seen).toEqual(['/fast', '/slow']);
  if (enabled(storage) !== undefined) expect(enabled(storage)).toBe(false);
  // The next request turns it on again and reads its own context.
  await wrapped({ url: '/again' } as never, {} as never);
  expect(seen).toEqual(['/fast', '/slow', '/again']);
});

test('from Node.js 24 on the handler is left as it is', async () => {
  const handle = async () => undefined;
  expect(await withProviderContextReleased(handle, 24)).toBe(handle);
});
