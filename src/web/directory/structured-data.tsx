import type { Category, Product } from '../../contract/schemas.ts';
import { SITE_NAME } from '../components/layout.tsx';

/**
 * What machines read in a public page's head: schema.org JSON-LD on the listing page (Google's
 * `SoftwareApplication`, or `Product` for a digital product), and link previews (OpenGraph,
 * Twitter cards) on every public page. Everything stated comes from the listing as the API
 * serves it; nothing is inferred (no rating, no price but a free one, no operating system).
 *
 * The JSON-LD is a data block (`<script type="application/ld+json">`): browsers never run it,
 * so the pages' Content-Security-Policy is untouched, and it is written with every `<`, `>`, `&`
 * and line separator as a JSON escape, so no text of a listing can end the element early.
 */

/** Only https images are named: the pages' CSP shows no other remote image, and previews want https. */
function httpsUrl(u: string | null): string | undefined {
  return u && /^https:\/\//i.test(u) ? u : undefined;
}

/** The image a listing is shown with elsewhere: its cover, else its logo (https only). */
function listingImage(product: Product): string | undefined {
  return httpsUrl(product.cover) ?? httpsUrl(product.logo);
}

const JSON_IN_HTML: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/**
 * JSON for the inside of a `<script>` element: the same value once parsed, but with no `<`
 * (so no `</script>` or `<!--`), `>` or `&` in its text, and no U+2028/U+2029 (line ends to
 * older JavaScript parsers).
 */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => JSON_IN_HTML[c]!);
}

/** The schema.org object of a listing page. */
function listingJsonLd(product: Product, category: Category | undefined, pageUrl: string): Record<string, unknown> {
  const isProduct = product.product_type === 'digital_product';
  const image = listingImage(product);
  const data: Record<string, unknown> = {
    '@context': 'https://schema.org',
    '@type': isProduct ? 'Product' : 'SoftwareApplication',
    name: product.name,
    description: product.punchline,
    url: pageUrl,
  };
  if (image) data.image = image;
  // A category's name is free text to schema.org: applicationCategory on an application, category on a product.
  if (category) data[isProduct ? 'category' : 'applicationCategory'] = category.name;
  // Only a free listing has a price the directory knows.
  if (product.pricing_model === 'free') data.offers = { '@type': 'Offer', price: 0 };
  if (product.listed_at) data.datePublished = product.listed_at;
  return data;
}

interface PreviewProps {
  title: string;
  description: string;
  pageUrl: string;
  image?: string | undefined;
  /** A large card: only for a cover (a logo is a small square, shown in a summary card). */
  large?: boolean;
}

/** OpenGraph and Twitter card tags. */
function LinkPreview({ title, description, pageUrl, image, large = false }: PreviewProps) {
  return (
    <>
      <meta property="og:type" content="website" />
      <meta property="og:site_name" content={SITE_NAME} />
      <meta property="og:title" content={title} />
      <meta property="og:description" content={description} />
      <meta property="og:url" content={pageUrl} />
      {image && <meta property="og:image" content={image} />}
      <meta name="twitter:card" content={large ? 'summary_large_image' : 'summary'} />
    </>
  );
}

export interface ListingHeadProps {
  product: Product;
  category: Category | undefined;
  /** The listing page's absolute URL (on the service's public URL). */
  pageUrl: string;
}

/** The listing page's head: its JSON-LD and its link preview. */
export function ListingHead({ product, category, pageUrl }: ListingHeadProps) {
  return (
    <>
      <script type="application/ld+json" dangerouslySetInnerHTML={{ __html: jsonForScript(listingJsonLd(product, category, pageUrl)) }} />
      <LinkPreview title={product.name} description={product.punchline} pageUrl={pageUrl} image={listingImage(product)} large={httpsUrl(product.cover) !== undefined} />
    </>
  );
}

/** The link preview of the other public pages (home, category, search). */
export function SiteHead({ title, description, pageUrl }: { title: string; description: string; pageUrl: string }) {
  return <LinkPreview title={title} description={description} pageUrl={pageUrl} />;
}

/** Tells browsers and feed readers where a page's Atom feed is. */
export function FeedLink({ href, title }: { href: string; title: string }) {
  return <link rel="alternate" type="application/atom+xml" href={href} title={title} />;
}
