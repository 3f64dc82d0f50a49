import type { DecisionRecord, ReviewItem, SiteSnapshot } from '../../catalog/review/review-queue.ts';
import { ACTION_PAST, FEEDBACK_MAX, feedbackRequired, type ReviewAction } from '../../catalog/review/review-rules.ts';
import { Card } from '../components/card.tsx';
import { Button, ErrorSummary, Field, Form, FormActions, LinkButton, TextArea, fieldId, type ButtonVariant } from '../components/forms.tsx';
import type { NoticeMessage } from '../components/notice.tsx';
import { STATUS_LABELS, StatusBadge } from '../components/status-badge.tsx';
import { Page, type Session } from '../components/layout.tsx';
import { DataTable, type Column } from '../components/data-table.tsx';

/**
 * The admins' pages: the review queue, a listing found by slug with its decision history, and
 * the 403 page everyone else gets. Every decision is a plain form post (CSRF token included);
 * the feedback box is shared by the buttons of one listing.
 */

export const ADMIN_PATHS = {
  queue: '/admin/review',
  find: '/admin/listings',
  listing: (slug: string) => `/admin/listings/${slug}`,
  decisions: (slug: string) => `/admin/listings/${slug}/decisions`,
} as const;

/** A button of the decision form: the review actions, and approve-then-feature in one press. */
export type FormAction = ReviewAction | 'approve_feature';

const BUTTONS: ReadonlyArray<{ action: FormAction; label: string; variant: ButtonVariant }> = [
  { action: 'approve', label: 'Approve', variant: 'primary' },
  { action: 'approve_feature', label: 'Approve and feature', variant: 'secondary' },
  { action: 'request_changes', label: 'Request changes', variant: 'secondary' },
  { action: 'reject', label: 'Reject', variant: 'danger' },
  { action: 'hide', label: 'Hide', variant: 'secondary' },
  { action: 'restore', label: 'Restore', variant: 'primary' },
  { action: 'feature', label: 'Feature', variant: 'secondary' },
  { action: 'unfeature', label: 'Stop featuring', variant: 'secondary' },
];

export const DONE_MESSAGES: Readonly<Record<FormAction, string>> = { ...ACTION_PAST, approve_feature: 'approved and featured' };

const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const when = (d: Date) => `${dateTime.format(d)} UTC`;

/** A problem with one listing's decision form, shown on the form itself. */
export interface DecisionProblem {
  readonly slug: string;
  readonly message: string;
  /** The problem is the feedback: shown next to the box. */
  readonly onFeedback: boolean;
  /** What the admin typed, kept. */
  readonly feedback: string;
}

const feedbackFieldName = (slug: string) => `feedback-${slug}`;

/** A maker's image, shown only from an https address (as the pages' CSP allows, and never mixed content). */
function Preview({ url, label, kind }: { url: string | null; label: string; kind: 'cover' | 'icon' }) {
  if (!url) return <p class="muted">{label}: none</p>;
  let https = false;
  try {
    https = new URL(url).protocol === 'https:';
  } catch {
    https = false;
  }
  return (
    <figure class={`review-preview review-preview-${kind}`}>
      {https ? (
        <img src={url} alt={`${label} of the site`} referrerpolicy="no-referrer" loading="lazy" width={kind === 'cover' ? 320 : 64} height={kind === 'cover' ? 168 : 64} />
      ) : (
        <p class="muted">Not shown: only https images are previewed.</p>
      )}
      <figcaption>
        {label}: <code>{url}</code>
      </figcaption>
    </figure>
  );
}

/** A link to a maker's site, only for http(s) addresses; followed by nobody. */
function SiteLink({ url }: { url: string }) {
  return /^https?:\/\//i.test(url) ? (
    <a href={url} rel="nofollow noopener noreferrer">
      {url}
    </a>
  ) : (
    <code>{url}</code>
  );
}

function SiteFacts({ site }: { site: SiteSnapshot | null }) {
  if (!site) return <p class="muted">The site was not inspected (the listing was imported).</p>;
  if (site.problem) return <p>The site could not be read: {site.problem}</p>;
  return (
    <>
      <dl class="facts">
        <dt>Page read</dt>
        <dd>{site.url ? <SiteLink url={site.url} /> : 'unknown'}</dd>
        <dt>Title</dt>
        <dd>{site.title ?? <span class="muted">none</span>}</dd>
        <dt>Description</dt>
        <dd>{site.description ?? <span class="muted">none</span>}</dd>
        <dt>FAQ entries</dt>
        <dd>{site.faq ?? 0}</dd>
      </dl>
      <div class="review-previews">
        <Preview url={site.cover} label="Cover" kind="cover" />
        <Preview url={site.icon} label="Icon" kind="icon" />
      </div>
    </>
  );
}

