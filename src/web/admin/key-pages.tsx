import {
  DEFAULT_GRACE_HOURS,
  DEFAULT_KEY_LIMITS,
  KEY_FAMILIES,
  MAX_GRACE_HOURS,
  MAX_KEY_LIMIT,
  type IssuedKey,
  type KeyFamily,
  type KeyInfo,
  type KeyStatus,
  type UsageDay,
} from '../../auth/consumer-keys/consumer-keys.ts';
import { Card } from '../components/card.tsx';
import { Button, ErrorSummary, Field, Form, FormActions, LinkButton, fieldId } from '../components/forms.tsx';
import type { NoticeMessage } from '../components/notice.tsx';
import { Page, type Session } from '../components/layout.tsx';
import { UsageChart } from './usage-chart.tsx';

/**
 * The admins' page of consumer keys (what `catalog keys` does on the command line): every key
 * with its budgets, last use and a 30-day chart of its requests; a form to make a key, one per
 * key to rotate its secret, and a confirmation page to revoke it. A key's secret is shown once,
 * on the answer to the form that made it (never in an address, a cookie or a log).
 */

export const KEY_PATHS = {
  list: '/admin/keys',
  create: '/admin/keys',
  rotate: (name: string) => `/admin/keys/${name}/rotate`,
  revoke: (name: string) => `/admin/keys/${name}/revoke`,
} as const;

/** Days of usage the page charts. */
export const CHART_DAYS = 30;

/** Each budget as the page names it (a label, and the heading of its column). */
export const FAMILY_LABELS: Readonly<Record<KeyFamily, { label: string; column: string }>> = {
  search: { label: 'Searches per minute', column: 'Search' },
  other: { label: 'Other calls per minute', column: 'Other' },
  export: { label: 'Exports per minute', column: 'Export' },
  changes: { label: 'Change-feed requests per minute', column: 'Changes' },
};

const STATUS: Readonly<Record<KeyStatus, { label: string; badge: string }>> = {
  active: { label: 'Active', badge: 'badge-live' },
  revoked: { label: 'Revoked', badge: 'badge-rejected' },
  expired: { label: 'Expired', badge: 'badge-draft' },
};

const n = (v: number) => v.toLocaleString('en-US');
const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const when = (iso: string) => `${dateTime.format(new Date(iso))} UTC`;

/** What the admin typed into the form that makes a key, kept when it is sent back. */
export interface CreateValues {
  name: string;
  search: string;
  other: string;
  export: string;
  changes: string;
  expires: string;
}

const EMPTY_CREATE: CreateValues = { name: '', search: '', other: '', export: '', changes: '', expires: '' };

/** The form that makes a key, sent back: field name → message, and what was typed. */
export interface CreateProblem {
  values: CreateValues;
  errors: Readonly<Record<string, string>>;
}

/** A key's rotation form sent back: the key, its message and the hours typed. */
export interface RotateProblem {
  name: string;
  message: string;
  graceHours: string;
}

const graceFieldName = (name: string) => `grace-${name}`;

function KeyStatusBadge({ status }: { status: KeyStatus }) {
  return <span class={`badge ${STATUS[status].badge}`}>{STATUS[status].label}</span>;
}

const whenShort = (iso: string) => dateTime.format(new Date(iso));

/**
 * Every key in a row: the budgets under one heading spanning their four columns, times in UTC as
 * the heading says. Inside a `table-wrap`, which scrolls sideways on a narrow screen.
 */
