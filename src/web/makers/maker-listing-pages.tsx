import type { ComponentChildren } from 'preact';
import type { CategoryChoice } from '../../catalog/listings/category-choices.ts';
import { LISTING_LIMITS } from '../../contract/listing-limits.ts';
import { REJECTED_IS_FINAL, type Plan } from '../../catalog/listings/listing-rules.ts';
import { MAKER_LIMITS } from '../../catalog/listings/maker-input.ts';
import { type BadgeState, type MakerListing } from '../../catalog/listings/maker-listings.ts';
import { LISTING_PAGES } from '../../catalog/listings/listing-urls.ts';
import { formatPrice, type Price } from '../../money/money.ts';
import type { PaymentLink } from '../../catalog/payments/payment-port.ts';
import { BADGE_SIZE } from '../../sites/badge-markup.tsx';
import { WEBSITE_INPUT_MAX } from '../../sites/website-identity.ts';
import { Card } from '../components/card.tsx';
import { Button, ErrorSummary, Field, Form, FormActions, LinkButton, Select, TextArea, fieldId, type FieldErrors, type SelectOption } from '../components/forms.tsx';
import type { NoticeMessage } from '../components/notice.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { Page, type Session } from '../components/layout.tsx';
import { EMPTY_FAQ_ROWS, type ListingValues, type ProfileValues, type SubmissionValues } from './maker-forms.ts';
import { DataTable, type Column } from '../components/data-table.tsx';

/**
 * The maker's pages for their listings: the submission form (from the dashboard, or from a
 * claim link with the draft filled in), the dashboard, and a listing's edit page with its
 * premium profile and the badge's Verify. Every form is a plain HTML post; a refused one comes
 * back with the values as typed, a summary at the top and each message next to its field.
 */

const PRICING_OPTIONS: readonly SelectOption[] = [
  { value: 'free', label: 'Free' },
  { value: 'freemium', label: 'Freemium' },
  { value: 'paid', label: 'Paid' },
  { value: 'open_source', label: 'Open source' },
];

const PRODUCT_TYPE_OPTIONS: readonly SelectOption[] = [
  { value: 'software', label: 'Software' },
  { value: 'digital_product', label: 'Digital product' },
];

const PLAN_LABELS: Readonly<Record<Plan, string>> = { free: 'Free', premium: 'Premium' };

const BADGE_LABELS: Readonly<Record<BadgeState, string>> = {
  verified: 'Verified',
  not_verified: 'Not verified',
  not_needed: 'Not needed (premium)',
};

const date = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' });

function categoryOptions(categories: readonly CategoryChoice[]): SelectOption[] {
  return categories.map((c) => ({ value: c.slug, label: c.name }));
}

const DESCRIPTION_HINT = 'Markdown or plain text: paragraphs, **bold**, *italics*, lists and http(s) links. No images, scripts or other HTML.';

// ---------------------------------------------------------------------------------------------
// Submitting a product

export interface SubmissionFormProps {
  session: Session;
  /** Where the form posts: /dashboard/new, or the claim link's own address. */
  action: string;
  values: SubmissionValues;
  errors: FieldErrors;
  formError?: string | undefined;
  categories: readonly CategoryChoice[];
  premiumPrice: Price;
}

/** The product's website, on the submission form and the edit page alike. */
function WebsiteField({ value, error, hint }: { value: string; error: string | undefined; hint: string }) {
  return <Field label="Website" name="website" type="url" required maxLength={WEBSITE_INPUT_MAX} value={value} error={error} hint={hint} autocomplete="url" />;
}

