import { LinkButton } from './forms.tsx';
import { Page, type Session } from './layout.tsx';

/** A page that says what went wrong in a sentence, with the one way forward when there is one. */
export function ProblemPage({ title, message, session, next }: { title: string; message: string; session: Session | null; next?: { href: string; label: string } }) {
  return (
    <Page title={title} session={session}>
      <h1>{title}</h1>
      <p>{message}</p>
      {next && (
        <p>
          <LinkButton href={next.href}>{next.label}</LinkButton>
        </p>
      )}
    </Page>
  );
}
