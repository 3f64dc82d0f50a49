import type { ComponentChildren } from 'preact';
import type { Category, Product, SearchResult, ValidationIssue } from '../../contract/schemas.ts';
import { Page, SITE_NAME } from '../components/layout.tsx';
import { siteScript } from '../stylesheet.ts';

/**
 * The directory's public pages: home, search, category, listing and not-found. They are the same
 * for every visitor (edges cache them), so they render with no session.
 */

/** Only http(s) addresses become links: a `javascript:` website must never be clickable. */
function linkUrl(u: string | null): string | undefined {
  return u && /^https?:\/\//i.test(u) ? u : undefined;
}

/** Only https images are shown: the pages' CSP allows no other remote image. */
function imageUrl(u: string | null): string | undefined {
  return u && /^https:\/\//i.test(u) ? u : undefined;
}

const words = (value: string) => value.replace(/[_-]/g, ' ');

/** The filters a search page can combine, by their parameter names. */
export interface SearchFilters {
  q?: string;
  category?: string;
  label?: string;
  tag?: string;
  /** Listings per page when the address names it (the API's default otherwise). */
  limit?: string;
}

const FILTER_NAMES = ['q', 'category', 'label', 'tag'] as const;

/** A search page's path: its filters in one fixed order, page 1 left out. */
export function searchHref(filters: SearchFilters, page = 1): string {
  const qs = new URLSearchParams();
  for (const name of FILTER_NAMES) {
    const v = filters[name];
    if (v !== undefined && v !== '') qs.set(name, v);
  }
  if (page > 1) qs.set('page', String(page));
  if (filters.limit !== undefined && filters.limit !== '') qs.set('limit', filters.limit);
  const s = qs.toString();
  return s ? `/search?${s}` : '/search';
}

/**
 * The maker's logo, or a neutral tile with the name's first letter. The image lies over the
 * letter: with an empty alt, a browser draws nothing for an image that fails to load, so a
 * broken logo shows the tile, with or without JavaScript. Sized, so the page never jumps.
 */
function Logo({ product: p, size, lazy = true }: { product: Product; size: number; lazy?: boolean }) {
  const src = imageUrl(p.logo);
  const initial = [...p.name.trim()][0]?.toUpperCase() ?? '?';
  return (
    <span class={`logo logo-${size}`} aria-hidden="true">
      <span class="logo-initial">{initial}</span>
      {src && <img src={src} alt="" width={size} height={size} loading={lazy ? 'lazy' : undefined} decoding="async" />}
    </span>
  );
}

function Featured() {
  return <span class="featured-mark">Featured</span>;
}

/** A listing in a list: logo, name, punchline, its category and pricing, featured mark. */
function ProductCard({ product: p, categories, heading }: { product: Product; categories: ReadonlyMap<string, Category>; heading: 2 | 3 }) {
  const H = heading === 2 ? 'h2' : 'h3';
  const category = p.category ? categories.get(p.category) : undefined;
  const meta = [
    p.category ? <a href={`/categories/${p.category}`}>{category?.name ?? p.category}</a> : null,
    p.pricing_model ? words(p.pricing_model) : null,
  ].filter((m) => m !== null);
  return (
    <li class="product-card">
      <Logo product={p} size={48} />
      <div class="product-card-body">
        <H class="product-card-title">
          <a href={`/products/${p.slug}`}>{p.name}</a>
          {p.featured && <> <Featured /></>}
        </H>
        <p class="punchline">{p.punchline}</p>
        {meta.length > 0 && <p class="product-card-meta muted">{meta.flatMap((m, i) => (i === 0 ? [m] : [' · ', m]))}</p>}
      </div>
    </li>
  );
}

function ProductList({ products, categories, heading, empty }: { products: readonly Product[]; categories: ReadonlyMap<string, Category>; heading: 2 | 3; empty?: ComponentChildren }) {
  if (products.length === 0) return <p class="muted">{empty ?? 'No live listings here yet.'}</p>;
  return (
    <ul class="product-list">
      {products.map((p) => (
        <ProductCard product={p} categories={categories} heading={heading} />
      ))}
    </ul>
  );
}

