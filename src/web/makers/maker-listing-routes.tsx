import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BADGE_PATH, markupFor, verifyBadge } from '../../catalog/badges/badges.ts';
import { listCategoryChoices } from '../../catalog/listings/category-choices.ts';
import { CLAIM_PATH, findDraftByClaimToken, type Draft } from '../../catalog/submissions/drafts.ts';
import { decideMakerEdit, decidePremiumProfileEdit } from '../../catalog/listings/listing-rules.ts';
import type { MakerCatalog } from '../../catalog/maker-catalog.ts';
import { editListing, getMakerListing, listMakerListings, type MakerListing } from '../../catalog/listings/maker-listings.ts';
import { LISTING_PAGES } from '../../catalog/listings/listing-urls.ts';
import type { PaymentLink } from '../../catalog/payments/payment-port.ts';
import { editPremiumProfile, getPremiumProfile } from '../../catalog/listings/premium-profile.ts';
import { submitFromForm } from '../../catalog/submissions/submissions.ts';
import { requestUpgrade } from '../../catalog/payments/upgrades.ts';
import { CatalogError } from '../../contract/errors.ts';
import { SLUG_MAX, SLUG_PATTERN } from '../../contract/schemas.ts';
import { SignInPage } from './account-pages.tsx';
import { signInRedirect } from './account-routes.tsx';
import type { FieldErrors } from '../components/forms.tsx';
import type { NoticeMessage } from '../components/notice.tsx';
import { setFlash, takeFlash, type Flash } from '../flash.ts';
import type { Session } from '../components/layout.tsx';
import {
  emptySubmissionValues,
  fieldErrorsFromIssues,
  listingValuesFrom,
  listingValuesOf,
  parseListingForm,
  parseProfileForm,
  parseSubmissionForm,
  profileFieldOf,
  profileValuesFrom,
  profileValuesOf,
  submissionValuesFrom,
  submissionValuesFromDraft,
  type FormBody,
  type ListingValues,
  type ProfileValues,
  type SubmissionValues,
} from './maker-forms.ts';
import {
  AlreadyListedPage,
  AlreadySubmittedPage,
  ClaimFormPage,
  ClaimProblemPage,
  DashboardPage,
  EditListingPage,
  ListingNotFoundPage,
  ListingRefusedPage,
  NewSubmissionPage,
  type ClaimProblem,
} from './maker-listing-pages.tsx';
import { csrfToken, pageSession } from '../maker-session.ts';
import { sendPrivatePage } from '../render.ts';

/**
 * The maker's listing pages: the dashboard (/dashboard), the submission form (/dashboard/new),
 * the claim page of a draft (/claim/<token>) and a listing's edit page
 * (/dashboard/listings/<slug>) with its premium profile, the badge's Verify and the upgrade to
 * premium. Every change goes through the catalog's commands (src/catalog), the same ones the MCP
 * maker tools call; this file only reads forms and shows answers.
 *
 * A form that changes something answers with a redirect to the page showing the result (the
 * outcome travels in a flash cookie, see flash.ts); a refused one answers 400 with the form as
 * typed. Another maker's listing is "not found", exactly as a listing that does not exist.
 */
export interface MakerListingPagesDeps {
  maker: MakerCatalog;
  secureCookies: boolean;
}

interface Signed {
  session: Session;
  makerId: string;
}

interface SlugParams {
  Params: { slug: string };
  Body: FormBody;
}

const NOTICES: Readonly<Record<Flash['event'], (listing: MakerListing) => NoticeMessage>> = {
  published: (l) => ({
    kind: 'success',
    message: (
      <>
        Published: {l.name} is live in the directory at <a href={l.url}>{l.url}</a>.
      </>
    ),
  }),
  pending_review: (l) => ({ kind: 'info', message: `Submitted: ${l.name} is waiting for review. It shows in the directory once a reviewer approves it; your dashboard shows its status.` }),
  updated_live: () => ({ kind: 'success', message: 'Saved: the live listing shows your changes within a few seconds.' }),
  sent_to_review: () => ({ kind: 'info', message: 'Saved: the listing is waiting for review, and shows in the directory once a reviewer approves it.' }),
  website_live: (l) => ({
    kind: 'success',
    message: `Saved: the automatic check passed on ${l.website}, and the live listing links it within a few seconds.${l.plan === 'free' ? ' Put the badge on your new site and press Verify to make that link followed again.' : ''}`,
  }),
  website_review: (l) => ({
    kind: 'info',
    message: `Saved: with its new website the listing is waiting for review, and shows in the directory once a reviewer approves it.${l.previousWebsite ? ` Until then ${l.previousWebsite} stays reserved to this listing.` : ''}${l.plan === 'free' ? ' Put the badge on your new site and press Verify.' : ''}`,
  }),
  profile_live: () => ({ kind: 'success', message: 'Premium profile saved: the live listing shows it within a few seconds.' }),
  profile_review: () => ({ kind: 'info', message: 'Premium profile saved: the listing is waiting for review, and shows in the directory once a reviewer approves it.' }),
  upgrade: (l) => ({ kind: 'info', message: `Your payment link for moving ${l.name} to the premium plan is below.` }),
};

