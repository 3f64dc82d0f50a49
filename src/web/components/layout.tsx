import type { ComponentChildren } from 'preact';
import { DIRECTORY_NAME } from '../../catalog/directory-name.ts';
import { Button, Form } from './forms.tsx';
import { Notice, type NoticeMessage } from './notice.tsx';
import { ICON_LINKS } from '../icons.ts';
import { siteStylesheet } from '../stylesheet.ts';

export const SITE_NAME = DIRECTORY_NAME;

/** The signed-in maker as the page header needs it. */
export interface Session {
  email: string;
  /** The token the Sign out form (and every other POST form on the page) carries. */
  csrfToken: string;
  isAdmin?: boolean;
}

/** The header link marked as the current section (aria-current="page"). */
type NavSection = 'home' | 'categories' | 'api' | 'signin' | 'dashboard' | 'apps' | 'review' | 'keys';

export interface PageProps {
  /** The page's own title; the site name is appended in the document title. */
  title: string;
  nav?: NavSection;
  /**
   * The signed-in maker, or null. Public, cacheable pages always pass null: an edge cache would
   * otherwise show one maker's header to every visitor.
   */
  session: Session | null;
  /** A flash message shown above the content. */
  notice?: NoticeMessage | null;
  /** The meta description search engines and link previews show. */
  description?: string;
  /** The page's absolute canonical URL (its path on the service's public URL, without noise parameters). */
  canonical?: string;
  /** Further elements of the document head: structured data, link previews, feed links. */
  head?: ComponentChildren;
  /** What the header's search box shows: the search page's own query. */
  query?: string;
  children?: ComponentChildren;
}

function NavLink({ href, section, current, children }: { href: string; section: NavSection; current?: NavSection; children: ComponentChildren }) {
  return (
    <li>
      <a href={href} aria-current={section === current ? 'page' : undefined}>
        {children}
      </a>
    </li>
  );
}

function MakerNav({ session, nav }: { session: Session | null; nav?: NavSection }) {
  if (!session) {
    return (
      <nav class="site-nav maker-nav" aria-label="Makers">
        <ul>
          <li class="muted">For makers</li>
          <NavLink href="/signin" section="signin" current={nav}>
            Sign in
          </NavLink>
        </ul>
      </nav>
    );
  }
  return (
    <nav class="site-nav maker-nav" aria-label="Your account">
      <ul>
        <li class="muted">{session.email}</li>
        <NavLink href="/dashboard" section="dashboard" current={nav}>
          Dashboard
        </NavLink>
        <NavLink href="/settings/apps" section="apps" current={nav}>
          Connected apps
        </NavLink>
        {session.isAdmin && (
          <NavLink href="/admin/review" section="review" current={nav}>
            Review
          </NavLink>
        )}
        {session.isAdmin && (
          <NavLink href="/admin/keys" section="keys" current={nav}>
            Keys
          </NavLink>
        )}
        <li>
          <Form action="/signout" csrfToken={session.csrfToken} aria-label="Sign out">
            <Button variant="secondary">Sign out</Button>
          </Form>
        </li>
      </ul>
    </nav>
  );
}

/** Every page of the site: document head, header with navigation, the flash message, footer. */
/**
 * The header's search box: a plain GET form, so it works with JavaScript off; with it on,
 * search.js updates the search page's results as one types.
 */
function SearchBox({ query }: { query?: string }) {
  return (
    <form class="site-search" role="search" action="/search" method="get">
      <label for="site-search-q" class="visually-hidden">
        Search listings
      </label>
      <input id="site-search-q" type="search" name="q" value={query ?? ''} placeholder="Search listings" autocomplete="off" />
      <button type="submit">Search</button>
    </form>
  );
}

export function Page({ title, nav, session, notice, description, canonical, head, query, children }: PageProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>{title === SITE_NAME ? SITE_NAME : `${title} · ${SITE_NAME}`}</title>
        {description && <meta name="description" content={description} />}
        {canonical && <link rel="canonical" href={canonical} />}
        <link rel="stylesheet" href={siteStylesheet().href} />
        {/* The PNG first, the SVG last: a browser that shows SVG icons takes the later one. */}
        <link rel="icon" href={ICON_LINKS.png} type="image/png" sizes="48x48" />
        <link rel="icon" href={ICON_LINKS.svg} type="image/svg+xml" />
        <link rel="apple-touch-icon" href={ICON_LINKS.touch} />
        {head}
      </head>
      <body>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        <header class="site-header">
          <div class="wrap">
            <a class="brand" href="/">
              {SITE_NAME}
            </a>
            <nav class="site-nav" aria-label="Main">
              <ul>
                <NavLink href="/#categories" section="categories" current={nav}>
                  Categories
                </NavLink>
                <NavLink href="/api/v1/docs" section="api" current={nav}>
                  API
                </NavLink>
              </ul>
            </nav>
            <SearchBox {...(query !== undefined && { query })} />
            <MakerNav session={session} nav={nav} />
          </div>
        </header>
        <main id="main" class="wrap">
          {notice && <Notice {...notice} />}
          {children}
        </main>
        <footer class="site-footer">
          <div class="wrap">
            <p>
              The catalog is open: read it as JSON at <a href="/api/v1/docs">/api/v1</a> or from an assistant over MCP at{' '}
              <code>/api/mcp</code>.
            </p>
          </div>
        </footer>
      </body>
    </html>
  );
}
