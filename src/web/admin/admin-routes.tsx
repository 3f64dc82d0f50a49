import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Mailer } from '../../auth/mailer.ts';
import type { ListingUrls } from '../../catalog/listings/listing-urls.ts';
import { decideListing, type ReviewDeps } from '../../catalog/review/review.ts';
import { REVIEW_QUEUE_PAGE, findReviewItem, listDecisions, listReviewQueue } from '../../catalog/review/review-queue.ts';
import { allowedActions, isReviewAction } from '../../catalog/review/review-rules.ts';
import { CatalogError } from '../../contract/errors.ts';
import { ErrorCode, SLUG_PATTERN } from '../../contract/schemas.ts';
import type { Pool } from '../../db/pool.ts';
import {
  ADMIN_PATHS,
  AdminForbiddenPage,
  AdminListingPage,
  DONE_MESSAGES,
  FindListingPage,
  ReviewQueuePage,
  formActions,
  type DecisionProblem,
  type FormAction,
} from './admin-pages.tsx';
import type { NoticeMessage } from '../components/notice.tsx';
import type { Session } from '../components/layout.tsx';
import { registerKeyPages } from './key-routes.tsx';
import { pageSession } from '../maker-session.ts';
import { sendPrivatePage } from '../render.ts';

/**
 * The admin pages (/admin/…), registered inside the maker scope (session cookie, CSRF on every
 * POST) in a scope of their own whose first hook answers everyone but an admin, signed in or
 * not, with a 403 page: no admin page or decision is ever reached by anyone else. The admin
 * role is read with the session on every request, so `catalog admin revoke` takes effect at once.
 *
 * GET  /admin/review                       the queue (pending listings, oldest request first)
 * GET  /admin/listings?slug=…              find a listing by slug
 * GET  /admin/listings/:slug               a listing, its decision form and its history
 * POST /admin/listings/:slug/decisions     action (+ feedback): decide, then back to where it was made
 * /admin/keys…                             the consumer keys (key-routes.tsx)
 */
export interface AdminPagesDeps {
  pool: Pool;
  urls: ListingUrls;
  mailer: Mailer;
  now?: () => Date;
}

const isSlug = (s: unknown): s is string => typeof s === 'string' && s.length <= 200 && SLUG_PATTERN.test(s);
const isFormAction = (a: unknown): a is FormAction => a === 'approve_feature' || isReviewAction(a);