function SubmissionForm({ session, action, values, errors, categories, premiumPrice }: SubmissionFormProps) {
  const price = formatPrice(premiumPrice);
  return (
    <Form action={action} csrfToken={session.csrfToken} aria-label="Your product">
      <WebsiteField value={values.website} error={errors.website} hint="The product's own site, such as https://example.com. We read its home page for the logo and cover image." />
      <Field label="Name" name="name" required maxLength={MAKER_LIMITS.nameMax} value={values.name} error={errors.name} />
      <Field label="Punchline" name="punchline" required maxLength={MAKER_LIMITS.punchlineMax} value={values.punchline} error={errors.punchline} hint="One line saying what it does." />
      <TextArea label="Description" name="description" required rows={8} maxLength={MAKER_LIMITS.descriptionMax} value={values.description} error={errors.description} hint={DESCRIPTION_HINT} />
      <Select label="Category" name="category" required options={categoryOptions(categories)} emptyOption="Choose a category" value={values.category} error={errors.category} />
      <Select label="Pricing model" name="pricing_model" options={PRICING_OPTIONS} emptyOption="Not given" value={values.pricing_model} error={errors.pricing_model} />
      <Select label="Product type" name="product_type" options={PRODUCT_TYPE_OPTIONS} emptyOption="Not given" value={values.product_type} error={errors.product_type} />
      <Field label="Social handle" name="social" maxLength={MAKER_LIMITS.socialMax + 1} value={values.social} error={errors.social} hint="Your handle on a social network, such as pixelforge (without a link)." />
      <Field label="Tags" name="tags" value={values.tags} error={errors.tags} hint={`Up to ${MAKER_LIMITS.tagsMax} words, separated by commas, such as: ai, note-taking.`} />
      <Select
        label="Plan"
        name="plan"
        required
        options={[
          { value: 'free', label: 'Free' },
          { value: 'premium', label: `Premium: ${price}` },
        ]}
        value={values.plan}
        error={errors.plan}
        hint={`Free listings link to your site with nofollow until the directory badge is verified on it. Premium (${price}) adds highlights, who it is for, questions and answers and a promo code, and a followed link. With premium you get a payment link after submitting: nothing is charged until you pay.`}
      />
      <FormActions>
        <Button>Submit the product</Button>
      </FormActions>
    </Form>
  );
}

function WhatHappensNext() {
  return (
    <p class="muted">
      When you submit, the directory reads your site at once: a complete listing of a site that answers is published straight away; otherwise it waits for a reviewer.
      Either way it appears on your dashboard.
    </p>
  );
}

export function NewSubmissionPage(props: SubmissionFormProps) {
  return (
    <Page title="Submit a product" nav="dashboard" session={props.session}>
      <h1>Submit a product</h1>
      <WhatHappensNext />
      <ErrorSummary errors={props.errors} formError={props.formError} />
      <SubmissionForm {...props} />
    </Page>
  );
}

export function ClaimFormPage(props: SubmissionFormProps & { expiresAt: Date }) {
  return (
    <Page title="Finish your submission" nav="dashboard" session={props.session}>
      <h1>Finish your submission</h1>
      <p>
        An assistant drafted this listing for you. Nothing has been published or charged: check the details, change what you like, and submit. This link works once, until{' '}
        {date.format(props.expiresAt)}.
      </p>
      <WhatHappensNext />
      <ErrorSummary errors={props.errors} formError={props.formError} />
      <SubmissionForm {...props} />
    </Page>
  );
}

const CLAIM_PROBLEMS = {
  used: {
    title: 'This link has already been used',
    message: 'This claim link has already been used: each link submits its draft once. The listing it made is on the dashboard of the account that submitted it.',
  },
  expired: {
    title: 'This link has expired',
    message: 'This claim link has expired: a draft can be claimed for 7 days after it was saved. Nothing was published. Ask your assistant to submit the product again, or submit it yourself.',
  },
  unknown: {
    title: 'This link is not valid',
    message: 'This claim link is not valid. Check that the whole link was copied, or submit the product yourself.',
  },
} as const;

export type ClaimProblem = keyof typeof CLAIM_PROBLEMS;

export function ClaimProblemPage({ session, problem }: { session: Session | null; problem: ClaimProblem }) {
  const { title, message } = CLAIM_PROBLEMS[problem];
  return (
    <Page title={title} nav="dashboard" session={session}>
      <h1>{title}</h1>
      <p>{message}</p>
      <p>
        {session ? (
          <LinkButton href={LISTING_PAGES.dashboard}>Go to your dashboard</LinkButton>
        ) : (
          <LinkButton href={`/signin?return_to=${encodeURIComponent(LISTING_PAGES.dashboard)}`}>Sign in</LinkButton>
        )}
      </p>
    </Page>
  );
}

