/**
 * Where a listing can be reached: its public page on the directory (SITE_URL) and the maker's
 * pages on this service (PUBLIC_URL). Every command that answers with a listing builds its links
 * from these.
 */
export interface ListingUrls {
  siteUrl: string;
  publicUrl: string;
}

/** The maker's pages, relative to PUBLIC_URL. */
export const LISTING_PAGES = { dashboard: '/dashboard', edit: (slug: string) => `/dashboard/listings/${slug}` } as const;
