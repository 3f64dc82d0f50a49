/** oidc-provider's own request storage (see src/auth/provider-context.ts); not part of its typed API. */
declare module 'oidc-provider/lib/helpers/als.js' {
  const storage: unknown;
  export default storage;
}
