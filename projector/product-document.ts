import { categorySchema, productSchema, type Category, type Product } from '../src/contract/schemas.ts';
import type { SearchDocument } from '../src/search/port.ts';
import { websiteFollowed } from '../src/catalog/listings/listing-rules.ts';
import { htmlToText } from '../src/search/text.ts';
import type { ListingRow } from './listing-source.ts';

export interface ProductDocument {
  /** The public Product, validated by the contract schema. */
  product: Product;
  /** The Product serialized once; stored in projection.products.doc and served as is. */
  doc: string;
  search: SearchDocument;
  /** Whether the listing page's link to the maker's site is followed (premium, or a verified badge). */
  websiteFollowed: boolean;
}

/** Today's date in UTC, yyyy-mm-dd: promos are public through the last day of expires_at (UTC). */
export function utcDate(now: Date): string {
  return now.toISOString().slice(0, 10);
}

function faqItems(faq: unknown): { question: string; answer: string }[] {
  if (!Array.isArray(faq)) return [];
  // Only the two public fields: the schema is strict and the write model may keep more.
  return faq.map((item: { question?: unknown; answer?: unknown }) => ({
    question: item?.question as string,
    answer: item?.answer as string,
  }));
}

/**
 * The public Product of a live listing, exactly as the spec defines it. Throws (a zod error)
 * when the listing cannot form a valid Product.
 */
export function buildProductDocument(row: ListingRow, siteUrl: string, todayUtc: string): ProductDocument {
  const premium = row.plan === 'premium';
  const promoShown = row.promo_code !== null && (row.promo_expires_at === null || row.promo_expires_at >= todayUtc);
  // Key order is the spec's table order: the schema's shape keeps it, and JSON.stringify follows it.
  const product = productSchema.parse({
    id: row.id,
    slug: row.slug,
    name: row.name,
    punchline: row.punchline,
    description: row.description,
    url: `${siteUrl}/products/${row.slug}`,
    website: row.website,
    logo: row.logo,
    cover: row.cover,
    category: row.category,
    labels: row.labels,
    tags: row.tags,
    product_type: row.product_type,
    pricing_model: row.pricing_model,
    social: row.social === null ? null : row.social.replace(/^@+/, ''),
    featured: row.featured,
    listed_at: row.listed_at === null ? null : row.listed_at.toISOString(),
    highlights: premium ? row.highlights : [],
    ideal_for: premium ? row.ideal_for : [],
    faq: premium ? faqItems(row.faq) : [],
    promo: promoShown
      ? { code: row.promo_code, discount: row.promo_discount, url: row.promo_url, expires_at: row.promo_expires_at }
      : null,
  });
  const search: SearchDocument = {
    id: product.id,
    name: product.name,
    punchline: product.punchline,
    description_text: htmlToText(product.description),
    category: product.category,
    labels: product.labels,
    tags: product.tags,
    listed_at: row.listed_at === null ? null : row.listed_at.getTime(),
  };
  return { product, doc: JSON.stringify(product), search, websiteFollowed: websiteFollowed(row.plan, row.badge_status === 'verified') };
}

export interface CategoryRow {
  slug: string;
  name: string;
  noun: string;
  count: number;
}

/** The public Category with its live count, validated and serialized once. */
export function buildCategoryDocument(row: CategoryRow, siteUrl: string): { category: Category; doc: string } {
  const category = categorySchema.parse({
    slug: row.slug,
    name: row.name,
    noun: row.noun,
    url: `${siteUrl}/categories/${row.slug}`,
    count: row.count,
  });
  return { category, doc: JSON.stringify(category) };
}
