import { api, getAll } from '../api';
import type { ServiceAccount } from '../api-types';
import { ErrorNote, Section, submitted, useChanges, useLoad, When } from '../components/common';
import { AdminOnly, subjectHref } from '../components/rights';

/** CI pipelines, scripts and agents: add one, delete; each row leads to what it can do and its tokens. */
export function ServiceAccounts() {
  return (
    <AdminOnly title="Service accounts">
      <AccountList />
    </AdminOnly>
  );
}

function AccountList() {
  const list = useLoad(() => getAll<ServiceAccount>('/api/v1/service-accounts'), []);
  const { error, confirm, setConfirm, act } = useChanges(() => list.reload());
  const accounts = list.data ?? [];

  const add = async (event: Event) => {
    const { field, form } = submitted(event);
    if (await act(() => api('POST', '/api/v1/service-accounts', { name: field('name'), description: field('description') || null }))) form.reset();
  };

  return (
    <main id="main">
      <h1>Service accounts</h1>
      <ErrorNote error={error ?? list.error} />
      <Section title="Add a service account">
        <form class="grid-form" onSubmit={add} aria-label="Add a service account">
          <label>
            Name <input name="name" required pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,63}" placeholder="ci-release" />
          </label>
          <label>
            Description <input name="description" maxLength={500} placeholder="The release pipeline" />
          </label>
          <div>
            <button type="submit" class="primary">
              Add the service account
            </button>
          </div>
        </form>
        <p class="hint small">A service account acts with tokens only: it never signs in as a person does and never approves.</p>
      </Section>
      <Section title={list.data ? `${accounts.length} service account${accounts.length === 1 ? '' : 's'}` : 'Service accounts'}>
        <table>
          <caption class="visually-hidden">The organization’s service accounts</caption>
          <thead>
            <tr>
              <th>Name</th>
              <th>Description</th>
              <th>Added</th>
              <th>
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {accounts.map((a) => (
              <tr key={a.id} data-account={a.name}>
                <td>
                  <a href={subjectHref({ type: 'service_account', id: a.id })}>{a.name}</a>
                </td>
                <td>{a.description ?? <span class="muted">—</span>}</td>
                <td>
                  <When at={a.created_at} />
                </td>
                <td class="row-actions">
                  {confirm === a.id ? (
                    <>
                      <button type="button" class="danger" onClick={() => void act(() => api('DELETE', `/api/v1/service-accounts/${a.id}`))}>
                        Yes, delete {a.name}
                      </button>{' '}
                      <button type="button" onClick={() => setConfirm(null)}>
                        Keep
                      </button>
                      <div class="warning small">Its tokens are revoked and its roles removed.</div>
                    </>
                  ) : (
                    <button type="button" onClick={() => setConfirm(a.id)} aria-label={`Delete ${a.name}`}>
                      Delete…
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
