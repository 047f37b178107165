import { useState } from 'preact/hooks';
import { api, getAll } from '../api';
import type { RoleBinding } from '../api-types';
import { ErrorNote, Section, useLoad, When } from '../components/common';
import { AdminOnly, bindingSentence, namesOf, subjectHref, useDirectory, type SubjectType } from '../components/rights';
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

function BindingList() {
  const directory = useDirectory();
  const list = useLoad(() => getAll<RoleBinding>('/api/v1/role-bindings'), []);
  const [error, setError] = useState<unknown>(null);
  const [confirm, setConfirm] = useState<string | null>(null);
  const d = directory.data;
  const bindings = list.data ?? [];
  const deploymentName = namesOf(d?.deployments);
  // "Grant a role" on a subject's page comes here with it chosen.
  const chosen = new URLSearchParams(location.search).get('subject') ?? '';

  const grant = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const [type, id] = String(form.get('subject') ?? '').split(':');
    const tags = String(form.get('tags') ?? '').split(/[\s,]+/).filter(Boolean);
    const deployments = form.getAll('deployments').map(String);
    const limit = String(form.get('max_targets_per_run') ?? '');
    setError(null);
    try {
      await api('POST', '/api/v1/role-bindings', {
        role: String(form.get('role')),
        subject: { type, id },
        servers: tags.length ? { tags } : null,
        deployments: deployments.length ? deployments : null,
        max_targets_per_run: limit ? Number(limit) : null,
      });
      formElement.reset();
      await list.reload();
    } catch (problem) {
      setError(problem);
    }
  };
  const revoke = async (id: string) => {
    setError(null);
    try {
      await api('DELETE', `/api/v1/role-bindings/${id}`);
      setConfirm(null);
      await list.reload();
    } catch (problem) {
      setError(problem);
    }
  };

  return (
    <main id="main">
      <h1>Role bindings</h1>
      <ErrorNote error={error ?? list.error ?? directory.error} />
      <Section title="Grant a role">
        {d ? (
          <form class="grid-form top-aligned" onSubmit={grant} aria-label="Grant a role">
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
        ) : (
          <p class="muted">Loading…</p>
        )}
      </Section>
      <Section title={list.data ? `${bindings.length} role binding${bindings.length === 1 ? '' : 's'}` : 'Role bindings'}>
        <table>
          <caption class="visually-hidden">Who holds which role, where</caption>
          <thead>
            <tr>
              <th>Who</th>
              <th>What it gives</th>
              <th>Since</th>
              <th>
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {bindings.map((b) => {
              const name = d?.nameOf(b.subject) ?? b.subject.id;
              const sentence = bindingSentence(b, deploymentName);
              return (
                <tr key={b.id} data-binding={b.id}>
                  <td>
                    <a href={subjectHref(b.subject)}>{name}</a> <span class="muted small">{KIND[b.subject.type]}</span>
                  </td>
                  <td>{sentence}</td>
                  <td>
                    <When at={b.created_at} />
                  </td>
                  <td class="row-actions">
                    {confirm === b.id ? (
                      <>
                        <button type="button" class="danger" onClick={() => void revoke(b.id)}>
                          Yes, revoke
                        </button>{' '}
                        <button type="button" onClick={() => setConfirm(null)}>
                          Keep
                        </button>
                      </>
                    ) : (
                      <button type="button" onClick={() => setConfirm(b.id)} aria-label={`Revoke ${sentence} from ${name}`}>
                        Revoke…
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </Section>
    </main>
  );
}
