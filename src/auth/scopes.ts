/**
 * The OAuth scopes a connected app may be granted, and what each lets it do, in the words the consent
 * page and the Connected apps page use.
 */
export const SCOPES = ['listings:read', 'listings:write', 'offline_access'] as const;
export type Scope = (typeof SCOPES)[number];

/** Scopes that belong to the MCP endpoint (the resource); offline_access belongs to the server. */
export const RESOURCE_SCOPES: readonly Scope[] = ['listings:read', 'listings:write'];

export const SCOPE_MEANINGS: Record<Scope, string> = {
  'listings:read': "See your listings with their status, plan, review feedback and badge status, and check a listing's badge.",
  'listings:write':
    'Edit the website, name, punchline, description, category, pricing model and social handle of your listings (under the review rules), submit new listings to your account, and get payment links for the premium plan.',
  offline_access: 'Stay connected until you disconnect it, renewing its access without asking you again.',
};

/** What no connected app can ever do, whatever it is granted: no scope reaches these. */
export const NEVER_ALLOWED: readonly string[] = [
  'pay for anything: payment always happens in your browser, at the payment provider',
  'publish a listing without the automatic check',
  "see other makers' listings",
  'read your e-mail address, billing details or password',
];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
