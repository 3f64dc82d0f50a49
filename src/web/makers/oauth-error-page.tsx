import type { ErrorPage, OAuthErrorForPage } from '../../auth/authorization-server.ts';
import { ProblemPage } from '../components/problem-page.tsx';
import { contentSecurityPolicy } from '../csp.ts';
import { renderPage } from '../../http/html.ts';

/**
 * The page the authorization server shows when it cannot send the browser back to the app: an
 * unknown client, a redirect URI the client did not register, a malformed request. Nothing is
 * redirected anywhere from it (a bad redirect URI must never become an open redirect).
 */
const EXPLANATIONS: Record<string, string> = {
  invalid_client: 'The app asking to connect is not known to this directory, or its description could not be fetched.',
  invalid_redirect_uri: 'The app asked to send you back to an address it did not register, so the request was stopped here.',
};

export function oauthErrorPageFor(publicUrl: string) {
  const csp = contentSecurityPolicy({ publicUrl });
  return (error: OAuthErrorForPage): ErrorPage => {
    const why = error.detail ?? (error.description ? `(${error.description})` : '');
    const message = [EXPLANATIONS[error.error] ?? 'The app sent a request this directory cannot accept.', why]
      .filter(Boolean)
      .join(' ');
    const html = renderPage(<ProblemPage title="This app cannot connect" message={message} session={null} next={{ href: '/', label: 'Go to the directory' }} />);
    return { html, contentSecurityPolicy: csp };
  };
}