function KeysTable({ keys }: { keys: readonly KeyInfo[] }) {
  return (
    <div class="table-wrap">
      <table class="keys-table">
        <thead>
          <tr>
            <th scope="col" rowSpan={2}>
              Name
            </th>
            <th scope="col" rowSpan={2}>
              Status
            </th>
            <th scope="col" rowSpan={2}>
              Key
            </th>
            <th scope="colgroup" colSpan={KEY_FAMILIES.length} class="budgets-heading">
              Budgets per minute
            </th>
            <th scope="col" rowSpan={2}>
              Works through
            </th>
            <th scope="col" rowSpan={2}>
              Last used (UTC)
            </th>
          </tr>
          <tr>
            {KEY_FAMILIES.map((f) => (
              <th scope="col" class="number">
                {FAMILY_LABELS[f].column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr>
              <td class="key-name">
                <a href={`#key-${k.name}`}>{k.name}</a>
              </td>
              <td>
                <KeyStatusBadge status={k.status} />
              </td>
              <td>
                <code class="nowrap">{`${k.prefix}…`}</code>
                {k.retiring.map((r) => (
                  <span class="retiring">
                    previous <code>{`${r.prefix}…`}</code> until {when(r.retires_at)}
                  </span>
                ))}
              </td>
              {KEY_FAMILIES.map((f) => (
                <td class="number">{n(k.limits[f])}</td>
              ))}
              <td class="nowrap">{k.expires_at ?? <span class="muted">no expiry</span>}</td>
              <td class="nowrap">{k.last_used_at ? whenShort(k.last_used_at) : <span class="muted">never</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function KeyFacts({ info }: { info: KeyInfo }) {
  return (
    <dl class="listing-facts">
      <dt>Key</dt>
      <dd>
        <code>{`${info.prefix}…`}</code> <span class="muted">(its start; the rest is never shown again)</span>
      </dd>
      <dt>Budgets</dt>
      <dd>
        {n(info.limits.search)} searches, {n(info.limits.other)} other calls, {n(info.limits.export)} exports and {n(info.limits.changes)} change-feed requests a minute
      </dd>
      <dt>Works through</dt>
      <dd>{info.expires_at ? `${info.expires_at} (UTC)` : 'no expiry'}</dd>
      <dt>Made</dt>
      <dd>{when(info.created_at)}</dd>
      {info.revoked_at && (
        <>
          <dt>Revoked</dt>
          <dd>{when(info.revoked_at)}</dd>
        </>
      )}
      <dt>Last used</dt>
      <dd>{info.last_used_at ? when(info.last_used_at) : 'never'}</dd>
      {info.retiring.length > 0 && (
        <>
          <dt>Previous secrets</dt>
          <dd>
            <ul class="plain-list">
              {info.retiring.map((r) => (
                <li>
                  <code>{`${r.prefix}…`}</code> keeps working until {when(r.retires_at)}
                </li>
              ))}
            </ul>
          </dd>
        </>
      )}
    </dl>
  );
}

function RotateForm({ info, csrfToken, problem }: { info: KeyInfo; csrfToken: string; problem?: RotateProblem | undefined }) {
  const field = graceFieldName(info.name);
  return (
    <Form action={KEY_PATHS.rotate(info.name)} csrfToken={csrfToken} class="key-action" aria-label={`Rotate the key ${info.name}`}>
      <h3>Rotate</h3>
      <p>A new secret for this key, shown once; the current one keeps working for the hours below, then stops. Budgets and usage stay the key's.</p>
      {/* The secret the admin saw: a form posted again (a reload) after a rotation changes nothing. */}
      <input type="hidden" name="current" value={info.prefix} />
      <Field
        label="Hours the current secret keeps working"
        name="grace_hours"
        id={fieldId(field)}
        type="number"
        min={0}
        max={MAX_GRACE_HOURS}
        required
        value={problem?.graceHours ?? String(DEFAULT_GRACE_HOURS)}
        error={problem?.message}
        hint={`From 0 (it stops now) to ${MAX_GRACE_HOURS}; usually ${DEFAULT_GRACE_HOURS}, time for the client to switch.`}
      />
      <FormActions>
        <Button variant="secondary">Rotate {info.name}</Button>
      </FormActions>
    </Form>
  );
}

function KeyCard({ info, days, csrfToken, rotateProblem }: { info: KeyInfo; days: readonly UsageDay[]; csrfToken: string; rotateProblem?: RotateProblem | undefined }) {
  return (
    <Card
      id={`key-${info.name}`}
      class="key-card"
      title={
        <>
          {info.name} <KeyStatusBadge status={info.status} />
        </>
      }
    >
      <KeyFacts info={info} />
      <UsageChart name={info.name} days={days} />
      {info.status === 'active' && <RotateForm info={info} csrfToken={csrfToken} problem={rotateProblem} />}
      {info.status !== 'revoked' && (
        <div class="key-action">
          <h3>Revoke</h3>
          <p>Stops every secret of this key at once; it cannot be undone.</p>
          <p>
            <LinkButton href={KEY_PATHS.revoke(info.name)} variant="danger">
              Revoke {info.name}…
            </LinkButton>
          </p>
        </div>
      )}
    </Card>
  );
}

function CreateForm({ csrfToken, problem }: { csrfToken: string; problem?: CreateProblem | undefined }) {
  const values = problem?.values ?? EMPTY_CREATE;
  const errors = problem?.errors ?? {};
  return (
    <Form action={KEY_PATHS.create} csrfToken={csrfToken} id="make-key" aria-label="Make a key">
      <Field
        label="Name"
        name="name"
        required
        maxLength={64}
        autocomplete="off"
        value={values.name}
        error={errors.name}
        hint="Who the key is for, such as acme-search: 1 to 64 of a-z, 0-9 and -. Names are never reused, a revoked key's included."
      />
      <fieldset class="fieldset">
        <legend>Budgets per minute</legend>
        <p class="hint">Left empty, a budget is the default shown in its box: twenty times an address's searches and other calls, five times its exports, ten times its change-feed requests.</p>
        <div class="key-budgets">
          {KEY_FAMILIES.map((f) => (
            <Field
              label={FAMILY_LABELS[f].label}
              name={f}
              type="number"
              min={1}
              max={MAX_KEY_LIMIT}
              placeholder={String(DEFAULT_KEY_LIMITS[f])}
              value={values[f]}
              error={errors[f]}
            />
          ))}
        </div>
      </fieldset>
      <Field label="Last valid day" name="expires" type="date" value={values.expires} error={errors.expires} hint="The key works through this day (UTC), then stops. Left empty, it never expires." />
      <FormActions>
        <Button>Make the key</Button>
      </FormActions>
    </Form>
  );
}

export interface KeysPageProps {
  session: Session;
  keys: readonly KeyInfo[];
  /** Each key's usage, by name, oldest day first. */
  usage: ReadonlyMap<string, readonly UsageDay[]>;
  notice?: NoticeMessage | null;
  create?: CreateProblem;
  rotate?: RotateProblem;
}

export function KeysPage({ session, keys, usage, notice, create, rotate }: KeysPageProps) {
  const summary: Record<string, string> = { ...create?.errors };
  if (rotate) summary[graceFieldName(rotate.name)] = `${rotate.name}: ${rotate.message}`;
  return (
    <Page title="Consumer keys" nav="keys" session={session} notice={notice}>
      <h1>Consumer keys</h1>
      <p>
        A key gives a high-volume API client budgets of its own instead of its address's. The client sends it as <code>Authorization: Bearer ck_…</code> on{' '}
        <code>/api/v1</code> and <code>/api/mcp</code>; the command line does the same with <code>catalog keys</code>.
      </p>
      <ErrorSummary errors={summary} />
      {keys.length === 0 ? (
        <p class="muted">No keys yet: make the first one below.</p>
      ) : (
        <KeysTable keys={keys} />
      )}
      <Card title="Make a key" id="make">
        <CreateForm csrfToken={session.csrfToken} problem={create} />
      </Card>
      {keys.map((info) => (
        <KeyCard info={info} days={usage.get(info.name) ?? []} csrfToken={session.csrfToken} rotateProblem={rotate?.name === info.name ? rotate : undefined} />
      ))}
    </Page>
  );
}

/** The answer to making or rotating a key: the only time its secret is shown. */
export function KeyIssuedPage({ session, issued, rotated }: { session: Session; issued: IssuedKey; rotated?: { previousPrefix: string; previousRetiresAt: string } }) {
  const title = rotated ? `A new secret for ${issued.name}` : `The key ${issued.name} is made`;
  return (
    <Page title={title} nav="keys" session={session}>
      <p class="breadcrumb">
        <a href={KEY_PATHS.list}>Consumer keys</a>
      </p>
      <h1>{title}</h1>
      <div class="notice notice-error secret-warning" role="alert">
        <p>
          <strong>Copy it now: it is shown this once.</strong> Only its hash is kept, so this page cannot show it again; a lost key is rotated for a new one.
        </p>
      </div>
      <Card title="The key" class="issued-key-card">
        <p>
          <code class="issued-key" id="issued-key">
            {issued.key}
          </code>
        </p>
        <p class="hint">The client sends it on every request as <code>Authorization: Bearer</code> followed by the key.</p>
      </Card>
      <dl class="listing-facts">
        <dt>Budgets</dt>
        <dd>
          {n(issued.limits.search)} searches, {n(issued.limits.other)} other calls, {n(issued.limits.export)} exports and {n(issued.limits.changes)} change-feed requests a minute
        </dd>
        <dt>Works through</dt>
        <dd>{issued.expires_at ? `${issued.expires_at} (UTC)` : 'no expiry'}</dd>
        {rotated && (
          <>
            <dt>Previous secret</dt>
            <dd>
              <code>{`${rotated.previousPrefix}…`}</code> keeps working until {when(rotated.previousRetiresAt)}, then stops.
            </dd>
          </>
        )}
      </dl>
      <p>
        {/* An address of its own: a link to this page's address plus a fragment would only scroll. */}
        <LinkButton href={`${KEY_PATHS.list}?done=${rotated ? 'rotated' : 'made'}&key=${issued.name}#key-${issued.name}`}>Done: back to the keys</LinkButton>
      </p>
    </Page>
  );
}

/** The confirmation step before a key is revoked. */
export function RevokeKeyPage({ session, info }: { session: Session; info: KeyInfo }) {
  return (
    <Page title={`Revoke ${info.name}`} nav="keys" session={session}>
      <p class="breadcrumb">
        <a href={KEY_PATHS.list}>Consumer keys</a>
      </p>
      <h1>Revoke the key {info.name}?</h1>
      <KeyFacts info={info} />
      {info.status === 'revoked' ? (
        <p>This key is revoked already.</p>
      ) : (
        <Form action={KEY_PATHS.revoke(info.name)} csrfToken={session.csrfToken} aria-label={`Revoke the key ${info.name}`}>
          <p>
            Every secret of this key stops working on every API process within a second: its client's requests are answered 401 from then on. A revoked key cannot be
            restored, and its name cannot be used again.
          </p>
          <FormActions>
            <Button variant="danger">Revoke {info.name}</Button>
            <LinkButton href={`${KEY_PATHS.list}#key-${info.name}`}>Cancel</LinkButton>
          </FormActions>
        </Form>
      )}
    </Page>
  );
}
