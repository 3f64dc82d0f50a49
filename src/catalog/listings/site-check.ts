import { badRequest } from '../../contract/errors.ts';
import { WEBSITE_LOCK_CLASS } from '../../db/locks.ts';
import type { PoolClient, Queryable } from '../../db/pool.ts';
import { inspectSite, type SiteInspection } from '../../sites/inspect-site.ts';
import type { SiteFetcher } from '../../sites/safe-fetch.ts';
import { SiteFetchError } from '../../sites/site-fetch-error.ts';
import { automaticCheck, blocklistEntryFor, type CheckReason, type SiteFacts } from './listing-rules.ts';
import type { ListingUrls } from './listing-urls.ts';

/**
 * What a listing's site goes through, on submission (submissions.ts) and on a change of website
 * (maker-listings.ts) alike: the host is refused when it leads to an address the service never
 * connects to; the site is read through the safe fetcher and inspected (always outside any
 * transaction); the automatic check decides with the listing's fields; and the site must not
 * already be another listing's (by website identity, src/sites/website-identity.ts).
 */
export interface SiteCheckDeps {
  readonly fetcher: SiteFetcher;
  readonly hostRefusal: (hostname: string) => Promise<string | null>;
  /** Hosts whose sites are held for review (SITE_BLOCKLIST). */
  readonly blocklist: readonly string[];
}

export interface InspectedSite {
  readonly facts: SiteFacts;
  readonly inspection: SiteInspection | undefined;
}

/** Refuses, before anything is read or saved, a website whose name leads to an address the service never connects to. */
export async function assertReachableHost(deps: Pick<SiteCheckDeps, 'hostRefusal'>, website: string): Promise<void> {
  const refusal = await deps.hostRefusal(new URL(website).hostname);
  if (refusal) throw badRequest([{ path: ['website'], message: `The website is not reachable from the internet: ${refusal}.` }]);
}

function hostKey(url: string): string {
  return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
}

/** Reads and inspects the site; a site that cannot be read is a fact for the check, not an error. */
export async function inspectListingSite(fetcher: SiteFetcher, website: string): Promise<InspectedSite> {
  try {
    const inspection = await inspectSite(website, fetcher);
    const redirectedElsewhere = hostKey(inspection.url) !== hostKey(website);
    return {
      inspection,
      facts: { reachable: true, redirectedElsewhere, hasCover: inspection.cover !== null, hasIcon: inspection.icons.length > 0 },
    };
  } catch (err) {
    if (!(err instanceof SiteFetchError)) throw err;
    return { inspection: undefined, facts: { reachable: false, problem: err.message, hasCover: false, hasIcon: false } };
  }
}

/** The icon a listing shows as its logo: an apple-touch-icon, else the largest declared, else any. */
export function bestIcon(inspection: SiteInspection | undefined): string | null {
  const icons = inspection?.icons ?? [];
  const size = (s: string | null) => Math.max(0, ...(s ?? '').split(/\s+/).map((d) => Number(d.split('x')[0]) || 0));
  const touch = icons.find((i) => i.rel.startsWith('apple-touch-icon'));
  if (touch) return touch.url;
  const sorted = [...icons].sort((a, b) => size(b.sizes) - size(a.sizes));
  return sorted[0]?.url ?? null;
}

/** The site as the reviewer sees it (catalog.listings.site_snapshot). */
export function siteSnapshot({ facts, inspection }: InspectedSite): Record<string, unknown> {
  return inspection
    ? { url: inspection.url, title: inspection.title, description: inspection.description, cover: inspection.cover, icon: bestIcon(inspection), faq: inspection.faq.length }
    : { problem: facts.problem ?? null };
}

export interface CheckedFields {
  readonly name?: string | null | undefined;
  readonly punchline?: string | null | undefined;
  readonly description?: string | null | undefined;
  readonly category?: string | null | undefined;
}

/**
 * The automatic check of a listing on this site (listing-rules.ts), plus the one rule of the
 * site's images: a site that was read and offers no usable cover image or icon waits for review.
 */
export function checkListingSite(deps: Pick<SiteCheckDeps, 'blocklist'>, website: string, site: InspectedSite, fields: CheckedFields): { publish: boolean; reasons: CheckReason[] } {
  const check = automaticCheck({
    site: site.facts,
    name: fields.name ?? undefined,
    punchline: fields.punchline ?? undefined,
    description: fields.description ?? undefined,
    category: fields.category ?? undefined,
    blockedBy: blocklistEntryFor(new URL(website).hostname, deps.blocklist),
  });
  const reasons = [...check.reasons];
  if (!site.facts.hasCover && !site.facts.hasIcon && site.facts.reachable) reasons.push({ code: 'no_image', message: 'The site offers no usable cover image or icon.' });
  return { publish: check.publish && reasons.length === 0, reasons };
}

// ---------------------------------------------------------------------------------------------
// Whose site it is

/**
 * Everything that gives a listing a website (a submission, a change of website) takes this
 * transaction-level lock on the site's identity and asks the duplicate rules again under it, so
 * two requests for one site at once, in any processes, never give it to two listings.
 */
export async function lockWebsite(client: PoolClient, websiteKey: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [WEBSITE_LOCK_CLASS, websiteKey]);
}

export interface ListedSite {
  readonly slug: string;
  readonly name: string;
  readonly url: string;
}

/**
 * The listing that holds this site in the directory for everyone but its maker: a live listing
 * of that website identity (whoever listed it), or one whose change of website waits for review
 * and which keeps this site reserved (any maker but `makerId`; a rejected listing reserves
 * nothing). `exceptListingId`: the listing being edited.
 */
export async function listedSite(db: Queryable, urls: ListingUrls, websiteKey: string, opts: { makerId: string; exceptListingId?: string }): Promise<ListedSite | undefined> {
  const { rows } = await db.query<{ slug: string; name: string }>(
    `SELECT slug, name FROM catalog.listings
      WHERE id IS DISTINCT FROM $3::uuid
        AND ((website_key = $1 AND status = 'live')
          OR (previous_website_key = $1 AND status <> 'rejected' AND maker_id IS DISTINCT FROM $2::uuid))
      ORDER BY status = 'live' DESC, listed_at, created_at LIMIT 1`,
    [websiteKey, opts.makerId, opts.exceptListingId ?? null],
  );
  return rows[0] ? { slug: rows[0].slug, name: rows[0].name, url: `${urls.siteUrl}/products/${rows[0].slug}` } : undefined;
}
