import { api, getAll } from '../api';
import type { ServiceAccount } from '../api-types';
import { ErrorNote, Section, submitted, useChanges, useLoad, When } from '../components/common';
import { Confirmed } from '../components/confirm';
import { AdminOnly, subjectHref } from '../components/rights';
import { Table } from '../components/table';
import { ChangeButton, managedText } from '../components/managed';

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
  const { error, act, ...asking } = useChanges(() => list.reload());
  const accounts = list.data ?? [];

  const add = async (event: Event) => {
    const { field, form } = submitted(event);
    const agent = (form.elements.namedItem('agent') as HTMLInputElement).checked;
    if (await act(() => api('POST', '/api/v1/service-accounts', { name: field('name'), description: field('description') || null, agent }))) form.reset();
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
          <label>
            <input type="checkbox" name="agent" /> An AI agent acts as it
          </label>
          <div>
            <button type="submit" class="primary">
              Add the service account
            </button>
          </div>
        </form>
        <p class="hint small">
          A service account acts with tokens only: it never signs in as a person does and never approves. An agent’s conversations hold their change and destructive steps for a
          person (see the Policy page); connect one through MCP (docs/agents.md).
        </p>
      </Section>
      <Section title={list.data ? `${accounts.length} service account${accounts.length === 1 ? '' : 's'}` : 'Service accounts'}>
        <Table
          caption="The organization’s service accounts"
          rows={accounts}
          rowKey={(a) => a.id}
          mark={(a) => ({ 'data-account': a.name })}
          columns={[
            { head: 'Name', cell: (a) => <><a href={subjectHref({ type: 'service_account', id: a.id })}>{a.name}</a>{a.managed_by ? <div class="muted small">{managedText(a.managed_by)}</div> : null}</> },
            { head: 'Description', cell: (a) => a.description ?? <span class="muted">—</span> },
            {
              head: 'AI agent',
              cell: (a) => (
                <>
                  {a.agent ? 'yes' : 'no'}{' '}
                  <ChangeButton
                    managedBy={a.managed_by}
                    onClick={() => void act(() => api('PATCH', `/api/v1/service-accounts/${a.id}`, { agent: !a.agent }))}
                    label={a.agent ? `Mark as not an agent: ${a.name}` : `Mark as an agent: ${a.name}`}
                  >
                    {a.agent ? 'Mark as not an agent' : 'Mark as an agent'}
                  </ChangeButton>
                </>
              ),
            },
            { head: 'Added', cell: (a) => <When at={a.created_at} /> },
          ]}
          actions={{
            class: 'row-actions',
            cell: (a) => (
              <Confirmed
                asking={asking}
                id={a.id}
                ask="Delete…"
                askLabel={`Delete ${a.name}`}
                yes={`Yes, delete ${a.name}`}
                onYes={() => void act(() => api('DELETE', `/api/v1/service-accounts/${a.id}`))}
                managedBy={a.managed_by}
                warning="Its tokens are revoked and its roles removed."
              />
            ),
          }}
        />
      </Section>
    </main>
  );
}
