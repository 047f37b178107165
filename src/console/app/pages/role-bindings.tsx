import { api, getAll } from '../api';
import type { RoleBinding } from '../api-types';
import { ErrorNote, Section, submitted, useChanges, useLoad, When } from '../components/common';
import { Confirmed } from '../components/confirm';
import { AdminOnly, bindingSentence, namesOf, subjectHref, useDirectory, type SubjectType } from '../components/rights';
import { Table } from '../components/table';
import { ROLE_ACTIONS, ROLES } from '../../../domain/access/roles';

const KIND: Record<SubjectType, string> = { person: 'person', team: 'team', service_account: 'service account' };

/** Role bindings: who holds which role, where; grant one (limited by tags, deployments, servers per run), revoke. */
export function RoleBindings() {
  return (
    <AdminOnly title="Role bindings">
      <BindingList />
    </AdminOnly>
  );
}

type Directory = NonNullable<ReturnType<typeof useDirectory>['data']>;

function BindingList() {
  const directory = useDirectory();
  const list = useLoad(() => getAll<RoleBinding>('/api/v1/role-bindings'), []);
  const { error, act, ...asking } = useChanges(() => list.reload());
  const d = directory.data;
  const bindings = list.data ?? [];
  const deploymentName = namesOf(d?.deployments);

  const grant = async (event: Event) => {
    const { field, all, form } = submitted(event);
    const [type, id] = field('subject').split(':');
    const tags = field('tags').split(/[\s,]+/).filter(Boolean);
    const deployments = all('deployments');
    const limit = field('max_targets_per_run');
    const body = {
      role: field('role'),
      subject: { type, id },
      servers: tags.length ? { tags } : null,
      deployments: deployments.length ? deployments : null,
      max_targets_per_run: limit ? Number(limit) : null,
    };
    if (await act(() => api('POST', '/api/v1/role-bindings', body))) form.reset();
  };

  return (
    <main id="main">
      <h1>Role bindings</h1>
      <ErrorNote error={error ?? list.error ?? directory.error} />
      <Section title="Grant a role">{d ? <GrantForm directory={d} onGrant={grant} /> : <p class="muted">Loading…</p>}</Section>
      <Section title={list.data ? `${bindings.length} role binding${bindings.length === 1 ? '' : 's'}` : 'Role bindings'}>
        <Table
          caption="Who holds which role, where"
          rows={bindings}
          rowKey={(b) => b.id}
          mark={(b) => ({ 'data-binding': b.id })}
          columns={[
            {
              head: 'Who',
              cell: (b) => (
                <>
                  <a href={subjectHref(b.subject)}>{d?.nameOf(b.subject) ?? b.subject.id}</a> <span class="muted small">{KIND[b.subject.type]}</span>
                </>
              ),
            },
            { head: 'What it gives', cell: (b) => bindingSentence(b, deploymentName) },
            { head: 'Since', cell: (b) => <When at={b.created_at} /> },
          ]}
          actions={{
            class: 'row-actions',
            cell: (b) => (
              <Confirmed
                asking={asking}
                id={b.id}
                ask="Revoke…"
                askLabel={`Revoke ${bindingSentence(b, deploymentName)} from ${d?.nameOf(b.subject) ?? b.subject.id}`}
                yes="Yes, revoke"
                onYes={() => void act(() => api('DELETE', `/api/v1/role-bindings/${b.id}`))}
                managedBy={b.managed_by}
              />
            ),
          }}
        />
      </Section>
    </main>
  );
}

/** A role, to whom (a team, a person or a service account), and where: servers by tags, deployments, servers per run. */
function GrantForm({ directory: d, onGrant }: { directory: Directory; onGrant: (event: Event) => Promise<void> }) {
  // "Grant a role" on a subject's page comes here with it chosen.
  const chosen = new URLSearchParams(location.search).get('subject') ?? '';
  return (
    <form class="grid-form top-aligned" onSubmit={onGrant} aria-label="Grant a role">
      <div class="field">
        <label for="grant-role">Role</label>
        <select id="grant-role" name="role" required>
          {ROLES.map((role) => (
            <option key={role} value={role}>
              {role} ({ROLE_ACTIONS[role].join(', ')})
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="grant-subject">Given to</label>
        <select id="grant-subject" name="subject" required>
          <option value="">Choose…</option>
          {(
            [
              ['Teams', 'team', d.teams],
              ['People', 'person', d.people],
              ['Service accounts', 'service_account', d.accounts],
            ] as const
          ).map(([label, type, items]) =>
            items.length ? (
              <optgroup key={type} label={label}>
                {items.map((item) => (
                  <option key={item.id} value={`${type}:${item.id}`} selected={chosen === `${type}:${item.id}`}>
                    {item.name}
                  </option>
                ))}
              </optgroup>
            ) : null,
          )}
        </select>
      </div>
      <div class="field">
        <label>
          Only servers tagged <input name="tags" placeholder="web eu" aria-describedby="tags-hint" />
        </label>
        <span id="tags-hint" class="hint small">
          Servers having all of these tags; empty: every server
        </span>
      </div>
      <label>
        At most servers per run <input name="max_targets_per_run" type="number" min={1} max={100000} placeholder="no limit" />
      </label>
      {d.deployments.length ? (
        <fieldset class="wide choices">
          <legend>Only these deployments (none ticked: every deployment)</legend>
          {d.deployments.map((deployment) => (
            <label key={deployment.id}>
              <input type="checkbox" name="deployments" value={deployment.id} /> {deployment.name}
            </label>
          ))}
        </fieldset>
      ) : null}
      <div class="wide">
        <button type="submit" class="primary">
          Grant the role
        </button>
      </div>
    </form>
  );
}
