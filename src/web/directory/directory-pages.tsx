import type { Category, Product, SearchResult } from '../../contract/schemas.ts';
import { Page, SITE_NAME } from '../components/layout.tsx';

/**
 * The directory's public pages: home, listing, category and not-found. They are the same for
 * every visitor (edges cache them), so they render with no session.
 */

/** Only http(s) addresses become links: a `javascript:` website must never be clickable. */
function linkUrl(u: string | null): string | undefined {
  return u && /^https?:\/\//i.test(u) ? u : undefined;
}

/** Only https images are shown: the pages' CSP allows no other remote image. */
function imageUrl(u: string | null): string | undefined {
  return u && /^https:\/\//i.test(u) ? u : undefined;
}

const words = (value: string) => value.replace(/_/g, ' ');

function ProductList({ products }: { products: readonly Product[] }) {
  if (products.length === 0) return <p class="muted">No live listings here yet.</p>;
  return (
    <ul class="product-list">
      {products.map((p) => (
        <li>
          <a href={`/products/${p.slug}`}>{p.name}</a>
          <span class="punchline">{p.punchline}</span>
        </li>
      ))}
    </ul>
  );
}

export function HomePage({ categories, latest }: { categories: readonly Category[]; latest: SearchResult }) {
  return (
    <Page title={SITE_NAME} nav="home" session={null} description={`${latest.total} live listings of software and digital products.`}>
      <h1>{SITE_NAME}</h1>
      <p class="lead">
        {latest.total} live listings. Read them as JSON at <a href="/api/v1/docs">/api/v1</a> or over MCP at <code>/api/mcp</code>.
      </p>
      <h2>Newest</h2>
      <ProductList products={latest.products} />
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
    p.listed_at ? `listed ${p.listed_at.slice(0, 10)}` : null,
    p.featured ? 'featured' : null,
  ].filter((f) => f !== null);
  if (facts.length === 0) return null;
  return <p class="facts">{facts.flatMap((f, i) => (i === 0 ? [f] : [' · ', f]))}</p>;
}

function Promo({ product: p }: { product: Product }) {
  if (!p.promo) return null;
  const redeem = linkUrl(p.promo.url) ?? linkUrl(p.website);
  return (
    <div class="promo">
      <strong>{p.promo.discount}</strong> with code <code>{p.promo.code}</code>
      {p.promo.expires_at && <> until {p.promo.expires_at}</>}
      {redeem && (
        <>
          {' · '}
          <a href={redeem} rel="nofollow noopener">
            redeem
          </a>
        </>
      )}
    </div>
  );
}

function BulletSection({ title, items }: { title: string; items: readonly string[] }) {
  if (items.length === 0) return null;
  return (
    <>
      <h2>{title}</h2>
      <ul>
        {items.map((item) => (
          <li>{item}</li>
        ))}
      </ul>
    </>
  );
}

/**
 * The listing page. The link to the maker's site is followed (rel="noopener" only) for premium
 * listings and for free listings whose badge was verified; otherwise it is nofollow.
 */
export function ListingPage({ product: p, category, websiteFollowed }: { product: Product; category: Category | undefined; websiteFollowed: boolean }) {
  const website = linkUrl(p.website);
  const logo = imageUrl(p.logo);
  const cover = imageUrl(p.cover);
  const tags = [...p.labels, ...p.tags];
  return (
    <Page title={`${p.name}: ${p.punchline}`} session={null} description={p.punchline}>
      <article>
        <div class="listing-header">
          <div>
            <h1>{p.name}</h1>
            <p class="lead">{p.punchline}</p>
          </div>
          {logo && <img class="logo" src={logo} alt="" width={64} height={64} />}
        </div>
        <Facts product={p} category={category} />
        {website && (
          <p>
            <a class="button" href={website} rel={websiteFollowed ? 'noopener' : 'nofollow noopener'}>
              Visit {p.name}
            </a>
          </p>
        )}
        {cover && <img class="cover" src={cover} alt="" />}
        {/* Sanitized when the listing was written; shown as the API serves it. */}
        <div class="description" dangerouslySetInnerHTML={{ __html: p.description }} />
        <Promo product={p} />
        <BulletSection title="Highlights" items={p.highlights} />
        <BulletSection title="Ideal for" items={p.ideal_for} />
        {p.faq.length > 0 && (
          <>
            <h2>Questions</h2>
            <dl>
              {p.faq.map((f) => (
                <>
                  <dt>{f.question}</dt>
                  <dd>{f.answer}</dd>
                </>
              ))}
            </dl>
          </>
        )}
        {tags.length > 0 && (
          <ul class="tags" aria-label="Labels and tags">
            {tags.map((t) => (
              <li>{t}</li>
            ))}
          </ul>
        )}
        {p.social && <p class="muted">@{p.social}</p>}
      </article>
    </Page>
  );
}

export function CategoryPage({ category, result }: { category: Category; result: SearchResult }) {
  const pages = Math.max(1, Math.ceil(result.total / result.limit));
  const base = `/categories/${category.slug}`;
  const newer = result.page > 1 ? `${base}?page=${result.page - 1}` : undefined;
  const older = result.page < pages ? `${base}?page=${result.page + 1}` : undefined;
  return (
    <Page title={category.name} nav="categories" session={null} description={`${category.count} ${category.noun} in ${category.name}.`}>
      <h1>{category.name}</h1>
      <p class="lead">
        {category.count} {category.noun}, newest first
        {pages > 1 && ` · page ${result.page} of ${pages}`}
      </p>
      <ProductList products={result.products} />
      {(newer || older) && (
        <nav class="pagination" aria-label="Pages">
          {newer && (
            <a href={newer} rel="prev">
              Newer
            </a>
          )}
          {older && (
            <a href={older} rel="next">
              Older
            </a>
          )}
        </nav>
      )}
    </Page>
  );
}

export function NotFoundPage({ message }: { message: string }) {
  return (
    <Page title="Not found" session={null}>
      <h1>Not found</h1>
      <p>{message}</p>
      <p>
        <a href="/">Back to the directory</a>
      </p>
    </Page>
  );
}
