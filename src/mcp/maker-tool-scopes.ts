import type { Scope } from '../auth/scopes.ts';

/**
 * The scopes each maker tool needs. submit_product needs none: without
 * listings:write it saves a private draft instead. Checked before the request reaches the MCP
 * server (mcp-auth.ts), so a client gets 401 or 403 with a challenge it can act on.
 */
export const MAKER_TOOL_SCOPES: Readonly<Record<string, readonly Scope[]>> = {
  my_listings: ['listings:read'],
  check_badge: ['listings:read'],
  update_listing: ['listings:read', 'listings:write'],
  upgrade_listing: ['listings:read', 'listings:write'],
};