function isListingSlug(slug: string): boolean {
  return slug.length <= SLUG_MAX && SLUG_PATTERN.test(slug);
}

function paymentFlash(payment: PaymentLink | null): Flash['payment'] {
  return payment && { url: payment.url, amountMinor: payment.price.amountMinor, currency: payment.price.currency };
}

export function registerMakerListingPages(scope: FastifyInstance, deps: MakerListingPagesDeps): void {
  const { maker, secureCookies } = deps;
  const { pool, urls } = maker;
  const now = () => maker.now?.() ?? new Date();

  /** The signed-in maker, or undefined once the answer (a redirect to sign in) is sent. */
  function signedIn(request: FastifyRequest, reply: FastifyReply, returnTo: string): Signed | undefined {
    const session = pageSession(request, reply);
    const makerId = request.webSession?.maker.id;
    if (!session || !makerId) {
      signInRedirect(reply, returnTo);
      return undefined;
    }
    return { session, makerId };
  }

  async function findListing(makerId: string, slug: string): Promise<MakerListing | undefined> {
    if (!isListingSlug(slug)) return undefined;
    try {
      return await getMakerListing(pool, urls, makerId, slug);
    } catch (err) {
      if (err instanceof CatalogError && err.status === 404) return undefined;
      throw err;
    }
  }

  const notFound = (reply: FastifyReply, session: Session) => sendPrivatePage(reply, <ListingNotFoundPage session={session} />, { status: 404 });
  const refused = (reply: FastifyReply, session: Session, listing: MakerListing, message: string) =>
    sendPrivatePage(reply, <ListingRefusedPage session={session} listing={listing} message={message} />, { status: 409 });

  interface EditView {
    values?: ListingValues;
    errors?: FieldErrors;
    profileValues?: ProfileValues;
    profileErrors?: FieldErrors;
    notice?: NoticeMessage | null;
    payment?: PaymentLink | null;
    status?: number;
  }

  async function renderEdit(reply: FastifyReply, { session, makerId }: Signed, listing: MakerListing, view: EditView = {}): Promise<FastifyReply> {
    const categories = await listCategoryChoices(pool);
    const profile =
      listing.plan === 'premium'
        ? { values: view.profileValues ?? profileValuesOf(await getPremiumProfile(pool, makerId, listing.id)), errors: view.profileErrors ?? {} }
        : null;
    const badge = listing.plan === 'free' ? { markup: markupFor(urls, listing).markup, imagePath: `${BADGE_PATH}/${listing.slug}.svg` } : null;
    return sendPrivatePage(
      reply,
      <EditListingPage
        session={session}
        listing={listing}
        categories={categories}
        values={view.values ?? listingValuesOf(listing)}
        errors={view.errors ?? {}}
        profile={profile}
        badge={badge}
        premiumPrice={maker.payments.price}
        notice={view.notice ?? null}
        payment={view.payment ?? null}
      />,
      { status: view.status ?? 200 },
    );
  }

  const redirectWithFlash = (reply: FastifyReply, flash: Flash) => {
    setFlash(reply, flash, secureCookies);
    return reply.redirect(LISTING_PAGES.edit(flash.slug), 303);
  };

  // -------------------------------------------------------------------------------------------
  // The dashboard

  scope.get(LISTING_PAGES.dashboard, async (request, reply) => {
    const signed = signedIn(request, reply, LISTING_PAGES.dashboard);
    if (!signed) return reply;
    const listings = await listMakerListings(pool, urls, signed.makerId);
    return sendPrivatePage(reply, <DashboardPage session={signed.session} listings={listings} />);
  });

  // -------------------------------------------------------------------------------------------
  // Submitting: the form from the dashboard, and the claim link's form with its draft

  interface SubmissionForm {
    action: string;
    draft?: Draft;
  }

  async function renderSubmissionForm(reply: FastifyReply, signed: Signed, form: SubmissionForm, values: SubmissionValues, errors: FieldErrors, status = 200) {
    const props = { session: signed.session, action: form.action, values, errors, categories: await listCategoryChoices(pool), premiumPrice: maker.payments.price };
    const page = form.draft ? <ClaimFormPage {...props} expiresAt={form.draft.expiresAt} /> : <NewSubmissionPage {...props} />;
    return sendPrivatePage(reply, page, { status });
  }

  async function submit(request: FastifyRequest, reply: FastifyReply, signed: Signed, form: SubmissionForm, values: SubmissionValues) {
    const categories = await listCategoryChoices(pool);
    const parsed = parseSubmissionForm(values, categories);
    if (!parsed.ok) return renderSubmissionForm(reply, signed, form, values, parsed.errors, 400);
    let result;
    try {
      result = await submitFromForm(maker, signed.makerId, parsed.value, form.draft?.id);
    } catch (err) {
      if (err instanceof CatalogError && err.status === 400 && err.issues) return renderSubmissionForm(reply, signed, form, values, fieldErrorsFromIssues(err.issues), 400);
      // The claim link was spent (or ran out) between opening the form and submitting it.
      if (err instanceof CatalogError && err.status === 409 && form.draft) {
        const token = (request.params as { token: string }).token;
        const again = await findDraftByClaimToken(pool, token, now());
        return claimProblem(reply, signed.session, again?.state === 'expired' ? 'expired' : 'used');
      }
      throw err;
    }
    switch (result.outcome) {
      case 'published':
      case 'pending_review':
        return redirectWithFlash(reply, { slug: result.listing.slug, event: result.outcome, payment: paymentFlash(result.payment) });
      case 'already_listed':
        return sendPrivatePage(reply, <AlreadyListedPage session={signed.session} live={result.live} />);
      case 'already_submitted':
        return sendPrivatePage(reply, <AlreadySubmittedPage session={signed.session} listing={result.listing} />);
      case 'draft_saved':
        throw new Error('the submission form never saves a draft');
    }
  }

  scope.get('/dashboard/new', async (request, reply) => {
    const signed = signedIn(request, reply, '/dashboard/new');
    if (!signed) return reply;
    return renderSubmissionForm(reply, signed, { action: '/dashboard/new' }, emptySubmissionValues(), {});
  });

  scope.post<{ Body: FormBody }>('/dashboard/new', async (request, reply) => {
    const signed = signedIn(request, reply, '/dashboard/new');
    if (!signed) return reply;
    return submit(request, reply, signed, { action: '/dashboard/new' }, submissionValuesFrom(request.body));
  });

  const claimProblem = (reply: FastifyReply, session: Session | null, problem: ClaimProblem) =>
    sendPrivatePage(reply, <ClaimProblemPage session={session} problem={problem} />, { status: problem === 'unknown' ? 404 : 410 });

  /** The draft of a claim link that still works, or undefined once the problem page is sent. */
  async function openClaim(request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply): Promise<Draft | undefined> {
    // The link is a capability: it stays out of search engines.
    reply.header('x-robots-tag', 'noindex, nofollow');
    const found = await findDraftByClaimToken(pool, request.params.token, now());
    if (!found || found.state !== 'open') {
      await claimProblem(reply, pageSession(request, reply), found ? (found.state === 'used' ? 'used' : 'expired') : 'unknown');
      return undefined;
    }
    return found.draft;
  }

  scope.get<{ Params: { token: string } }>(`${CLAIM_PATH}/:token`, async (request, reply) => {
    const draft = await openClaim(request, reply);
    if (!draft) return reply;
    const path = `${CLAIM_PATH}/${request.params.token}`;
    const session = pageSession(request, reply);
    if (!session || !request.webSession) {
      return sendPrivatePage(
        reply,
        <SignInPage
          csrfToken={csrfToken(request, reply)}
          returnTo={path}
          intro={`A draft listing for ${new URL(draft.website).host} is waiting for you. Sign in, or create an account with your e-mail address, to check it and submit it: nothing is published or charged before you do.`}
        />,
      );
    }
    return renderSubmissionForm(reply, { session, makerId: request.webSession.maker.id }, { action: path, draft }, submissionValuesFromDraft(draft), {});
  });

  scope.post<{ Params: { token: string }; Body: FormBody }>(`${CLAIM_PATH}/:token`, async (request, reply) => {
    const path = `${CLAIM_PATH}/${request.params.token}`;
    const draft = await openClaim(request, reply);
    if (!draft) return reply;
    const signed = signedIn(request, reply, path);
    if (!signed) return reply;
    return submit(request, reply, signed, { action: path, draft }, submissionValuesFrom(request.body));
  });

  // -------------------------------------------------------------------------------------------
  // A listing's edit page

  /** The signed-in maker and their listing, or undefined once the answer is sent. */
  async function ownListing(request: FastifyRequest<SlugParams>, reply: FastifyReply): Promise<{ signed: Signed; listing: MakerListing } | undefined> {
    const signed = signedIn(request, reply, isListingSlug(request.params.slug) ? LISTING_PAGES.edit(request.params.slug) : LISTING_PAGES.dashboard);
    if (!signed) return undefined;
    const listing = await findListing(signed.makerId, request.params.slug);
    if (!listing) {
      await notFound(reply, signed.session);
      return undefined;
    }
    return { signed, listing };
  }

  scope.get<SlugParams>('/dashboard/listings/:slug', async (request, reply) => {
    const own = await ownListing(request, reply);
    if (!own) return reply;
    const flash = takeFlash(request, reply, own.listing.slug, secureCookies);
    const payment = flash?.payment ? { url: flash.payment.url, price: { amountMinor: flash.payment.amountMinor, currency: flash.payment.currency } } : null;
    return renderEdit(reply, own.signed, own.listing, { notice: flash ? NOTICES[flash.event](own.listing) : null, payment });
  });

  scope.post<SlugParams>('/dashboard/listings/:slug', async (request, reply) => {
    const own = await ownListing(request, reply);
    if (!own) return reply;
    const { signed, listing } = own;
    const decision = decideMakerEdit(listing.state);
    if (!decision.allowed) return refused(reply, signed.session, listing, decision.message);
    const values = listingValuesFrom(request.body);
    const parsed = parseListingForm(values, await listCategoryChoices(pool));
    if (!parsed.ok) return renderEdit(reply, signed, listing, { values, errors: parsed.errors, status: 400 });
    try {
      const result = await editListing(maker, signed.makerId, listing.slug, parsed.value, now());
      const event = result.websiteChange ? (result.websiteChange.accepted ? 'website_live' : 'website_review') : result.outcome;
      return redirectWithFlash(reply, { slug: listing.slug, event, payment: null });
    } catch (err) {
      if (err instanceof CatalogError && err.status === 409) return refused(reply, signed.session, listing, err.message);
      if (err instanceof CatalogError && err.status === 400 && err.issues) return renderEdit(reply, signed, listing, { values, errors: fieldErrorsFromIssues(err.issues), status: 400 });
      throw err;
    }
  });

  scope.post<SlugParams>('/dashboard/listings/:slug/profile', async (request, reply) => {
    const own = await ownListing(request, reply);
    if (!own) return reply;
    const { signed, listing } = own;
    const decision = decidePremiumProfileEdit(listing.state);
    if (!decision.allowed) return refused(reply, signed.session, listing, decision.message);
    const profileValues = profileValuesFrom(request.body);
    const parsed = parseProfileForm(profileValues, now());
    if (!parsed.ok) return renderEdit(reply, signed, listing, { profileValues, profileErrors: parsed.errors, status: 400 });
    try {
      const result = await editPremiumProfile(pool, urls, signed.makerId, listing.slug, parsed.value, now());
      return redirectWithFlash(reply, { slug: listing.slug, event: result.outcome === 'updated_live' ? 'profile_live' : 'profile_review', payment: null });
    } catch (err) {
      if (err instanceof CatalogError && err.status === 409) return refused(reply, signed.session, listing, err.message);
      if (err instanceof CatalogError && err.status === 400 && err.issues) {
        return renderEdit(reply, signed, listing, { profileValues, profileErrors: fieldErrorsFromIssues(err.issues, profileFieldOf), status: 400 });
      }
      throw err;
    }
  });

  scope.post<SlugParams>('/dashboard/listings/:slug/verify', async (request, reply) => {
    const own = await ownListing(request, reply);
    if (!own) return reply;
    const { signed, listing } = own;
    if (listing.status === 'rejected') return refused(reply, signed.session, listing, 'This listing was rejected: there is nothing to verify.');
    let outcome;
    try {
      outcome = await verifyBadge(maker, signed.makerId, listing.slug);
    } catch (err) {
      if (err instanceof CatalogError && err.status === 409) return refused(reply, signed.session, listing, err.message);
      throw err;
    }
    const { check } = outcome;
    const notice: NoticeMessage =
      check.status === 'found'
        ? {
            kind: 'success',
            message: `Badge found on your site: the listing page's link to your site is now followed.${outcome.restored ? ' The listing was hidden because the badge was missing: it is live again.' : ''}`,
          }
        : check.status === 'missing'
          ? { kind: 'error', message: `The badge was not found. ${check.reason} Then press Verify again. Nothing was changed.` }
          : { kind: 'error', message: `Your site could not be read, so the badge could not be checked. ${check.reason} Nothing was changed: try again later.` };
    return renderEdit(reply, signed, outcome.listing, { notice });
  });

  scope.post<SlugParams>('/dashboard/listings/:slug/upgrade', async (request, reply) => {
    const own = await ownListing(request, reply);
    if (!own) return reply;
    const { signed, listing } = own;
    try {
      const { payment } = await requestUpgrade(pool, urls, maker.payments, signed.makerId, listing.slug);
      return redirectWithFlash(reply, { slug: listing.slug, event: 'upgrade', payment: paymentFlash(payment) });
    } catch (err) {
      if (err instanceof CatalogError && err.status === 409) return refused(reply, signed.session, listing, err.message);
      throw err;
    }
  });
}
