import type { ConnectedApp } from '../../auth/grants.ts';
import { NEVER_ALLOWED, SCOPE_MEANINGS, type Scope } from '../../auth/scopes.ts';
import { Card } from '../components/card.tsx';
import { Button, ErrorSummary, Field, Form, FormActions, type FieldErrors } from '../components/forms.tsx';
import type { NoticeMessage } from '../components/notice.tsx';
import { Page, type Session } from '../components/layout.tsx';
import { DataTable, type Column } from '../components/data-table.tsx';

/**
 * The pages of a maker's account: sign-in by e-mailed link, the OAuth consent page, and
 * Settings → Connected apps.
 */

const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const when = (d: Date) => `${dateTime.format(d)} UTC`;

export function SignInPage(props: { csrfToken: string; email?: string; returnTo?: string | undefined; errors?: FieldErrors; formError?: string; intro?: string }) {
  return (
    <Page title="Sign in" nav="signin" session={null}>
      <h1>Sign in</h1>
      <p>{props.intro ?? 'Makers sign in with a link sent by e-mail: no password to remember. A new address gets an account when its link is first used.'}</p>
      <ErrorSummary errors={props.errors ?? {}} formError={props.formError} />
      <Form action="/signin" csrfToken={props.csrfToken}>
        {props.returnTo && <input type="hidden" name="return_to" value={props.returnTo} />}
        <Field label="E-mail address" name="email" type="email" autocomplete="email" required maxLength={254} value={props.email} error={props.errors?.email} />
        <FormActions>
          <Button>Send me a sign-in link</Button>
        </FormActions>
      </Form>
    </Page>
  );
}

export function LinkSentPage({ email }: { email: string }) {
  return (
    <Page title="Check your inbox" nav="signin" session={null}>
      <h1>Check your inbox</h1>
      <p>
        If <strong>{email}</strong> can receive mail, a sign-in link is on its way. It works once, for 15 minutes.
      </p>
      <p class="muted">No mail after a few minutes? Look in the spam folder, or ask for a new link.</p>
      <p>
        <a href="/signin">Ask for another link</a>
      </p>
    </Page>
  );
}

export function ConfirmSignInPage({ csrfToken, token, email }: { csrfToken: string; token: string; email: string }) {
  return (
    <Page title="Sign in" nav="signin" session={null}>
      <h1>Sign in</h1>
      <p>
        Continue as <strong>{email}</strong>?
      </p>
      <Form action={`/signin/link/${token}`} csrfToken={csrfToken}>
        <FormActions>
          <Button>Sign in</Button>
        </FormActions>
      </Form>
    </Page>
  );
}

const LINK_PROBLEMS = {
  used: 'This sign-in link has already been used. Each link works once.',
  expired: 'This sign-in link has expired: links work for 15 minutes.',
  unknown: 'This sign-in link is not valid. Check that the whole link was copied.',
} as const;

export function LinkProblemPage({ problem, csrfToken }: { problem: keyof typeof LINK_PROBLEMS; csrfToken: string }) {
  return <SignInPage csrfToken={csrfToken} formError={LINK_PROBLEMS[problem]} intro="Ask for a new link below." />;
}

export interface ConsentView {
  uid: string;
  clientName: string;
  /** The app's own site, or the host its client id or redirect names. */
  clientSite: string | null;
  kind: ConnectedApp['clientKind'];
  clientId: string;
  /** Where the browser goes after Approve or Deny. */
  redirectTarget: string;
  scopes: readonly Scope[];
  /** The same scopes as the grant records them: the server's own, and each resource's. */
  requested: { oidc: readonly Scope[]; resources: Readonly<Record<string, readonly Scope[]>> };
}

export function ConsentPage({ session, view }: { session: Session; view: ConsentView }) {
  return (
    <Page title={`Connect ${view.clientName}`} session={session}>
      <h1>
        Connect <span class="app-name">{view.clientName}</span> to your account?
      </h1>
      <Card title="Who is asking">
        <dl class="facts">
          <dt>App</dt>
          <dd>{view.clientName}</dd>
          {view.clientSite && (
            <>
              <dt>Its site</dt>
              <dd>{view.clientSite}</dd>
            </>
          )}
          <dt>How it identifies itself</dt>
          <dd>
            {view.kind === 'metadata_document' ? (
              <>
                By a description it publishes at <code>{view.clientId}</code>, fetched by this directory.
              </>
            ) : (
              <>It registered itself with this directory; its name is its own claim, not checked by us.</>
            )}
          </dd>
          <dt>After you decide</dt>
          <dd>
            You go back to <code>{view.redirectTarget}</code>
          </dd>
          <dt>Your account</dt>
          <dd>{session.email}</dd>
        </dl>
      </Card>
      <Card title="If you approve, it can">
        {view.scopes.length === 0 ? (
          <p>Nothing beyond reading the public catalog, which needs no sign-in: it asks for no access to your listings.</p>
        ) : (
          <ul class="scopes">
            {view.scopes.map((scope) => (
              <li>
                <strong>{scope}</strong>: {SCOPE_MEANINGS[scope]}
              </li>
            ))}
          </ul>
        )}
      </Card>
      <Card title="It can never">
        <ul>
          {NEVER_ALLOWED.map((line) => (
            <li>{line}</li>
          ))}
        </ul>
        <p class="muted">You can disconnect it at any time in Settings → Connected apps; it then loses access at once.</p>
      </Card>
      <Form action={`/oauth/consent/${view.uid}`} csrfToken={session.csrfToken} aria-label="Your decision">
        <FormActions>
          <Button name="decision" value="approve">
            Approve
          </Button>
          <Button name="decision" value="deny" variant="secondary">
            Deny
          </Button>
        </FormActions>
      </Form>
    </Page>
  );
}

function connectedAppColumns(csrfToken: string): readonly Column<ConnectedApp>[] {
  return [
    {
      header: 'App',
      cell: (app) => (
        <>
          <strong>{app.clientName}</strong>
          {app.clientSite && <div class="muted">{app.clientSite}</div>}
        </>
      ),
    },
    { header: 'Allowed to', cell: (app) => (app.scopes.length ? app.scopes.join(', ') : 'no listing access') },
    { header: 'Connected', cell: (app) => when(app.createdAt) },
    { header: 'Last used', cell: (app) => (app.lastUsedAt ? when(app.lastUsedAt) : 'not yet') },
    {
      header: <span class="visually-hidden">Action</span>,
      cell: (app) => (
        <Form action={`/settings/apps/${encodeURIComponent(app.grantId)}/disconnect`} csrfToken={csrfToken} aria-label={`Disconnect ${app.clientName}`}>
          <Button variant="danger">Disconnect</Button>
        </Form>
      ),
    },
  ];
}

export function ConnectedAppsPage({ session, apps, notice }: { session: Session; apps: readonly ConnectedApp[]; notice?: NoticeMessage | null }) {
  return (
    <Page title="Connected apps" nav="apps" session={session} notice={notice}>
      <h1>Connected apps</h1>
      <p>Apps you allowed to act on your listings, such as an AI assistant. Disconnecting one stops its access at once, reads included.</p>
      {apps.length === 0 ? (
        <p class="muted">No app is connected to your account.</p>
      ) : (
        <DataTable class="table" columns={connectedAppColumns(session.csrfToken)} rows={apps} />
      )}
    </Page>
  );
}
