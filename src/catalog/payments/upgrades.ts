import { conflict } from '../../contract/errors.ts';
import type { Pool } from '../../db/pool.ts';
import { decideUpgrade } from '../listings/listing-rules.ts';
import { getMakerListing, type MakerListing } from '../listings/maker-listings.ts';
import type { ListingUrls } from '../listings/listing-urls.ts';
import type { PaymentLink, PaymentLinks } from './payment-port.ts';

/**
 * upgrade_listing: a payment link, with its price, for moving one of the maker's live free
 * listings to the premium plan. Nothing is charged: the plan changes when the payment provider
 * confirms the maker paid in the browser (src/payments).
 */
export async function requestUpgrade(pool: Pool, urls: ListingUrls, payments: PaymentLinks, makerId: string, slug: string): Promise<{ listing: MakerListing; payment: PaymentLink }> {
  const listing = await getMakerListing(pool, urls, makerId, slug);
  const decision = decideUpgrade(listing.state);
  if (!decision.allowed) throw conflict(decision.message);
  return { listing, payment: await payments.linkFor({ id: listing.id, makerId }) };
}
