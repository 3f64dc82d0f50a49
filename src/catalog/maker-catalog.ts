import type { Pool } from '../db/pool.ts';
import type { SiteFetcher } from '../sites/safe-fetch.ts';
import type { ListingUrls } from './listings/listing-urls.ts';
import type { PaymentLinks } from './payments/payment-port.ts';

/**
 * What the makers' commands need, built once per process: the write model, the safe site
 * fetcher, where pages live, payments, and the submission limits. The MCP tools and the maker
 * pages get the same object.
 */
export interface MakerCatalog {
  readonly pool: Pool;
  readonly fetcher: SiteFetcher;
  /** Why a site's host name is refused (it resolves to a private address…), or null; no connection is made. */
  readonly hostRefusal: (hostname: string) => Promise<string | null>;
  readonly urls: ListingUrls;
  readonly payments: PaymentLinks;
  /** Drafts accepted from everyone in any 24 hours (DRAFT_CAP_PER_DAY). */
  readonly draftCapPerDay: number;
  /** Hosts whose sites always wait for review (SITE_BLOCKLIST). */
  readonly blocklist: readonly string[];
  /** The clock; tests may move it. */
  readonly now?: () => Date;
}
