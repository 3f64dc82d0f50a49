import type { FastifyError, FastifyInstance } from 'fastify';
import type { Accounts } from '../auth/accounts.ts';
import type { MakerCatalog } from '../catalog/maker-catalog.ts';
import type { Pool } from '../db/pool.ts';
import type { Budgets } from '../budgets/budgets.ts';
import { addBudgetHook } from '../http/budget-hook.ts';
import type { ReadService } from '../read/read-service.ts';
import { registerAccountPages } from './makers/account-routes.tsx';
import { registerAdminPages } from './admin/admin-routes.tsx';
import { registerBadgeImage } from './directory/badge-image.tsx';
import { registerDirectoryPages } from './directory/directory-routes.tsx';
import { registerMachineReadable, registerRobotsTxt } from './directory/machine-readable-routes.ts';
import { registerMakerListingPages } from './makers/maker-listing-routes.tsx';
import { registerMakerSession } from './maker-session.ts';
import { sendPageError } from './page-errors.tsx';
import type { PageCache } from './page-cache.ts';
import { registerPageSecurity, type SecurityHeaders } from './page-security.ts';
import { registerPaymentPages, type PaymentPagesDeps } from './makers/payment-routes.tsx';
import { registerIcons } from './icons.ts';
import { registerStylesheet } from './stylesheet.ts';

export interface PagesDeps extends PaymentPagesDeps {
  read: ReadService;
  budgets: Budgets;
  config: { cache: { maxAgeSeconds: number }; publicUrl: string };
  pool: Pool;
  accounts: Accounts;
  /** The makers' commands, for the dashboard, submission, claim, edit and admin pages. */
  maker: MakerCatalog;
}

/**
 * The web side of the service: every HTML page and the stylesheet, in one scope that sends the
 * pages' security headers (page-security.ts) and nothing else's: the REST API and the MCP
 * endpoint are registered outside it and keep their own headers.
 *
 * Pages spend from the caller's `pages` rate-limit budget. The stylesheet and the icons do not:
 * they are answered from memory, a browser keeps them (the stylesheet a year, the icons a day),
 * and counting them would charge a first visit once for every file its page loads.
 *
 * A new group of pages registers inside the `pages` scope below, next to the directory.
 */
/** What the composition hands the direct read path (src/http/direct-reads.ts): the kept pages and the headers they go with. */
export interface RegisteredPages {
  readonly cache: PageCache;
  readonly securityHeaders: SecurityHeaders;
}

export async function registerPages(app: FastifyInstance, deps: PagesDeps): Promise<RegisteredPages> {
  let registered: RegisteredPages | undefined;
  await app.register(async (web) => {
    const securityHeaders = await registerPageSecurity(web, { publicUrl: deps.config.publicUrl });
    registerStylesheet(web);
    // The icon (/icon.svg, /icons/…): pages link it, MCP clients and the registry show it; not counted either.
    registerIcons(web);
    // The badge image makers' sites show: public, cached, and (like the stylesheet) not counted.
    registerBadgeImage(web);
    // robots.txt is not counted either: a crawler refused it takes the whole site as disallowed.
    registerRobotsTxt(web, deps);
    await web.register(async (pages) => {
      // Pages have a budget of their own: browsing, or a maker's work, never spends the API's.
      addBudgetHook(pages, deps.budgets, 'pages');
      registered = { cache: registerDirectoryPages(pages, deps).cache, securityHeaders };
      // The sitemap and the Atom feeds: a crawler's visits spend the pages' budget, like pages.
      registerMachineReadable(pages, deps);
      // The maker's pages: session cookie, form bodies, CSRF on every POST; never cached.
      await pages.register(async (maker) => {
        const secureCookies = new URL(deps.config.publicUrl).protocol === 'https:';
        await registerMakerSession(maker, { pool: deps.pool, cookieSecret: deps.accounts.keys.cookieKeys[0]!, secureCookies, publicUrl: deps.config.publicUrl });
        maker.setErrorHandler((err: FastifyError, request, reply) => sendPageError(err, request, reply));
        registerAccountPages(maker, {
          pool: deps.pool,
          mailer: deps.accounts.mailer,
          oauth: deps.accounts.oauth,
          publicUrl: deps.config.publicUrl,
          secureCookies,
          signInLimits: { perIp: deps.accounts.limits.signInPerIp, perAddress: deps.accounts.limits.signInPerAddress },
        });
        registerMakerListingPages(maker, { maker: deps.maker, secureCookies });
        registerPaymentPages(maker, deps);
        await registerAdminPages(maker, { pool: deps.pool, urls: deps.maker.urls, mailer: deps.accounts.mailer, ...(deps.maker.now && { now: deps.maker.now }) });
      });
    });
  });
  if (!registered) throw new Error('the directory pages were not registered');
  return registered;
}