/** Pages of a list: previous, a window of numbers around this one, the first and last, next. */
function Pagination({ page, pages, href }: { page: number; pages: number; href: (page: number) => string }) {
  if (pages <= 1 || page > pages) return null;
  const shown = new Set([1, pages, page - 2, page - 1, page, page + 1, page + 2].filter((n) => n >= 1 && n <= pages));
  const numbers = [...shown].sort((a, b) => a - b);
  const items: ComponentChildren[] = [];
  numbers.forEach((n, i) => {
    if (i > 0 && n - numbers[i - 1]! > 1) items.push(<li class="gap" aria-hidden="true">…</li>);
    items.push(
      <li>
        {n === page ? (
          <a href={href(n)} aria-current="page">
            {n}
          </a>
        ) : (
          <a href={href(n)} aria-label={`Page ${n}`}>
            {n}
          </a>
        )}
      </li>,
    );
  });
  return (
    <nav class="pagination" aria-label="Pages">
      {page > 1 && (
        <a href={href(page - 1)} rel="prev">
          Previous
        </a>
      )}
      <ol>{items}</ol>
      {page < pages && (
        <a href={href(page + 1)} rel="next">
          Next
        </a>
      )}
    </nav>
  );
}

/** What a page number past the end shows: where the list ends, with a link to its last page. */
function PastTheEnd({ page, pages, href }: { page: number; pages: number; href: string }) {
  return (
    <p class="notice" role="status">
      There is no page {page}: the list ends at page {pages}. <a href={href}>Go to page {pages}</a>
    </p>
  );
}

export function categoryMap(categories: readonly Category[]): Map<string, Category> {
  return new Map(categories.map((c) => [c.slug, c]));
}

export interface PageLinks {
  /** The page's absolute canonical URL. */
  canonical: string;
  /** Link previews, structured data, feed links for the document head. */
  head?: ComponentChildren;
}

export function HomePage({ categories, latest, links }: { categories: readonly Category[]; latest: SearchResult; links: PageLinks }) {
  const byslug = categoryMap(categories);
  return (
    <Page title={SITE_NAME} nav="home" session={null} description={`${latest.total} live listings of software and digital products.`} canonical={links.canonical} head={links.head}>
      <h1>{SITE_NAME}</h1>
      <p class="lead">
        {latest.total} live listings. Search them above, or read them as JSON at <a href="/api/v1/docs">/api/v1</a> and over MCP at <code>/api/mcp</code>.
      </p>
      <h2>Newest</h2>
      <ProductList products={latest.products} categories={byslug} heading={3} />
      <p>
        <a href="/search">All listings</a> · <a href="/feed.xml">Feed of the newest</a>
      </p>
      <h2 id="categories">Categories</h2>
      <ul class="category-list">
        {categories.map((c) => (
          <li>
            <a href={`/categories/${c.slug}`}>{c.name}</a>{' '}
            <span class="muted">
              {c.count} {c.noun}
            </span>
          </li>
        ))}
      </ul>
    </Page>
  );
}

function Facts({ product: p, category }: { product: Product; category: Category | undefined }) {
  const facts = [
    p.category ? <a href={`/categories/${p.category}`}>{category?.name ?? p.category}</a> : null,
    p.pricing_model ? words(p.pricing_model) : null,
    p.product_type ? words(p.product_type) : null,
    p.listed_at ? <>listed <time dateTime={p.listed_at}>{p.listed_at.slice(0, 10)}</time></> : null,
    p.featured ? <Featured /> : null,
  ].filter((f) => f !== null);
  if (facts.length === 0) return null;
  return <p class="facts">{facts.flatMap((f, i) => (i === 0 ? [f] : [' · ', f]))}</p>;
}

