import { useState } from 'preact/hooks';
import { api, ApiProblem } from '../api';
import type { SessionView } from '../api-types';
import { navigate } from '../router';
import { session } from '../session';

/** Sign in by pasting an API token: it is exchanged for a session cookie and forgotten by the page. */
export function SignIn({ notice }: { notice: string | null }) {
  const [error, setError] = useState<string | null>(null);
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
      navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/servers', { replace: true });
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
