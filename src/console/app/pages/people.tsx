import { api, getAll } from '../api';
import type { Person, Team } from '../api-types';
import { ErrorNote, Section, submitted, useChanges, useLoad, When } from '../components/common';
import { Confirmed } from '../components/confirm';
import { AdminOnly, subjectHref } from '../components/rights';
import { Table } from '../components/table';
import { session } from '../session';

/** The organization's people: add one, disable or enable, delete; each row leads to what they can do. */
export function People() {
  return (
    <AdminOnly title="People">
      <PeopleList />
    </AdminOnly>
  );
}

function PeopleList() {
  const list = useLoad(() => Promise.all([getAll<Person>('/api/v1/people'), getAll<Team>('/api/v1/teams')]), []);
  const { error, act, ...asking } = useChanges(() => list.reload());
  const [people = [], teams = []] = list.data ?? [];
  const me = session.get()?.identity.id;

  const add = async (event: Event) => {
    const { field, form } = submitted(event);
    if (await act(() => api('POST', '/api/v1/people', { name: field('name'), email: field('email') || null }))) form.reset();
  };

  return (
    <main id="main">
      <h1>People</h1>
      <ErrorNote error={error ?? list.error} />
      <Section title="Add a person">
        <form class="grid-form" onSubmit={add} aria-label="Add a person">
          <label>
            Name <input name="name" required maxLength={64} placeholder="Ada Lovelace" />
          </label>
          <label>
            Email <input name="email" type="email" placeholder="ada@example.com" />
          </label>
          <div>
            <button type="submit" class="primary">
              Add the person
            </button>
          </div>
        </form>
        <p class="hint small">They sign in with a token made on their page, and act by the roles given to them or their teams.</p>
      </Section>
      <Section title={list.data ? `${people.length} ${people.length === 1 ? 'person' : 'people'}` : 'People'}>
        <Table
          caption="The organization’s people"
          rows={people}
          rowKey={(p) => p.id}
          mark={(p) => ({ 'data-person': p.name })}
          columns={[
            {
              head: 'Name',
              cell: (p) => (
                <>
                  <a href={subjectHref({ type: 'person', id: p.id })}>{p.name}</a>
                  {p.id === me ? <span class="tag">you</span> : null}
                </>
              ),
            },
            { head: 'Email', cell: (p) => p.email ?? <span class="muted">—</span> },
            {
              head: 'Teams',
              cell: (p) =>
                teams
                  .filter((t) => t.members.includes(p.id))
                  .map((t) => t.name)
                  .join(', ') || <span class="muted">none</span>,
            },
            { head: 'Status', cell: (p) => <span class={`status ${p.disabled ? 'status-failed' : 'status-success'}`}>{p.disabled ? 'disabled' : 'enabled'}</span> },
            { head: 'Added', cell: (p) => <When at={p.created_at} /> },
          ]}
          actions={{
            class: 'row-actions',
            cell: (p) =>
              p.id === me ? null : (
                <>
                  {asking.confirm === p.id ? null : (
                    <>
                      <button type="button" onClick={() => void act(() => api('PATCH', `/api/v1/people/${p.id}`, { disabled: !p.disabled }))} aria-label={`${p.disabled ? 'Enable' : 'Disable'} ${p.name}`}>
                        {p.disabled ? 'Enable' : 'Disable'}
                      </button>{' '}
                    </>
                  )}
                  <Confirmed
                    asking={asking}
                    id={p.id}
                    ask="Delete…"
                    askLabel={`Delete ${p.name}`}
                    yes={`Yes, delete ${p.name}`}
                    onYes={() => void act(() => api('DELETE', `/api/v1/people/${p.id}`))}
                    warning="Their tokens are revoked, their roles and team memberships removed."
                  />
                </>
              ),
          }}
        />
      </Section>
    </main>
  );
}
