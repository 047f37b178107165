import { useState } from 'preact/hooks';
import { api, get } from '../api';
import type { CreatedToken, Policy as PolicyView, Token } from '../api-types';
import { ErrorNote, Section, useLoad } from '../components/common';
import { TokenForm, TokenOnce, TokenTable, type TokenRequest } from '../components/tokens';
import { session } from '../session';
import { SCOPES } from '../../../domain/access/scopes';
const RISKS = ['read', 'change', 'destructive'] as const;

/** The organization's API tokens: create one (its value shown this once), see each one's last use, revoke. */
export function Tokens() {
  const list = useLoad(() => get<Token[]>('/api/v1/tokens'), []);
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [showRevoked, setShowRevoked] = useState(false);

  if (!session.can('admin')) {
    return (
      <main id="main">
        <h1>Tokens</h1>
        <p>Managing tokens takes the admin scope.</p>
      </main>
    );
  }

  const create = async (request: TokenRequest) => {
    setError(null);
    try {
      setCreated((await api<{ data: CreatedToken }>('POST', '/api/v1/tokens', request)).data);
      await list.reload();
      return true;
    } catch (problem) {
      setError(problem);
      return false;
    }
  };
  const revoke = async (token: Token) => {
    setError(null);
    try {
      await api('DELETE', `/api/v1/tokens/${token.id}`);
      await list.reload();
    } catch (problem) {
      setError(problem);
    }
  };

  const tokens = (list.data ?? []).filter((t) => showRevoked || !t.revoked_at);
  return (
    <main id="main">
      <h1>Tokens</h1>
      <ErrorNote error={error ?? list.error} />
      {created ? <TokenOnce key={created.id} created={created} onDone={() => setCreated(null)} /> : null}
      <Section title="Create a token">
        <TokenForm label="Create a token" offered={SCOPES} onCreate={create} />
      </Section>
      <Section
        title={`${tokens.length} token${tokens.length === 1 ? '' : 's'}`}
        actions={
          <label class="inline">
            <input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked((e.target as HTMLInputElement).checked)} /> Show revoked
          </label>
        }
      >
        <TokenTable tokens={tokens} caption="The organization’s tokens" onRevoke={revoke} />
      </Section>
    </main>
  );
}

/** The command policy of conversations: which risks run, which wait for a person. */
export function Policy() {
  const policy = useLoad(() => get<PolicyView>('/api/v1/policy'), []);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const p = policy.data;
  const admin = session.can('admin');

  const save = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setError(null);
    setSaved(false);
    try {
      await api('PUT', '/api/v1/policy', {
        allow_destructive: form.get('allow_destructive') === 'on',
        require_approval_for: form.getAll('require_approval_for').map(String),
        agents_require_approval_for_change: form.get('agents_require_approval_for_change') === 'on',
      });
      setSaved(true);
      await policy.reload();
    } catch (problem) {
      setError(problem);
    }
  };

  return (
    <main id="main">
      <h1>Command policy</h1>
      <ErrorNote error={error ?? policy.error} />
      {p ? (
        <Section title="Conversations’ steps">
          <p class="hint">
            Every planned step has a risk: <strong>read</strong> (looks, changes nothing), <strong>change</strong> (changes the server) or{' '}
            <strong>destructive</strong> (deletes or overwrites what cannot be restored). The policy decides what runs by itself, what waits for a
            person’s approval, and what never runs.
          </p>
          <form onSubmit={save} aria-label="Command policy">
            <fieldset disabled={!admin}>
              <legend>Steps that wait for a person’s approval</legend>
              {RISKS.map((risk) => (
                <label key={risk}>
                  <input type="checkbox" name="require_approval_for" value={risk} defaultChecked={p.require_approval_for.includes(risk)} /> {risk}
                </label>
              ))}
            </fieldset>
            <fieldset disabled={!admin}>
              <legend>AI agents</legend>
              <label>
                <input type="checkbox" name="agents_require_approval_for_change" defaultChecked={p.agents_require_approval_for_change} /> an agent’s change steps wait
                for a person too (its destructive steps always do)
              </label>
            </fieldset>
            <fieldset disabled={!admin}>
              <legend>Destructive steps</legend>
              <label>
                <input type="checkbox" name="allow_destructive" defaultChecked={p.allow_destructive} /> may run at all (otherwise they are refused)
              </label>
            </fieldset>
            {admin ? (
              <p>
                <button type="submit" class="primary">
                  Save the policy
                </button>{' '}
                {saved ? (
                  <span class="notice" role="status">
                    Saved: it applies to steps planned from now on.
                  </span>
                ) : null}
              </p>
            ) : (
              <p class="muted">Changing the policy takes the admin scope.</p>
            )}
          </form>
        </Section>
      ) : (
        <p class="muted">Loading…</p>
      )}
    </main>
  );
}
