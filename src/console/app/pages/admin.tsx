import { useState } from 'preact/hooks';
import { api, get } from '../api';
import type { CreatedToken, Policy as PolicyView, Token } from '../api-types';
import { ErrorNote, Section, useLoad, When } from '../components/common';
import { session } from '../session';

const SCOPES = ['read', 'servers:write', 'deployments:write', 'deployments:run', 'conversations:write', 'admin'] as const;
const RISKS = ['read', 'change', 'destructive'] as const;

/** The organization's API tokens: create one (its value shown this once), see each one's last use, revoke. */
export function Tokens() {
  const list = useLoad(() => get<Token[]>('/api/v1/tokens'), []);
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [copied, setCopied] = useState(false);
  const [confirm, setConfirm] = useState<string | null>(null);
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

  const create = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    setError(null);
    setCopied(false);
    try {
      const answer = await api<{ data: CreatedToken }>('POST', '/api/v1/tokens', {
        name: String(form.get('name') ?? ''),
        scopes: form.getAll('scopes').map(String),
        expires_in: form.get('expires_in') ? String(form.get('expires_in')) : null,
      });
      setCreated(answer.data);
      formElement.reset();
      await list.reload();
    } catch (problem) {
      setError(problem);
    }
  };
  const copy = async () => {
    if (!created) return;
    await navigator.clipboard.writeText(created.token);
    setCopied(true);
  };
  const revoke = async (id: string) => {
    setError(null);
    try {
      await api('DELETE', `/api/v1/tokens/${id}`);
      setConfirm(null);
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
      {created ? (
        <Section title={`Token “${created.name}” created`}>
          <p class="notice">
            Copy it now: this is the only time it is shown. Bosun keeps only its hash. Leaving or reloading this page forgets it.
          </p>
          <p class="token-once">
            <code aria-label="The new token">{created.token}</code>{' '}
            <button type="button" class="primary" onClick={() => void copy()}>
              {copied ? 'Copied' : 'Copy'}
            </button>{' '}
            <button type="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </p>
        </Section>
      ) : null}
      <Section title="Create a token">
        <form class="grid-form" onSubmit={create} aria-label="Create a token">
          <label>
            Name <input name="name" required pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,63}" placeholder="ci-release" />
          </label>
          <label>
            Expires
            <select name="expires_in">
              <option value="1d">in a day</option>
              <option value="30d">in 30 days</option>
              <option value="90d" selected>
                in 90 days
              </option>
              <option value="365d">in a year</option>
              <option value="">never</option>
            </select>
          </label>
          <fieldset class="wide">
            <legend>Scopes</legend>
            {SCOPES.map((scope) => (
              <label key={scope}>
                <input type="checkbox" name="scopes" value={scope} defaultChecked={scope === 'read'} /> {scope}
              </label>
            ))}
          </fieldset>
          <div class="wide">
            <button type="submit" class="primary">
              Create the token
            </button>
          </div>
        </form>
      </Section>
      <Section
        title={`${tokens.length} token${tokens.length === 1 ? '' : 's'}`}
        actions={
          <label class="inline">
            <input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked((e.target as HTMLInputElement).checked)} /> Show revoked
          </label>
        }
      >
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Scopes</th>
              <th>Created</th>
              <th>Last used</th>
              <th>Expires</th>
              <th>
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((t) => (
              <tr key={t.id} data-token={t.name}>
                <td>
                  {t.name} <code class="muted small">{t.prefix}…</code>
                  {t.current ? <span class="tag">this session</span> : null}
                </td>
                <td>{t.scopes.join(', ')}</td>
                <td>
                  <When at={t.created_at} />
                </td>
                <td>{t.last_used_at ? <When at={t.last_used_at} /> : <span class="muted">never</span>}</td>
                <td>{t.expires_at ? <When at={t.expires_at} /> : <span class="muted">never</span>}</td>
                <td>
                  {t.revoked_at ? (
                    <span class="muted">
                      revoked <When at={t.revoked_at} />
                    </span>
                  ) : confirm === t.id ? (
                    <>
                      <button type="button" class="danger" onClick={() => void revoke(t.id)}>
                        Yes, revoke {t.name}
                      </button>{' '}
                      <button type="button" onClick={() => setConfirm(null)}>
                        Keep
                      </button>
                      {t.current ? <div class="warning small">This is the token of this session: you will be signed out.</div> : null}
                    </>
                  ) : (
                    <button type="button" onClick={() => setConfirm(t.id)} aria-label={`Revoke ${t.name}`}>
                      Revoke…
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
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