export function AlreadyListedPage({ session, live }: { session: Session; live: { name: string; url: string } }) {
  return (
    <Page title="Already in the directory" nav="dashboard" session={session}>
      <h1>Already in the directory</h1>
      <p>
        This site is already listed as <a href={live.url}>{live.name}</a>, so nothing was submitted. If it is your product and the listing is not on your dashboard,
        contact the directory.
      </p>
      <p>
        <LinkButton href={LISTING_PAGES.dashboard}>Back to your dashboard</LinkButton>
      </p>
    </Page>
  );
}

export function AlreadySubmittedPage({ session, listing }: { session: Session; listing: MakerListing }) {
  if (listing.status === 'rejected') {
    return (
      <Page title="You already submitted this site" nav="dashboard" session={session}>
        <h1>You already submitted this site</h1>
        <p>
          The directory rejected your listing for this site, <a href={LISTING_PAGES.edit(listing.slug)}>{listing.name}</a> <StatusBadge status={listing.status} />, so nothing new
          was submitted. {REJECTED_IS_FINAL}
        </p>
        {listing.feedback && (
          <Card title="Feedback from the reviewer" class="feedback-card">
            <p class="preserve-lines">{listing.feedback}</p>
          </Card>
        )}
        <p>
          <LinkButton href={LISTING_PAGES.dashboard}>Back to your dashboard</LinkButton>
        </p>
      </Page>
    );
  }
  return (
    <Page title="You already submitted this site" nav="dashboard" session={session}>
      <h1>You already submitted this site</h1>
      <p>
        You already have a listing for this site: <a href={LISTING_PAGES.edit(listing.slug)}>{listing.name}</a> <StatusBadge status={listing.status} />. Nothing new
        was submitted; edit that listing instead.
      </p>
      <p>
        <LinkButton href={LISTING_PAGES.edit(listing.slug)} variant="primary">
          Edit {listing.name}
        </LinkButton>
      </p>
    </Page>
  );
}

// ---------------------------------------------------------------------------------------------
// The dashboard

function StatusCell({ listing }: { listing: MakerListing }) {
  return (
    <>
      <StatusBadge status={listing.status} />
      {listing.status === 'hidden' && <div class="muted">{listing.hiddenReason === 'badge_missing' ? 'badge missing: verify it again' : 'by the directory'}</div>}
    </>
  );
}

const DASHBOARD_COLUMNS: readonly Column<MakerListing>[] = [
  {
    header: 'Listing',
    cell: (l) => (
      <>
        <a href={LISTING_PAGES.edit(l.slug)}>
          <strong>{l.name}</strong>
        </a>
        <div class="muted">{l.website}</div>
      </>
    ),
  },
  { header: 'Status', cell: (l) => <StatusCell listing={l} /> },
  { header: 'Plan', cell: (l) => PLAN_LABELS[l.plan] },
  { header: 'Badge', cell: (l) => BADGE_LABELS[l.badge] },
  { header: 'Feedback', cell: (l) => l.feedback ?? <span class="muted">None</span>, class: 'feedback' },
  { header: 'Public page', cell: (l) => (l.status === 'live' ? <a href={l.url}>View</a> : <span class="muted">Not live</span>) },
];

export function DashboardPage({ session, listings, notice }: { session: Session; listings: readonly MakerListing[]; notice?: NoticeMessage | null }) {
  return (
    <Page title="Your listings" nav="dashboard" session={session} notice={notice}>
      <div class="page-heading">
        <h1>Your listings</h1>
        <LinkButton href="/dashboard/new" variant="primary">
          Submit a product
        </LinkButton>
      </div>
      {listings.length === 0 ? (
        <Card title="No listings yet">
          <p>Submit your product and it shows here, with its status, its plan and the directory badge. An assistant connected to your account can submit it for you too.</p>
          <p>
            <LinkButton href="/dashboard/new" variant="primary">
              Submit your first product
            </LinkButton>
          </p>
        </Card>
      ) : (
        <DataTable wrap class="table" columns={DASHBOARD_COLUMNS} rows={listings} />
      )}
    </Page>
  );
}

// ---------------------------------------------------------------------------------------------
// A listing's edit page