function ListingFacts({ item }: { item: ReviewItem }) {
  return (
    <>
      <p>
        <StatusBadge status={item.status} /> {item.featured && <span class="badge badge-live">Featured</span>}{' '}
        {item.status === 'hidden' && item.hiddenReason && <span class="muted">{item.hiddenReason === 'admin' ? 'hidden by an admin' : 'hidden for a missing badge'}</span>}
      </p>
      <p class="punchline">{item.punchline || <span class="muted">No punchline</span>}</p>
      <dl class="facts">
        <dt>Slug</dt>
        <dd>
          <code>{item.slug}</code>
        </dd>
        <dt>Website</dt>
        <dd>
          <SiteLink url={item.website} />
        </dd>
        {item.previousWebsite && (
          <>
            <dt>Changed from</dt>
            <dd>
              <SiteLink url={item.previousWebsite} /> <span class="muted">(the maker changed the website; the old site stays reserved to this listing until it is approved)</span>
            </dd>
          </>
        )}
        <dt>Maker</dt>
        <dd>{item.makerEmail ?? <span class="muted">no maker account (imported)</span>}</dd>
        <dt>Category</dt>
        <dd>{item.category ?? <span class="muted">none</span>}</dd>
        <dt>Asked for review</dt>
        <dd>{item.requestedAt ? when(item.requestedAt) : <span class="muted">never</span>}</dd>
        <dt>Listed since</dt>
        <dd>{item.listedAt ? when(item.listedAt) : <span class="muted">never live</span>}</dd>
        <dt>Plan and badge</dt>
        <dd>
          {item.plan}, {item.plan === 'premium' ? 'no badge needed' : item.badgeVerified ? 'badge verified' : 'badge not verified'}
        </dd>
        <dt>Feedback the maker sees</dt>
        <dd>{item.feedback ?? <span class="muted">none</span>}</dd>
      </dl>
      <h3>What the automatic check found</h3>
      {item.reasons.length === 0 ? (
        <p class="muted">Nothing held it back.</p>
      ) : (
        <ul class="review-reasons">
          {item.reasons.map((r) => (
            <li>
              {r.message} <span class="muted">({r.code})</span>
            </li>
          ))}
        </ul>
      )}
      <h3>The site as inspected</h3>
      <SiteFacts site={item.site} />
      <h3>Other listings of the same website</h3>
      {item.sameWebsite.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="review-duplicates">
          {item.sameWebsite.map((d) => (
            <li>
              <a href={ADMIN_PATHS.listing(d.slug)}>{d.name}</a> <code>{d.slug}</code> {STATUS_LABELS[d.status]}
              {d.makerEmail && <span class="muted"> · {d.makerEmail}</span>}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function DecisionForm({ item, actions, csrfToken, from, problem }: { item: ReviewItem; actions: readonly FormAction[]; csrfToken: string; from: 'queue' | 'listing'; problem?: DecisionProblem | undefined }) {
  const name = feedbackFieldName(item.slug);
  const needsFeedback = actions.some((a) => a !== 'approve_feature' && feedbackRequired(a));
  return (
    <Form action={ADMIN_PATHS.decisions(item.slug)} csrfToken={csrfToken} aria-label={`Decide about ${item.name}`}>
      <input type="hidden" name="from" value={from} />
      {problem && !problem.onFeedback && (
        <p class="error-message" role="alert">
          {problem.message}
        </p>
      )}
      <TextArea
        label="Feedback to the maker"
        name="feedback"
        id={fieldId(name)}
        rows={3}
        maxLength={FEEDBACK_MAX}
        value={problem?.feedback ?? ''}
        error={problem?.onFeedback ? problem.message : undefined}
        hint={needsFeedback ? `Required to reject or to request changes; the maker reads it in their listings and by e-mail. At most ${FEEDBACK_MAX} characters.` : `The maker reads it in their listings. At most ${FEEDBACK_MAX} characters.`}
      />
      <FormActions>
        {BUTTONS.filter((b) => actions.includes(b.action)).map((b) => (
          <Button name="action" value={b.action} variant={b.variant}>
            {b.label}
          </Button>
        ))}
      </FormActions>
    </Form>
  );
}

/** The actions a listing's form offers: what the rules allow, and approve-and-feature beside approve. */
export function formActions(allowed: readonly ReviewAction[], item: ReviewItem): FormAction[] {
  const actions: FormAction[] = [...allowed];
  if (allowed.includes('approve') && !item.featured) actions.splice(1, 0, 'approve_feature');
  return actions;
}

export interface QueuePageProps {
  session: Session;
  items: readonly { item: ReviewItem; actions: readonly FormAction[] }[];
  total: number;
  /** Which page of the queue (from 1), and how many listings a page holds. */
  page: number;
  pageSize: number;
  notice?: NoticeMessage | null;
  problem?: DecisionProblem;
}

export function ReviewQueuePage({ session, items, total, page, pageSize, notice, problem }: QueuePageProps) {
  const first = (page - 1) * pageSize + 1;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const errors = problem?.onFeedback ? { [feedbackFieldName(problem.slug)]: `${problem.slug}: ${problem.message}` } : {};
  return (
    <Page title="Review queue" nav="review" session={session} notice={notice}>
      <h1>Review queue</h1>
      <p>
        Listings waiting for review, the oldest request first.{' '}
        {total === 0 ? 'Nothing waits.' : total > pageSize ? `${total} waiting; showing ${first} to ${first + items.length - 1}, page ${page} of ${pages}.` : `${total} waiting.`}
      </p>
      <Form method="get" action={ADMIN_PATHS.find} aria-label="Find a listing">
        <Field label="Find any listing by its slug" name="slug" maxLength={200} hint="To hide, restore or feature a listing, or read its history." />
        <FormActions>
          <Button variant="secondary">Find</Button>
        </FormActions>
      </Form>
      <ErrorSummary errors={errors} formError={problem && !problem.onFeedback ? `${problem.slug}: ${problem.message}` : undefined} />
      {items.map(({ item, actions }) => (
        <Card
          id={`listing-${item.slug}`}
          class="review-item"
          title={
            <a href={ADMIN_PATHS.listing(item.slug)}>
              {item.name}
            </a>
          }
        >
          <ListingFacts item={item} />
          <DecisionForm item={item} actions={actions} csrfToken={session.csrfToken} from="queue" problem={problem?.slug === item.slug ? problem : undefined} />
        </Card>
      ))}
      {pages > 1 && (
        <nav class="pages" aria-label="Queue pages">
          {page > 1 && <a href={`${ADMIN_PATHS.queue}?page=${page - 1}`}>Previous page</a>}
          {page < pages && <a href={`${ADMIN_PATHS.queue}?page=${page + 1}`}>Next page</a>}
        </nav>
      )}
    </Page>
  );
}

const HISTORY_ACTIONS: Readonly<Record<string, string>> = {
  approve: 'Approved',
  reject: 'Rejected',
  request_changes: 'Changes requested',
  hide: 'Hidden',
  restore: 'Restored',
  feature: 'Featured',
  unfeature: 'No longer featured',
  badge_hide: 'Hidden: badge missing',
  badge_restore: 'Back: badge found',
};

export interface ListingPageProps {
  session: Session;
  item: ReviewItem;
  actions: readonly FormAction[];
  history: readonly DecisionRecord[];
  notice?: NoticeMessage | null;
  problem?: DecisionProblem;
}

const HISTORY_COLUMNS: readonly Column<DecisionRecord>[] = [
  { header: 'When', cell: (d) => when(d.decidedAt) },
  { header: 'Decision', cell: (d) => HISTORY_ACTIONS[d.action] ?? d.action },
  {
    header: 'State',
    cell: (d) => (
      <>
        {STATUS_LABELS[d.from]} → {STATUS_LABELS[d.to]}
      </>
    ),
  },
  { header: 'By', cell: (d) => d.decidedBy ?? <span class="muted">the directory</span> },
  { header: 'Feedback', cell: (d) => d.feedback ?? <span class="muted">none</span> },
];

export function AdminListingPage({ session, item, actions, history, notice, problem }: ListingPageProps) {
  const errors = problem?.onFeedback ? { [feedbackFieldName(problem.slug)]: problem.message } : {};
  return (
    <Page title={`Review: ${item.name}`} nav="review" session={session} notice={notice}>
      <p>
        <a href={ADMIN_PATHS.queue}>← Review queue</a>
      </p>
      <h1>{item.name}</h1>
      <ErrorSummary errors={errors} formError={problem && !problem.onFeedback ? problem.message : undefined} />
      <Card>
        <ListingFacts item={item} />
        {item.status === 'live' && (
          <p>
            <a href={item.url}>Open the public page</a>
          </p>
        )}
      </Card>
      <Card title="Decide">
        {actions.length === 0 ? (
          <p class="muted">Nothing can be decided about a listing in this state.</p>
        ) : (
          <DecisionForm item={item} actions={actions} csrfToken={session.csrfToken} from="listing" problem={problem} />
        )}
      </Card>
      <Card title="History">
        {history.length === 0 ? (
          <p class="muted">No decision recorded yet.</p>
        ) : (
          <DataTable wrap columns={HISTORY_COLUMNS} rows={history} />
        )}
      </Card>
    </Page>
  );
}

export function FindListingPage({ session, slug, error }: { session: Session; slug?: string; error?: string }) {
  return (
    <Page title="Find a listing" nav="review" session={session}>
      <p>
        <a href={ADMIN_PATHS.queue}>← Review queue</a>
      </p>
      <h1>Find a listing</h1>
      <ErrorSummary errors={error ? { slug: error } : {}} />
      <Form method="get" action={ADMIN_PATHS.find} aria-label="Find a listing">
        <Field label="Slug" name="slug" value={slug} maxLength={200} required error={error} hint="The last part of the listing's address, such as pixel-forge." />
        <FormActions>
          <Button>Find</Button>
        </FormActions>
      </Form>
    </Page>
  );
}

/** Everyone but an admin, signed in or not, gets this and nothing of the admin pages' content. */
export function AdminForbiddenPage({ session, returnTo }: { session: Session | null; returnTo: string }) {
  return (
    <Page title="For admins only" session={session}>
      <h1>For admins only</h1>
      <p>This page is for the directory's admins{session ? `, and ${session.email} is not one` : ''}.</p>
      {!session && (
        <p>
          <LinkButton href={`/signin?return_to=${encodeURIComponent(returnTo)}`}>Sign in as an admin</LinkButton>
        </p>
      )}
    </Page>
  );
}
