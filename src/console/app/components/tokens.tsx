import { useState } from 'preact/hooks';
import type { CreatedToken, Token } from '../api-types';
import { Section, When } from './common';
import { Confirmed } from './confirm';
import { Table } from './table';

/** What a token form asks: POST /tokens, /people/{id}/tokens and /service-accounts/{id}/tokens take the same body. */
export interface TokenRequest {
  name: string;
  scopes: string[];
  expires_in: string | null;
}

const DEFAULT_EXPIRY = '90d';

/** A token's name, expiry and scopes (only `offered` ones: a token may not reach past the caller's own). */
export function TokenForm({ label, offered, onCreate }: { label: string; offered: readonly string[]; onCreate: (request: TokenRequest) => Promise<boolean> }) {
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const made = await onCreate({
      name: String(form.get('name') ?? ''),
      scopes: form.getAll('scopes').map(String),
      expires_in: form.get('expires_in') ? String(form.get('expires_in')) : null,
    });
    if (!made) return;
    formElement.reset();
    // Preact sets `selected` as a property, which reset() ignores: the default expiry is put back by hand.
    (formElement.elements.namedItem('expires_in') as HTMLSelectElement).value = DEFAULT_EXPIRY;
  };
  return (
    <form class="grid-form" onSubmit={submit} aria-label={label}>
      <label>
        Name <input name="name" required pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,63}" placeholder="ci-release" />
      </label>
      <label>
        Expires
        <select name="expires_in">
          <option value="1d">in a day</option>
          <option value="30d">in 30 days</option>
          <option value={DEFAULT_EXPIRY} selected>
            in 90 days
          </option>
          <option value="365d">in a year</option>
          <option value="">never</option>
        </select>
      </label>
      <fieldset class="wide">
        <legend>Scopes</legend>
        {offered.map((scope) => (
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
  );
}

/** A new token's value, this once: copied or not, it is forgotten on Done or when the page is left. */
export function TokenOnce({ created, onDone }: { created: CreatedToken; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(created.token);
    setCopied(true);
  };
  return (
    <Section title={`Token “${created.name}” created`}>
      <p class="notice">Copy it now: this is the only time it is shown. Bosun keeps only its hash. Leaving or reloading this page forgets it.</p>
      <p class="token-once">
        <code aria-label="The new token">{created.token}</code>{' '}
        <button type="button" class="primary" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy'}
        </button>{' '}
        <button type="button" onClick={onDone}>
          Done
        </button>
      </p>
    </Section>
  );
}

type TokenBinding = Token['can']['bindings'][number];

/** A role binding the token may use, as a sentence: "approver: read, approve on servers tagged web". */
function bindingSentence(g: TokenBinding): string {
  const actions = g.actions.includes('admin') ? 'everything' : g.actions.join(', ');
  const servers = g.servers ? `servers tagged ${g.servers.tags.join(' and ')}` : 'every server';
  const deployments = g.deployments ? `, ${g.deployments.length} deployment${g.deployments.length === 1 ? '' : 's'} only` : '';
  const limit = g.max_targets_per_run ? `, at most ${g.max_targets_per_run} servers per run` : '';
  return `${g.role}: ${actions} on ${servers}${deployments}${limit}`;
}

/** What a token can do (the server's answer: its identity's roles narrowed by its scopes), and its scopes beneath. */
function TokenCan({ token: t }: { token: Token }) {
  return (
    <div data-token-can>
      {t.can.bindings.length ? (
        <ul class="plain token-can">
          {t.can.bindings.map((g, i) => (
            <li key={i}>{bindingSentence(g)}</li>
          ))}
        </ul>
      ) : (
        <span class="muted">nothing</span>
      )}
      <div class="muted small">scopes: {t.scopes.join(', ')}</div>
    </div>
  );
}

/** Tokens with what they can do and their uses; each one not yet revoked has Revoke, after a confirmation. */
export function TokenTable({ tokens, caption, onRevoke }: { tokens: Token[]; caption: string; onRevoke: (token: Token) => Promise<void> }) {
  const [confirm, setConfirm] = useState<string | null>(null);
  return (
    <Table
      caption={caption}
      rows={tokens}
      rowKey={(t) => t.id}
      mark={(t) => ({ 'data-token': t.name })}
      columns={[
        {
          head: 'Name',
          cell: (t) => (
            <>
              {t.name} <code class="muted small">{t.prefix}…</code>
              {t.current ? <span class="tag">this session</span> : null}
            </>
          ),
        },
        { head: 'Can do', cell: (t) => <TokenCan token={t} /> },
        { head: 'Created', cell: (t) => <When at={t.created_at} /> },
        { head: 'Last used', cell: (t) => (t.last_used_at ? <When at={t.last_used_at} /> : <span class="muted">never</span>) },
        { head: 'Expires', cell: (t) => (t.expires_at ? <When at={t.expires_at} /> : <span class="muted">never</span>) },
      ]}
      actions={{
        cell: (t) =>
          t.revoked_at ? (
            <span class="muted">
              revoked <When at={t.revoked_at} />
            </span>
          ) : (
            <Confirmed
              asking={{ confirm, setConfirm }}
              id={t.id}
              ask="Revoke…"
              askLabel={`Revoke ${t.name}`}
              yes={`Yes, revoke ${t.name}`}
              onYes={() => void onRevoke(t).then(() => setConfirm(null))}
              warning={t.current ? 'This is the token of this session: you will be signed out.' : null}
            />
          ),
      }}
    />
  );
}
