import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CatalogError } from '../contract/errors.ts';
import type { Category, Product, SearchResult } from '../contract/schemas.ts';
import { parseProductSlug, parseSearchParams } from '../read/params.ts';
import { etagOf, type ReadService } from '../read/read-service.ts';
import { cacheControlFor, sendCacheable } from '../http/caching.ts';
import type { RateLimits } from '../http/rate-limit.ts';
import { addRateLimitHook } from '../http/rate-limit-hook.ts';

/**
 * The directory's public pages, so that every `url` the API hands out opens something when
 * SITE_URL is this service (its default): the listing page `/products/{slug}`, the category page
 * `/categories/{slug}` (its live listings, newest first) and a home page. Server-rendered from the
 * same read service as REST and MCP; no script runs on them (Content-Security-Policy forbids it).
 * Descriptions are the sanitized HTML stored at write time, shown as the API serves them.
 */
const CSP = "default-src 'none'; img-src https: http: data:; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
const PAGE_SIZE = 24;

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Only http(s) addresses become links or images. */
function safeUrl(u: string | null): string | undefined {
  return u && /^https?:\/\//i.test(u) ? u : undefined;
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title>
<style>
body{font:16px/1.55 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:60rem;padding:1rem 1.25rem;color:#1c1c1e}
a{color:#0b57d0}header{display:flex;gap:1rem;align-items:baseline;border-bottom:1px solid #ddd;margin-bottom:1.5rem;padding-bottom:.5rem}
header a{text-decoration:none;font-weight:600}.muted{color:#666}.tags span{display:inline-block;background:#f0f2f5;border-radius:1rem;padding:0 .6rem;margin:0 .3rem .3rem 0;font-size:.85rem}
.cover{max-width:100%;border-radius:.5rem}.logo{width:64px;height:64px;border-radius:.75rem;object-fit:cover;float:right}
.promo{border:1px dashed #0b57d0;border-radius:.5rem;padding:.75rem 1rem;margin:1rem 0}ul.list{list-style:none;padding:0}ul.list li{padding:.6rem 0;border-bottom:1px solid #eee}
nav.pages{display:flex;gap:1rem;margin:1rem 0}dt{font-weight:600;margin-top:.75rem}
</style></head><body>
<header><a href="/">Product directory</a><a href="/api/v1/docs" class="muted">API</a></header>
${body}
</body></html>`;
}

function productPage(p: Product): string {
  const website = safeUrl(p.website);
  const logo = safeUrl(p.logo);
  const cover = safeUrl(p.cover);
  const parts: string[] = [];
  if (logo) parts.push(`<img class="logo" src="${esc(logo)}" alt="">`);
  parts.push(`<h1>${esc(p.name)}</h1><p class="muted">${esc(p.punchline)}</p>`);
  const facts = [
    p.category ? `<a href="/categories/${esc(p.category)}">${esc(p.category)}</a>` : undefined,
    p.pricing_model ? esc(p.pricing_model.replace('_', ' ')) : undefined,
    p.product_type ? esc(p.product_type.replace('_', ' ')) : undefined,
    p.listed_at ? `listed ${esc(p.listed_at.slice(0, 10))}` : undefined,
    p.featured ? 'featured' : undefined,
  ].filter(Boolean);
  if (facts.length) parts.push(`<p class="muted">${facts.join(' · ')}</p>`);
  if (website) parts.push(`<p><a href="${esc(website)}" rel="nofollow noopener">Visit ${esc(p.name)}</a></p>`);
  if (cover) parts.push(`<img class="cover" src="${esc(cover)}" alt="">`);
  parts.push(`<div>${p.description}</div>`);
  if (p.promo) {
    const redeem = safeUrl(p.promo.url) ?? website;
    parts.push(
      `<div class="promo"><strong>${esc(p.promo.discount)}</strong> with code <code>${esc(p.promo.code)}</code>` +
        (p.promo.expires_at ? ` until ${esc(p.promo.expires_at)}` : '') +
        (redeem ? ` · <a href="${esc(redeem)}" rel="nofollow noopener">redeem</a>` : '') +
        '</div>',
    );
  }
  if (p.highlights.length) parts.push(`<h2>Highlights</h2><ul>${p.highlights.map((h) => `<li>${esc(h)}</li>`).join('')}</ul>`);
  if (p.ideal_for.length) parts.push(`<h2>Ideal for</h2><ul>${p.ideal_for.map((h) => `<li>${esc(h)}</li>`).join('')}</ul>`);
  if (p.faq.length) parts.push(`<h2>Questions</h2><dl>${p.faq.map((f) => `<dt>${esc(f.question)}</dt><dd>${esc(f.answer)}</dd>`).join('')}</dl>`);
  const tags = [...p.labels, ...p.tags];
  if (tags.length) parts.push(`<p class="tags">${tags.map((t) => `<span>${esc(t)}</span>`).join('')}</p>`);
  if (p.social) parts.push(`<p class="muted">@${esc(p.social)}</p>`);
  return layout(`${p.name}: ${p.punchline}`, `<article>${parts.join('\n')}</article>`);
}

function productList(products: Product[]): string {
  if (products.length === 0) return '<p class="muted">No live listings here yet.</p>';
  return `<ul class="list">${products
    .map((p) => `<li><a href="/products/${esc(p.slug)}"><strong>${esc(p.name)}</strong></a> <span class="muted">${esc(p.punchline)}</span></li>`)
    .join('')}</ul>`;
}

function categoryPage(category: Category, result: SearchResult): string {
  const pages = Math.max(1, Math.ceil(result.total / result.limit));
  const nav: string[] = [];
  if (result.page > 1) nav.push(`<a href="/categories/${esc(category.slug)}?page=${result.page - 1}">Newer</a>`);
  if (result.page < pages) nav.push(`<a href="/categories/${esc(category.slug)}?page=${result.page + 1}">Older</a>`);
  return layout(
    category.name,
    `<h1>${esc(category.name)}</h1><p class="muted">${category.count} ${esc(category.noun)}, newest first${pages > 1 ? ` · page ${result.page} of ${pages}` : ''}</p>` +
      productList(result.products) +
      (nav.length ? `<nav class="pages">${nav.join('')}</nav>` : ''),
  );
}

function homePage(categories: Category[], latest: SearchResult): string {
  return layout(
    'Product directory',
    `<h1>Product directory</h1><p class="muted">${latest.total} live listings. Read them as JSON at <a href="/api/v1/docs">/api/v1</a> or over MCP at <code>/api/mcp</code>.</p>` +
      `<h2>Newest</h2>${productList(latest.products)}` +
      `<h2>Categories</h2><ul class="list">${categories
        .map((c) => `<li><a href="/categories/${esc(c.slug)}">${esc(c.name)}</a> <span class="muted">${c.count} ${esc(c.noun)}</span></li>`)
        .join('')}</ul>`,
  );
}

function notFoundPage(what: string): string {
  return layout('Not found', `<h1>Not found</h1><p>${esc(what)}</p><p><a href="/">Back to the directory</a></p>`);
}

export interface PagesDeps {
  read: ReadService;
  rateLimits: RateLimits;
  config: { cache: { maxAgeSeconds: number } };
}

export async function registerPages(app: FastifyInstance, deps: PagesDeps): Promise<void> {
  const { read } = deps;
  const cacheControl = cacheControlFor(deps.config.cache.maxAgeSeconds);
  const html = 'text/html; charset=utf-8';

  const sendPage = (request: FastifyRequest, reply: FastifyReply, body: string) => {
    reply.header('content-security-policy', CSP).header('x-frame-options', 'DENY');
    return sendCacheable(request, reply, { body, etag: etagOf(body) }, cacheControl, html);
  };
  const sendNotFound = (reply: FastifyReply, message: string) =>
    reply.code(404).header('content-security-policy', CSP).header('cache-control', 'no-store').type(html).send(notFoundPage(message));

  const categoryBySlug = (slug: string): Category | undefined =>
    (JSON.parse(read.categories().body) as { categories: Category[] }).categories.find((c) => c.slug === slug);

  await app.register(async (pages) => {
    addRateLimitHook(pages, deps.rateLimits);

    pages.get('/', async (request, reply) => {
      const categories = (JSON.parse(read.categories().body) as { categories: Category[] }).categories;
      const latest = JSON.parse((await read.search({ page: 1, limit: 10 })).body) as SearchResult;
      return sendPage(request, reply, homePage(categories, latest));
    });

    pages.get<{ Params: { slug: string } }>('/products/:slug', async (request, reply) => {
      try {
        const slug = parseProductSlug({ slug: request.params.slug });
        return sendPage(request, reply, productPage(JSON.parse(read.product(slug).body) as Product));
      } catch (err) {
        if (err instanceof CatalogError && (err.status === 404 || err.status === 400)) {
          return sendNotFound(reply, `No live listing has the slug '${request.params.slug.slice(0, 200)}'.`);
        }
        throw err;
      }
    });

    pages.get<{ Params: { slug: string }; Querystring: { page?: string } }>('/categories/:slug', async (request, reply) => {
      const category = categoryBySlug(request.params.slug);
      if (!category) return sendNotFound(reply, `There is no category '${request.params.slug.slice(0, 200)}'.`);
      let query;
      try {
        query = parseSearchParams({ category: category.slug, page: request.query.page, limit: PAGE_SIZE });
      } catch {
        query = { category: category.slug, page: 1, limit: PAGE_SIZE };
      }
      const result = JSON.parse((await read.search(query)).body) as SearchResult;
      return sendPage(request, reply, categoryPage(category, result));
    });
  });
}
