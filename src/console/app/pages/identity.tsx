import { useState } from 'preact/hooks';
import { api, get } from '../api';
import type { CreatedToken, Person, ServiceAccount } from '../api-types';
import { ErrorNote, Section, useLoad, When } from '../components/common';
import { AdminOnly, WhatItCanDo } from '../components/rights';
import { TokenForm, TokenOnce, type TokenRequest } from '../components/tokens';
import { SCOPES } from '../../../domain/access/scopes';

type Kind = 'person' | 'service_account';
const PATH: Record<Kind, string> = { person: '/api/v1/people', service_account: '/api/v1/service-accounts' };

/** A person or a service account, for administrators: who it is, what it can do, and a new token for it. */
export function IdentityPage({ kind, id }: { kind: Kind; id: string }) {
  return (
    <AdminOnly title={kind === 'person' ? 'A person' : 'A service account'}>
      <Identity kind={kind} id={id} />
    </AdminOnly>
  );
}

function Identity({ kind, id }: { kind: Kind; id: string }) {
  const identity = useLoad(() => get<Person | ServiceAccount>(`${PATH[kind]}/${id}`), [kind, id]);
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [error, setError] = useState<unknown>(null);
  const found = identity.data;
  const person = kind === 'person' ? (found as Person | undefined) : undefined;

  const makeToken = async (request: TokenRequest) => {
    setError(null);
    try {
      setCreated((await api<{ data: CreatedToken }>('POST', `${PATH[kind]}/${id}/tokens`, request)).data);
      return true;
    } catch (problem) {
      setError(problem);
      return false;
    }
  };

  return (
    <main id="main">
      <p class="crumbs">
        <a href={kind === 'person' ? '/people' : '/service-accounts'}>{kind === 'person' ? 'People' : 'Service accounts'}</a>
      </p>
      <h1>
        {found?.name ?? '…'}
        {person?.disabled ? <span class="status status-failed">disabled</span> : null}
      </h1>
      <ErrorNote error={error ?? identity.error} />
      {found ? (
        <>
          <dl class="facts panel">
            <dt>Kind</dt>
            <dd>{kind === 'person' ? 'person' : 'service account'}</dd>
            {person ? (
              <>
                <dt>Email</dt>
                <dd>{person.email ?? <span class="muted">—</span>}</dd>
                <dt>Single sign-on</dt>
                <dd>{person.oidc_subject ? <code>{person.oidc_subject}</code> : <span class="muted">not linked</span>}</dd>
              </>
            ) : (
              <>
                <dt>Description</dt>
                <dd>{(found as ServiceAccount).description ?? <span class="muted">—</span>}</dd>
              </>
            )}
            <dt>Added</dt>
            <dd>
              <When at={found.created_at} />
            </dd>
          </dl>
          {person?.disabled ? <p class="warning">Disabled: none of their tokens or sessions work until they are enabled again.</p> : null}
          <WhatItCanDo subject={{ type: kind, id }} name={found.name} />
          {created ? <TokenOnce key={created.id} created={created} onDone={() => setCreated(null)} /> : null}
          {person?.disabled ? null : (
            <Section title={`Make a token for ${found.name}`}>
              <p class="hint small">Its scopes narrow what {found.name} may do; they never add to the roles given.</p>
              <TokenForm label={`Make a token for ${found.name}`} offered={SCOPES} onCreate={makeToken} />
            </Section>
          )}
        </>
      ) : (
        <p class="muted">Loading…</p>
      )}
    </main>
  );
}
