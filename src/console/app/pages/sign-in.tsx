import { useEffect, useState } from 'preact/hooks';
import { api, ApiProblem, get } from '../api';
import type { ProvidersView, SessionView, SignInFailure } from '../api-types';
import { navigate } from '../router';
import { session } from '../session';

/** Why the OpenID provider's round trip came back here (`?sso=`), in the page's own words. */
const SSO_FAILURES: Record<SignInFailure, string> = {
  not_configured: 'No identity provider is configured: sign in with an API token.',
  unreachable: 'The identity provider cannot be reached: try again later, or sign in with an API token.',
  expired: 'The sign-in took too long or was started in another browser: try again.',
  denied: 'The identity provider did not sign you in.',
  failed: 'The identity provider’s answer could not be verified: try again.',
  unknown_person: 'Bosun does not know you yet: ask an administrator to add you.',
  disabled: 'Your identity is disabled: ask an administrator.',
};

/** "Sign in with <provider>", or why not; nothing while the page asks, or when none is configured. */
function ProviderSignIn() {
  const [oidc, setOidc] = useState<ProvidersView['oidc']>(null);
  useEffect(() => {
    get<ProvidersView>('/api/v1/session/providers').then((providers) => setOidc(providers.oidc), () => setOidc(null));
  }, []);
  if (!oidc) return null;
  if (!oidc.reachable) {
    return (
      <p class="error-note" role="alert">
        The identity provider ({oidc.name}) cannot be reached: sign in with an API token below.
      </p>
    );
  }
  return (
    <p class="provider">
      <a class="button primary" href={oidc.sign_in_url}>
        Sign in with {oidc.name}
      </a>
    </p>
  );
}

/**
 * Sign in through the organization's identity provider, when one is configured, or by pasting an
 * API token: it is exchanged for a session cookie and forgotten by the page.
 */
export function SignIn({ notice }: { notice: string | null }) {
  const sso = new URLSearchParams(location.search).get('sso');
  const [error, setError] = useState<string | null>(sso && sso in SSO_FAILURES ? SSO_FAILURES[sso as SignInFailure] : null);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem('token') as HTMLInputElement;
    setBusy(true);
    setError(null);
    try {
      const { data } = await api<{ data: SessionView }>('POST', '/api/v1/session', { token: input.value.trim() });
      input.value = '';
      session.set(data);
      const next = new URLSearchParams(location.search).get('next');
      navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/', { replace: true });
    } catch (problem) {
      setError(problem instanceof ApiProblem ? problem.message : 'Bosun could not be reached');
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <h1>Sign in to Bosun</h1>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <ProviderSignIn />
      <form onSubmit={onSubmit}>
        <label for="token">API token</label>
        <input id="token" name="token" type="password" autoComplete="off" required placeholder="bsn_…" />
        <p class="hint">Paste a token from <code>bosun tokens create</code>. The page keeps only a session cookie, never the token.</p>
        {error ? (
          <p class="error-note" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
