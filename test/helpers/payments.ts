import { findOrCreateMaker } from '../../src/auth/makers.ts';
import { parsePage } from './html.ts';
import type { TestStack } from './stack.ts';
import { insertListing, type ListingInput } from './write-model.ts';

/**
 * Listings with a maker and their payments, for the payment tests: a live free listing whose
 * premium profile is already written (shown publicly only once the plan is premium), and a
 * payment link made by the service's own PaymentLinks, as upgrade_listing makes it.
 */
export const PREMIUM_PROFILE = {
  highlights: ['Renders in the browser', 'Exports SVG'],
  ideal_for: ['Designers', 'Small teams'],
  faq: [{ question: 'Is there a free tier?', answer: 'Yes, for personal use.' }],
};

export interface MakerListing {
  makerId: string;
  email: string;
  listingId: string;
  slug: string;
  name: string;
}

export async function makerListing(stack: TestStack, email: string, input: ListingInput = {}): Promise<MakerListing> {
  const maker = await findOrCreateMaker(stack.db.pool, email);
  const slug = input.slug ?? `paid-${Math.random().toString(36).slice(2, 10)}`;
  const name = input.name ?? `Listing ${slug}`;
  const listingId = await insertListing(stack.db.pool, { ...PREMIUM_PROFILE, slug, name, ...input });
  await stack.db.pool.query('UPDATE catalog.listings SET maker_id = $1 WHERE id = $2', [maker.id, listingId]);
  return { makerId: maker.id, email, listingId, slug, name };
}

/** A payment link for the listing, as upgrade_listing gets it; returns its id and URL. */
export async function paymentFor(stack: TestStack, listing: MakerListing): Promise<{ id: string; url: string }> {
  const link = await stack.service.maker.payments.linkFor({ id: listing.listingId, makerId: listing.makerId });
  return { id: new URL(link.url).pathname.split('/').pop()!, url: link.url };
}

export interface PaymentRow {
  status: string;
  provider: string;
  provider_ref: string | null;
  paid_at: Date | null;
  plan: string;
}

export async function paymentRow(stack: TestStack, id: string): Promise<PaymentRow> {
  const { rows } = await stack.db.pool.query<PaymentRow>(
    `SELECT p.status, p.provider, p.provider_ref, p.paid_at, l.plan::text AS plan
       FROM catalog.payments p JOIN catalog.listings l ON l.id = p.listing_id WHERE p.id = $1`,
    [id],
  );
  return rows[0]!;
}

/** Outbox rows written for the listing: one per change of what it shows publicly. */
export async function outboxCount(stack: TestStack, listingId: string): Promise<number> {
  const { rows } = await stack.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog.outbox WHERE listing_id = $1', [listingId]);
  return rows[0]!.n;
}

export async function productOf(stack: TestStack, slug: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${stack.baseUrl}/api/v1/products/${slug}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The pay page as a visitor reads it. */
export function readPayPage(html: string) {
  const page = parsePage(html);
  const buttons = page.texts('button').map((t) => t.trim());
  return {
    h1: page.texts('h1')[0]?.trim(),
    text: page.texts('main')[0]?.replace(/\s+/g, ' ') ?? '',
    buttons,
    forms: page.all('form').map((f) => page.attr(f, 'action')),
    links: page.all('a').map((a) => ({ text: page.text(a).trim(), href: page.attr(a, 'href') })),
    status: page
      .all('span')
      .filter((s) => /\bbadge\b/.test(page.attr(s, 'class') ?? ''))
      .map((s) => page.text(s)),
  };
}
