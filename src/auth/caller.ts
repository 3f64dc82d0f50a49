import type { Scope } from './scopes.ts';

/**
 * Who is calling an MCP tool: anonymous, or a maker through a connected app with the scopes
 * the maker granted it. Tool handlers get this, never the token itself.
 */
export type Caller =
  | { readonly kind: 'anonymous' }
  | {
      readonly kind: 'maker';
      readonly makerId: string;
      readonly clientId: string;
      readonly grantId: string;
      readonly scopes: ReadonlySet<string>;
      /**
       * The token is genuine but its grant could not be looked up (the database cannot be
       * reached): reads are served, anything the maker's account does is refused as unavailable.
       */
      readonly grantUnchecked?: true;
    };

export type ScopeCheck =
  | { ok: true; makerId: string }
  | { ok: false; status: 401; description: string; needed: readonly Scope[] }
  | { ok: false; status: 403; description: string; needed: readonly Scope[] };

/**
 * The one scope check of the maker tools: 401 without sign-in, 403 insufficient_scope naming
 * every scope the call needs (not only the missing ones, so the client asks for all of them).
 */
export function checkScopes(caller: Caller, needed: readonly Scope[]): ScopeCheck {
  if (caller.kind !== 'maker') {
    return { ok: false, status: 401, description: `Sign in first: this tool needs ${needed.join(' and ')}.`, needed };
  }
  const missing = needed.filter((s) => !caller.scopes.has(s));
  if (missing.length > 0) {
    return { ok: false, status: 403, description: `This app was not granted ${missing.join(' and ')}; this tool needs ${needed.join(' and ')}.`, needed };
  }
  return { ok: true, makerId: caller.makerId };
}