/** What saving does to this listing, said before the maker saves (listing-rules.ts decideMakerEdit). */
function saveEffect(listing: MakerListing): string {
  switch (listing.status) {
    case 'live':
      return 'This listing is live: saved changes show in the directory within a few seconds, and it stays live.';
    case 'pending':
      return 'This listing waits for review: saved changes go to the reviewer with it.';
    case 'changes_requested':
      return 'A reviewer asked for changes: saving sends the listing back to review, and it shows in the directory once approved.';
    case 'hidden':
      return listing.hiddenReason === 'badge_missing'
        ? 'This listing is hidden because the directory badge is no longer on your site. Put the badge back and press Verify to bring it back at once; saving changes here sends it to review instead.'
        : 'The directory hid this listing: saving sends it to review, and it shows again once a reviewer approves it.';
    case 'draft':
      return 'This listing is not live: saving sends it to review, and it shows in the directory once approved.';
    case 'rejected':
      return 'This listing was rejected and cannot be edited.';
  }
}

/** What a new website does, said before the maker saves (listing-rules.ts decideWebsiteChange). */
function websiteHint(listing: MakerListing): string {
  const outcome =
    listing.status === 'live'
      ? 'the listing stays live with it if the check passes, and otherwise waits for review while your current site stays reserved to it'
      : 'the listing goes to review with it';
  const badge = listing.plan === 'free' ? ' The badge is then verified again on the new site.' : '';
  return `Another site is read and checked as a new submission is: ${outcome}.${badge}`;
}

export interface EditListingProps {
  session: Session;
  listing: MakerListing;
  categories: readonly CategoryChoice[];
  values: ListingValues;
  errors: FieldErrors;
  /** The premium profile form, for premium listings. */
  profile: { values: ProfileValues; errors: FieldErrors } | null;
  /** The badge to copy, for free listings. */
  badge: { markup: string; imagePath: string } | null;
  premiumPrice: Price;
  notice?: NoticeMessage | null;
  /** A payment link to show: after a premium submission or an upgrade. */
  payment?: PaymentLink | null;
}

function FeedbackCard({ listing }: { listing: MakerListing }) {
  if (!listing.feedback) return null;
  return (
    <Card title="Feedback from the reviewer" class="feedback-card">
      <p class="preserve-lines">{listing.feedback}</p>
    </Card>
  );
}

function PaymentCard({ payment }: { payment: PaymentLink }) {
  const price = formatPrice(payment.price);
  return (
    <Card title="Pay for the premium plan" class="payment-card" id="payment">
      <p class="price">{price}</p>
      <p>
        <strong>Nothing is charged until you pay.</strong> Open the payment page to pay {price}; the listing moves to the premium plan once the payment is confirmed.
      </p>
      <p>
        <LinkButton href={payment.url} variant="primary">
          Pay {price}
        </LinkButton>
      </p>
    </Card>
  );
}

function ListingFacts({ listing }: { listing: MakerListing }) {
  return (
    <dl class="facts listing-facts">
      <dt>Status</dt>
      <dd>
        <StatusCell listing={listing} />
      </dd>
      <dt>Plan</dt>
      <dd>{PLAN_LABELS[listing.plan]}</dd>
      <dt>Badge</dt>
      <dd>{BADGE_LABELS[listing.badge]}</dd>
      <dt>Website</dt>
      <dd>
        <code>{listing.website}</code>
      </dd>
      {listing.previousWebsite && (
        <>
          <dt>Previous website</dt>
          <dd>
            <code>{listing.previousWebsite}</code> <span class="muted">reserved to this listing until a reviewer approves its new website</span>
          </dd>
        </>
      )}
      <dt>Public page</dt>
      <dd>{listing.status === 'live' ? <a href={listing.url}>{listing.url}</a> : <span class="muted">shown once the listing is live</span>}</dd>
    </dl>
  );
}

