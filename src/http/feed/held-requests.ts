import type { HeldLimits } from '../../config/config.ts';
import { heldFull, tooManyHeld, type CatalogError, type HeldKind } from '../../contract/errors.ts';

/**
 * Counts the requests of one kind held open at once (change-feed long polls, exports), per
 * address, per consumer key and in the process, and refuses one past a cap (docs/connections.md):
 * 429 TOO_MANY_REQUESTS past its address's (or key's) cap, 503 SERVICE_UNAVAILABLE past the
 * process's; both with Retry-After. A keyed request counts against its key's cap instead of its
 * address's, as it spends the key's budgets: consumers behind one address (a NAT, a proxy) do not
 * share a cap, and a key's holder sets no more than it was given.
 */
export interface HeldRequests {
  /** Takes a place for a request; release() gives it back (once, whatever calls it again). */
  take(holder: HeldHolder): { readonly ok: true; release(): void } | { readonly ok: false; readonly error: CatalogError };
  /** Places taken now. */
  readonly open: number;
  /** Requests refused since start: over an address's or key's cap, over the process's. */
  readonly refused: { holder: number; total: number };
}

/** Whose cap a request counts against: its address's network (request.clientNetwork), or its consumer key's id. */
export type HeldHolder = { readonly kind: 'address' | 'key'; readonly id: string };

export function createHeldRequests(kind: HeldKind, limits: HeldLimits): HeldRequests {
  const byHolder = new Map<string, number>();
  let open = 0;
  const refused = { holder: 0, total: 0 };
  return {
    take(holder) {
      const name = `${holder.kind === 'key' ? 'k' : 'a'}:${holder.id}`;
      const cap = holder.kind === 'key' ? limits.perKey : limits.perAddress;
      const mine = byHolder.get(name) ?? 0;
      if (mine >= cap) {
        refused.holder++;
        return { ok: false, error: tooManyHeld(kind, cap, holder.kind) };
      }
      if (open >= limits.total) {
        refused.total++;
        return { ok: false, error: heldFull(kind) };
      }
      byHolder.set(name, mine + 1);
      open++;
      let released = false;
      return {
        ok: true,
        release() {
          if (released) return;
          released = true;
          open--;
          const left = (byHolder.get(name) ?? 1) - 1;
          if (left > 0) byHolder.set(name, left);
          else byHolder.delete(name);
        },
      };
    },
    get open() {
      return open;
    },
    refused,
  };
}