export async function registerAdminPages(scope: FastifyInstance, deps: AdminPagesDeps): Promise<void> {
  await scope.register(async (admin) => {
    admin.addHook('onRequest', async (request, reply) => {
      if (request.webSession?.maker.isAdmin) return;
      return sendPrivatePage(reply, <AdminForbiddenPage session={pageSession(request, reply)} returnTo={returnPath(request)} />, { status: 403 });
    });

    const now = () => deps.now?.() ?? new Date();

    /** The signed-in admin's header; the hook above guarantees the session. */
    const session = (request: FastifyRequest, reply: FastifyReply): Session => pageSession(request, reply)!;

    async function queuePage(request: FastifyRequest, reply: FastifyReply, opts: { notice?: NoticeMessage | null; problem?: DecisionProblem; status?: number; page?: number } = {}) {
      const page = opts.page ?? 1;
      const { items, total } = await listReviewQueue(deps.pool, deps.urls, { limit: REVIEW_QUEUE_PAGE, offset: (page - 1) * REVIEW_QUEUE_PAGE });
      const t = now();
      return sendPrivatePage(
        reply,
        <ReviewQueuePage
          session={session(request, reply)}
          items={items.map((item) => ({ item, actions: formActions(allowedActions(item.state, t), item) }))}
          total={total}
          page={page}
          pageSize={REVIEW_QUEUE_PAGE}
          notice={opts.notice ?? null}
          {...(opts.problem && { problem: opts.problem })}
        />,
        { status: opts.status ?? 200 },
      );
    }

    async function listingPage(request: FastifyRequest, reply: FastifyReply, slug: string, opts: { notice?: NoticeMessage | null; problem?: DecisionProblem; status?: number } = {}) {
      const item = isSlug(slug) ? await findReviewItem(deps.pool, deps.urls, slug) : undefined;
      if (!item) {
        return sendPrivatePage(reply, <FindListingPage session={session(request, reply)} slug={slug.slice(0, 200)} error={`No listing has the slug '${slug.slice(0, 200)}'.`} />, { status: 404 });
      }
      const history = await listDecisions(deps.pool, item.id);
      return sendPrivatePage(
        reply,
        <AdminListingPage
          session={session(request, reply)}
          item={item}
          actions={formActions(allowedActions(item.state, now()), item)}
          history={history}
          notice={opts.notice ?? null}
          {...(opts.problem && { problem: opts.problem })}
        />,
        { status: opts.status ?? 200 },
      );
    }

    function doneNotice(done: unknown, slug: unknown): NoticeMessage | null {
      if (!isFormAction(done) || !isSlug(slug)) return null;
      return { kind: 'success', message: `${slug} was ${DONE_MESSAGES[done]}.` };
    }

    admin.get('/admin', async (_request, reply) => reply.redirect(ADMIN_PATHS.queue, 303));

    admin.get<{ Querystring: { done?: string; slug?: string; page?: string } }>(ADMIN_PATHS.queue, async (request, reply) => {
      // A page number that is not a whole number from 1 shows the first page.
      const page = /^[1-9]\d{0,5}$/.test(request.query.page ?? '') ? Number(request.query.page) : 1;
      return queuePage(request, reply, { notice: doneNotice(request.query.done, request.query.slug), page });
    });

    admin.get<{ Querystring: { slug?: string } }>(ADMIN_PATHS.find, async (request, reply) => {
      const raw = request.query.slug;
      if (raw === undefined) return sendPrivatePage(reply, <FindListingPage session={session(request, reply)} />);
      const slug = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
      if (!isSlug(slug)) {
        return sendPrivatePage(
          reply,
          <FindListingPage session={session(request, reply)} slug={String(raw).slice(0, 200)} error="Enter a slug: lowercase letters, digits and single hyphens, at most 200 characters." />,
          { status: 400 },
        );
      }
      return reply.redirect(ADMIN_PATHS.listing(slug), 303);
    });

    admin.get<{ Params: { slug: string }; Querystring: { done?: string } }>('/admin/listings/:slug', async (request, reply) =>
      listingPage(request, reply, request.params.slug, { notice: doneNotice(request.query.done, request.params.slug) }),
    );

    admin.post<{ Params: { slug: string }; Body: { action?: unknown; feedback?: unknown; from?: unknown } }>('/admin/listings/:slug/decisions', async (request, reply) => {
      const slug = request.params.slug;
      const body = request.body ?? {};
      const fromQueue = body.from === 'queue';
      const typed = typeof body.feedback === 'string' ? body.feedback.slice(0, 10_000) : '';
      const back = (problem: DecisionProblem, status: number) =>
        fromQueue ? queuePage(request, reply, { problem, status }) : listingPage(request, reply, slug, { problem, status });

      if (!isFormAction(body.action)) return back({ slug, message: 'Choose one of the decision buttons.', onFeedback: false, feedback: typed }, 400);
      const action = body.action;
      const reviewDeps: ReviewDeps = {
        ...deps,
        onMailError: (err) => request.log.error({ err, slug }, 'the e-mail to the maker could not be sent'),
      };
      const decidedBy = request.webSession!.maker.id;
      try {
        if (action === 'approve_feature') {
          const approved = await decideListing(reviewDeps, slug, { action: 'approve', feedback: body.feedback, decidedBy });
          // a listing hidden while featured comes back featured already
          if (!approved.featured) await decideListing(reviewDeps, slug, { action: 'feature', decidedBy });
        } else {
          await decideListing(reviewDeps, slug, { action, feedback: body.feedback, decidedBy });
        }
      } catch (err) {
        if (!(err instanceof CatalogError)) throw err;
        if (err.code === ErrorCode.NOT_FOUND) return listingPage(request, reply, slug);
        if (err.code === ErrorCode.FORBIDDEN) {
          return sendPrivatePage(reply, <AdminForbiddenPage session={pageSession(request, reply)} returnTo={ADMIN_PATHS.queue} />, { status: 403 });
        }
        const onFeedback = err.code === ErrorCode.BAD_REQUEST;
        const message = onFeedback ? (err.issues?.[0]?.message ?? err.message) : err.message;
        return back({ slug, message, onFeedback, feedback: typed }, err.status);
      }
      const done = `done=${action}&slug=${encodeURIComponent(slug)}`;
      return reply.redirect(fromQueue ? `${ADMIN_PATHS.queue}?${done}` : `${ADMIN_PATHS.listing(slug)}?done=${action}`, 303);
    });

    registerKeyPages(admin, { pool: deps.pool, ...(deps.now && { now: deps.now }) });
  });
}

/** Where a signed-out visitor returns after signing in: the admin page asked for (GET), else the queue. */
function returnPath(request: FastifyRequest): string {
  if (request.method !== 'GET') return ADMIN_PATHS.queue;
  const path = request.url.split('?')[0] ?? ADMIN_PATHS.queue;
  return path.startsWith('/admin') ? path : ADMIN_PATHS.queue;
}