/** Today in UTC as yyyy-mm-dd, the form of a promo's last day. */
function todayUtc(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/**
 * The maker's promo while it is valid: the projection drops it after its last day; a promo whose
 * last day passed but whose lapse is not projected yet is not shown either.
 */
function Promo({ product: p, now }: { product: Product; now: Date }) {
  const promo = p.promo;
  if (!promo || (promo.expires_at !== null && promo.expires_at < todayUtc(now))) return null;
  const redeem = linkUrl(promo.url) ?? linkUrl(p.website);
  return (
    <section class="promo" aria-labelledby="promo-heading">
      <h2 id="promo-heading">Offer for visitors</h2>
      <p class="promo-offer">{promo.discount}</p>
      <p>
        Code <code class="promo-code">{promo.code}</code>
        {promo.expires_at ? (
          <>
            {' '}
            · last day <time dateTime={promo.expires_at}>{promo.expires_at}</time>
          </>
        ) : (
          ' · no end date'
        )}
      </p>
      {redeem && (
        <p>
          <a href={redeem} rel="nofollow noopener">
            Redeem on {new URL(redeem).hostname}
          </a>
        </p>
      )}
    </section>
  );
}

function BulletSection({ title, items }: { title: string; items: readonly string[] }) {
  if (items.length === 0) return null;
  return (
    <section>
      <h2>{title}</h2>
      <ul>
        {items.map((item) => (
          <li>{item}</li>
        ))}
      </ul>
    </section>
  );
}

/** Labels and tags, each a link to the search for it. */
function TagLinks({ product: p }: { product: Product }) {
  if (p.labels.length === 0 && p.tags.length === 0) return null;
  return (
    <ul class="tags" aria-label="Labels and tags">
      {p.labels.map((l) => (
        <li>
          <a class="label" href={searchHref({ label: l })}>
            {words(l)}
          </a>
        </li>
      ))}
      {p.tags.map((t) => (
        <li>
          <a href={searchHref({ tag: t })}>#{t}</a>
        </li>
      ))}
    </ul>
  );
}

export interface ListingPageProps {
  product: Product;
  category: Category | undefined;
  websiteFollowed: boolean;
  /** Other live listings of the same category, newest first. */
  related: readonly Product[];
  categories: ReadonlyMap<string, Category>;
  links: PageLinks;
  now: Date;
}

/**
 * The listing page. The link to the maker's site is followed (rel="noopener" only) for premium
 * listings and for free listings whose badge was verified; otherwise it is nofollow.
 */
export function ListingPage({ product: p, category, websiteFollowed, related, categories, links, now }: ListingPageProps) {
  const website = linkUrl(p.website);
  const cover = imageUrl(p.cover);
  const noun = category?.noun ?? 'listings';
  return (
    <Page title={`${p.name}: ${p.punchline}`} session={null} description={p.punchline} canonical={links.canonical} head={links.head}>
      <article class="listing">
        <div class="listing-header">
          <Logo product={p} size={64} lazy={false} />
          <div>
            <h1>{p.name}</h1>
            <p class="lead">{p.punchline}</p>
          </div>
        </div>
        <Facts product={p} category={category} />
        {website && (
          <p>
            <a class="button" href={website} rel={websiteFollowed ? 'noopener' : 'nofollow noopener'}>
              Visit {p.name}
            </a>
          </p>
        )}
        <div class={cover ? 'cover' : 'cover cover-none'}>{cover && <img src={cover} alt="" width={1200} height={630} loading="lazy" decoding="async" />}</div>
        {/* Its own heading, so the description's headings (h2–h4) follow the page's in order. */}
        <h2 class="visually-hidden">About {p.name}</h2>
        {/* Sanitized when the listing was written; shown as the API serves it. */}
        <div class="description" dangerouslySetInnerHTML={{ __html: p.description }} />
        <Promo product={p} now={now} />
        <BulletSection title="Highlights" items={p.highlights} />
        <BulletSection title="Ideal for" items={p.ideal_for} />
        {p.faq.length > 0 && (
          <section>
            <h2>Questions</h2>
            <dl class="faq">
              {p.faq.map((f) => (
                <>
                  <dt>{f.question}</dt>
                  <dd>{f.answer}</dd>
                </>
              ))}
            </dl>
          </section>
        )}
        <TagLinks product={p} />
        {p.social && <p class="muted">@{p.social}</p>}
      </article>
      {category && related.length > 0 && (
        <section class="related" aria-labelledby="related-heading">
          <h2 id="related-heading">
            More {noun} in {category.name}
          </h2>
          <ProductList products={related} categories={categories} heading={3} />
          <p>
            <a href={`/categories/${category.slug}`}>
              All {category.count} {noun} in {category.name}
            </a>
          </p>
        </section>
      )}
    </Page>
  );
}

export interface CategoryPageProps {
  category: Category;
  result: SearchResult;
  /** Pages of this category's list. */
  pages: number;
  /** The page asked for when it is past the end (the last page's link is shown instead of a list). */
  pastTheEnd?: number;
  /** Why the page asked for is not one (a 400): the first page is shown with the reason. */
  refused?: string;
  categories: ReadonlyMap<string, Category>;
  links: PageLinks;
}

export function CategoryPage({ category, result, pages, pastTheEnd, refused, categories, links }: CategoryPageProps) {
  const base = `/categories/${category.slug}`;
  const href = (n: number) => (n > 1 ? `${base}?page=${n}` : base);
  const title = pages > 1 && pastTheEnd === undefined && result.page > 1 ? `${category.name}, page ${result.page}` : category.name;
  return (
    <Page title={title} nav="categories" session={null} description={`${category.count} ${category.noun} in ${category.name}.`} canonical={links.canonical} head={links.head}>
      <h1>{category.name}</h1>
      <p class="lead">
        {category.count} {category.noun}, newest first
        {pages > 1 && pastTheEnd === undefined && ` · page ${result.page} of ${pages}`}
      </p>
      {refused && (
        <p class="notice notice-error" role="alert">
          {refused}
        </p>
      )}
      {pastTheEnd !== undefined ? (
        <PastTheEnd page={pastTheEnd} pages={pages} href={href(pages)} />
      ) : (
        <ProductList products={result.products} categories={categories} heading={2} empty={`No live ${category.noun} here yet.`} />
      )}
      <Pagination page={result.page} pages={pages} href={href} />
      <p>
        <a href={searchHref({ category: category.slug })}>Search the {category.noun} in {category.name}</a> · <a href={`${base}/feed.xml`}>Feed of the newest {category.noun}</a>
      </p>
    </Page>
  );
}

/** The last page a search can show: the API pages up to 500. */
const SEARCH_PAGE_MAX = 500;

export interface SearchPageProps {
  /** The filters as asked for (shown back, even when refused). */
  filters: SearchFilters;
  /** The answer, when the search was run. */
  result?: SearchResult;
  /** Why the search was refused (a 400): one issue per parameter. */
  issues?: readonly ValidationIssue[];
  categories: readonly Category[];
  links: PageLinks;
}

function issueText(issue: ValidationIssue): string {
  const name = issue.path.length > 0 ? issue.path.join('.') : 'the query';
  return `${name}: ${issue.message}`;
}

/** The active filters, each with a link that removes it. */
function ActiveFilters({ filters, categories }: { filters: SearchFilters; categories: ReadonlyMap<string, Category> }) {
  const active = FILTER_NAMES.filter((n) => filters[n] !== undefined && filters[n] !== '');
  if (active.length === 0) return null;
  const shown = (n: (typeof FILTER_NAMES)[number]) => {
    const v = filters[n]!;
    if (n === 'q') return `“${v}”`;
    if (n === 'category') return categories.get(v)?.name ?? v;
    if (n === 'tag') return `#${v}`;
    return words(v);
  };
  const label = { q: 'Words', category: 'Category', label: 'Label', tag: 'Tag' } as const;
  return (
    <ul class="filters" aria-label="Active filters">
      {active.map((n) => (
        <li>
          {label[n]}: {shown(n)}{' '}
          <a href={searchHref({ ...filters, [n]: undefined })} aria-label={`Remove the filter ${label[n]}: ${shown(n)}`}>
            ×
          </a>
        </li>
      ))}
    </ul>
  );
}

/**
 * The search page: the same search as `GET /api/v1/search` (same rules, order and refusals),
 * rendered on the server. A refused parameter is a message on the page (status 400), which stays
 * usable: the search box, the filters and the categories are still there.
 */
export function SearchPage({ filters, result, issues, categories, links }: SearchPageProps) {
  const byslug = categoryMap(categories);
  const pages = result ? Math.min(SEARCH_PAGE_MAX, Math.max(1, Math.ceil(result.total / result.limit))) : 1;
  const past = result !== undefined && result.total > 0 && result.products.length === 0 && result.page > pages;
  const heading = filters.q ? `Search: ${filters.q}` : 'All listings';
  const category = filters.category ? byslug.get(filters.category) : undefined;
  const title = result && result.page > 1 && !past ? `${heading}, page ${result.page}` : heading;
  const script = siteScript();
  return (
    <Page
      title={title}
      session={null}
      description={`Search ${SITE_NAME}: live listings of software and digital products.`}
      canonical={links.canonical}
      head={
        <>
          {links.head}
          <script src={script.href} defer />
        </>
      }
      {...(filters.q !== undefined && { query: filters.q })}
    >
      {/* What search.js replaces as one types; the announcement stays, so a screen reader hears the new count. */}
      <p id="search-announce" class="visually-hidden" aria-live="polite" />
      <div id="search-results">
        <h1>{filters.q ? 'Search results' : 'All listings'}</h1>
        <div class="search-layout">
          <div>
            {issues && (
              <div class="notice notice-error" role="alert">
                <p>This search cannot be run:</p>
                <ul>
                  {issues.map((i) => (
                    <li>{issueText(i)}</li>
                  ))}
                </ul>
              </div>
            )}
            <ActiveFilters filters={filters} categories={byslug} />
            {result && (
              <>
                <p class="lead" role="status">
                  {result.total === 0
                    ? 'No live listing matches.'
                    : `${result.total} ${result.total === 1 ? 'listing' : 'listings'}${category ? ` in ${category.name}` : ''}, newest first${pages > 1 && !past ? ` · page ${result.page} of ${pages}` : ''}`}
                </p>
                {past ? (
                  <PastTheEnd page={result.page} pages={pages} href={searchHref(filters, pages)} />
                ) : (
                  <ProductList products={result.products} categories={byslug} heading={2} empty="Try fewer words or another filter." />
                )}
                <Pagination page={result.page} pages={pages} href={(n) => searchHref(filters, n)} />
              </>
            )}
          </div>
          <nav class="search-categories" aria-label="Categories">
            <h2>Categories</h2>
            <ul>
              {categories.map((c) => (
                <li>
                  <a href={searchHref({ ...filters, category: c.slug })} aria-current={filters.category === c.slug ? 'true' : undefined}>
                    {c.name}
                  </a>{' '}
                  <span class="muted">{c.count}</span>
                </li>
              ))}
            </ul>
          </nav>
        </div>
      </div>
    </Page>
  );
}

export function NotFoundPage({ message, links }: { message: string; links?: PageLinks }) {
  return (
    <Page title="Not found" session={null} {...(links && { canonical: links.canonical })}>
      <h1>Not found</h1>
      <p>{message}</p>
      <p>
        <a href="/">Back to the directory</a> or <a href="/search">search the listings</a>
      </p>
    </Page>
  );
}