function DetailsForm({ session, listing, categories, values, errors }: Pick<EditListingProps, 'session' | 'listing' | 'categories' | 'values' | 'errors'>) {
  return (
    <Card title="Listing details" id="details">
      <Form action={LISTING_PAGES.edit(listing.slug)} csrfToken={session.csrfToken} aria-label="Listing details">
        <WebsiteField value={values.website} error={errors.website} hint={websiteHint(listing)} />
        <Field label="Name" name="name" required maxLength={MAKER_LIMITS.nameMax} value={values.name} error={errors.name} />
        <Field label="Punchline" name="punchline" required maxLength={MAKER_LIMITS.punchlineMax} value={values.punchline} error={errors.punchline} hint="One line saying what it does." />
        <TextArea label="Description" name="description" required rows={10} maxLength={MAKER_LIMITS.descriptionMax} value={values.description} error={errors.description} hint={DESCRIPTION_HINT} />
        <Select
          label="Category"
          name="category"
          required
          options={categoryOptions(categories)}
          {...(listing.category === null && { emptyOption: 'Choose a category' })}
          value={values.category}
          error={errors.category}
        />
        <Select
          label="Pricing model"
          name="pricing_model"
          required={listing.pricingModel !== null}
          options={PRICING_OPTIONS}
          {...(listing.pricingModel === null && { emptyOption: 'Not given' })}
          value={values.pricing_model}
          error={errors.pricing_model}
        />
        <Field label="Social handle" name="social" maxLength={MAKER_LIMITS.socialMax + 1} value={values.social} error={errors.social} hint="Your handle on a social network, such as pixelforge. Leave it empty to remove it." />
        <p class="save-effect">{saveEffect(listing)}</p>
        <FormActions>
          <Button>Save changes</Button>
        </FormActions>
      </Form>
    </Card>
  );
}

function ProfileForm({ session, listing, values, errors }: { session: Session; listing: MakerListing; values: ProfileValues; errors: FieldErrors }) {
  const rows = values.faq.length >= LISTING_LIMITS.faqMax ? values.faq : [...values.faq, ...Array.from({ length: Math.min(EMPTY_FAQ_ROWS, LISTING_LIMITS.faqMax - values.faq.length) }, () => ({ question: '', answer: '' }))];
  const perLine = `at most ${LISTING_LIMITS.profileItemsMax} lines of ${LISTING_LIMITS.profileItemMax} characters`;
  return (
    <Card title="Premium profile" id="profile">
      <p class="muted">Shown on the listing page and in the directory's API: what the product does, who it is for, questions and answers, and a promo code for visitors.</p>
      <Form action={`${LISTING_PAGES.edit(listing.slug)}/profile`} csrfToken={session.csrfToken} aria-label="Premium profile">
        <TextArea label="Highlights" name="highlights" rows={5} value={values.highlights} error={errors.highlights} hint={`What it does, one fact per line (${perLine}).`} />
        <TextArea label="Ideal for" name="ideal_for" rows={4} value={values.ideal_for} error={errors.ideal_for} hint={`Who it is for, one per line (${perLine}).`} />
        <fieldset class={errors.faq ? 'field fieldset field-error' : 'field fieldset'} id={fieldId('faq')}>
          <legend>Questions and answers</legend>
          <p class="hint">
            Up to {LISTING_LIMITS.faqMax} questions. Leave a row empty to remove it; save to get more empty rows.
          </p>
          {errors.faq && (
            <p class="error-message" id={`${fieldId('faq')}-error`}>
              <span class="visually-hidden">Error: </span>
              {errors.faq}
            </p>
          )}
          {rows.map((row, i) => (
            <div class="faq-row">
              <Field label={`Question ${i + 1}`} name="faq_question" id={fieldId(`faq_question-${i}`)} maxLength={LISTING_LIMITS.faqQuestionMax} value={row.question} error={errors[`faq_question-${i}`]} />
              <TextArea label={`Answer ${i + 1}`} name="faq_answer" id={fieldId(`faq_answer-${i}`)} rows={3} maxLength={LISTING_LIMITS.faqAnswerMax} value={row.answer} error={errors[`faq_answer-${i}`]} />
            </div>
          ))}
        </fieldset>
        <fieldset class="field fieldset">
          <legend>Promo code</legend>
          <p class="hint">An offer for the directory's visitors. Leave every promo field empty for none.</p>
          <Field label="Code" name="promo_code" maxLength={LISTING_LIMITS.promoCodeMax} value={values.promo_code} error={errors.promo_code} />
          <Field label="Discount" name="promo_discount" maxLength={LISTING_LIMITS.promoDiscountMax} value={values.promo_discount} error={errors.promo_discount} hint="The offer in your words, such as 20% off the first year." />
          <Field label="Where to redeem it" name="promo_url" type="url" maxLength={LISTING_LIMITS.urlMax} value={values.promo_url} error={errors.promo_url} hint="An http(s) address; empty means your website." />
          <Field label="Last valid day" name="promo_expires_at" type="date" value={values.promo_expires_at} error={errors.promo_expires_at} hint="Empty means no end date." />
        </fieldset>
        <p class="save-effect">{saveEffect(listing)}</p>
        <FormActions>
          <Button>Save premium profile</Button>
        </FormActions>
      </Form>
    </Card>
  );
}

