import { useState } from 'preact/hooks';
import { api, get, getAll } from '../api';
import type { CreatedToken, DeploymentListItem, Me, Token } from '../api-types';
import { ErrorNote, Section, useLoad } from '../components/common';
import { Grants, namesOf } from '../components/rights';
import { TokenForm, TokenOnce, TokenTable, type TokenRequest } from '../components/tokens';
import { session } from '../session';
import { SCOPES } from '../../../domain/access/scopes';

/** Whoever is signed in: who they are, their teams and rights, their own tokens (make one, revoke one). */
export function Account() {
  const me = useLoad(() => Promise.all([get<Me>('/api/v1/me'), getAll<DeploymentListItem>('/api/v1/deployments')]), []);
  const tokens = useLoad(() => get<Token[]>('/api/v1/me/tokens'), []);
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [who, deployments] = me.data ?? [];
  const current = session.get();
  // A new token may not reach past this session's token, and a scope beyond one's roles would give nothing.
  const offered = SCOPES.filter((scope) => (current?.scopes.includes('admin') || current?.scopes.includes(scope)) && session.can(scope));

  const create = async (request: TokenRequest) => {
    setError(null);
    try {
      setCreated((await api<{ data: CreatedToken }>('POST', '/api/v1/tokens', request)).data);
      await tokens.reload();
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
      await tokens.reload();
    } catch (problem) {
      setError(problem);
    }
  };

  return (
    <main id="main">
      <h1>My account</h1>
      <ErrorNote error={error ?? me.error ?? tokens.error} />
      {who && current ? (
        <>
          <dl class="facts panel" aria-label="Who you are">
            <dt>Name</dt>
            <dd>{who.identity.name}</dd>
            <dt>Kind</dt>
            <dd>{who.identity.type === 'person' ? 'person' : 'service account'}</dd>
            <dt>Organization</dt>
            <dd>{current.organization}</dd>
            <dt>Signed in with</dt>
            <dd>
              the token {current.token_name} <span class="muted">(scopes {current.scopes.join(', ')}: they narrow your roles, never add to them)</span>
            </dd>
            <dt>Teams</dt>
            <dd>{who.teams.map((t) => t.name).join(', ') || <span class="muted">none</span>}</dd>
            <dt>Rights here</dt>
            <dd>{current.rights.join(', ') || <span class="muted">none</span>}</dd>
          </dl>
          <Section title="What you can do">
            <Grants
              bindings={who.bindings}
              teamName={(id) => who.teams.find((t) => t.id === id)?.name}
              deploymentName={namesOf(deployments)}
              nobody="No role has been given to you or your teams yet: ask an administrator."
            />
            {current.scopes.includes('admin') ? null : <p class="hint small">This session’s token narrows these to its scopes: {current.scopes.join(', ')}.</p>}
          </Section>
        </>
      ) : (
        <p class="muted">Loading…</p>
      )}
      {created ? <TokenOnce key={created.id} created={created} onDone={() => setCreated(null)} /> : null}
      {offered.length ? (
        <Section title="Make a token for yourself">
          <TokenForm label="Make a token for yourself" offered={offered} onCreate={create} />
        </Section>
      ) : null}
      <Section title={tokens.data ? `Your ${tokens.data.length} token${tokens.data.length === 1 ? '' : 's'}` : 'Your tokens'}>
        <TokenTable tokens={tokens.data ?? []} caption="Your tokens" onRevoke={revoke} />
      </Section>
    </main>
  );
}