function BadgeCard({ session, listing, badge }: { session: Session; listing: MakerListing; badge: { markup: string; imagePath: string } }) {
  return (
    <Card title="Directory badge" id="badge">
      <p>
        Put this badge on your site's home page, linking to your listing. Once Verify finds it, the listing page's link to your site is followed by search engines
        {listing.status === 'hidden' && listing.hiddenReason === 'badge_missing' ? ', and this listing, hidden for a missing badge, is live again' : ''}.
      </p>
      <p class="badge-preview">
        <img src={badge.imagePath} alt="The badge as it shows on your site" width={BADGE_SIZE.width} height={BADGE_SIZE.height} />
      </p>
      <div class="field">
        <label for="badge-markup">The markup to copy into your site</label>
        <textarea id="badge-markup" class="code" rows={4} readOnly value={badge.markup} />
      </div>
      <Form action={`${LISTING_PAGES.edit(listing.slug)}/verify`} csrfToken={session.csrfToken} aria-label="Verify the badge">
        <p class="muted">Verify reads your site's home page now and looks for a link to your listing.</p>
        <FormActions>
          <Button variant="secondary">Verify</Button>
        </FormActions>
      </Form>
    </Card>
  );
}

function UpgradeCard({ session, listing, price }: { session: Session; listing: MakerListing; price: Price }) {
  return (
    <Card title="Premium plan" id="premium">
      <p>
        For {formatPrice(price)}, the listing page shows highlights, who the product is for, questions and answers and a promo code, and links to your site without a
        badge. You get a payment link: nothing is charged until you pay.
      </p>
      <Form action={`${LISTING_PAGES.edit(listing.slug)}/upgrade`} csrfToken={session.csrfToken} aria-label="Upgrade to premium">
        <FormActions>
          <Button variant="secondary">Get a payment link</Button>
        </FormActions>
      </Form>
    </Card>
  );
}

export function EditListingPage(props: EditListingProps) {
  const { session, listing, profile, badge } = props;
  const rejected = listing.status === 'rejected';
  const errors = { ...props.errors, ...profile?.errors };
  return (
    <Page title={`Edit ${listing.name}`} nav="dashboard" session={session} notice={props.notice}>
      <p class="breadcrumb">
        <a href={LISTING_PAGES.dashboard}>Your listings</a>
      </p>
      <h1>{listing.name}</h1>
      <ErrorSummary errors={errors} />
      {props.payment && <PaymentCard payment={props.payment} />}
      <ListingFacts listing={listing} />
      <FeedbackCard listing={listing} />
      {rejected ? (
        <Card title="This listing cannot be edited">
          <p>{REJECTED_IS_FINAL}</p>
        </Card>
      ) : (
        <>
          <DetailsForm {...props} />
          {profile && <ProfileForm session={session} listing={listing} values={profile.values} errors={profile.errors} />}
          {badge && <BadgeCard session={session} listing={listing} badge={badge} />}
          {listing.plan === 'free' && listing.status === 'live' && <UpgradeCard session={session} listing={listing} price={props.premiumPrice} />}
        </>
      )}
    </Page>
  );
}

export function ListingNotFoundPage({ session }: { session: Session }) {
  return (
    <Page title="Listing not found" nav="dashboard" session={session}>
      <h1>Listing not found</h1>
      <p>You have no listing at this address. Your listings are on your dashboard.</p>
      <p>
        <LinkButton href={LISTING_PAGES.dashboard}>Go to your dashboard</LinkButton>
      </p>
    </Page>
  );
}

/** A change the listing's state does not allow (a rejected listing, Verify on a premium one). */
export function ListingRefusedPage({ session, listing, message }: { session: Session; listing: MakerListing; message: ComponentChildren }) {
  return (
    <Page title="Nothing was changed" nav="dashboard" session={session}>
      <h1>Nothing was changed</h1>
      <p>{message}</p>
      <p>
        <LinkButton href={LISTING_PAGES.edit(listing.slug)}>Back to {listing.name}</LinkButton>
      </p>
    </Page>
  );
}
