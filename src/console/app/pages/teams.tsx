import { useState } from 'preact/hooks';
import { api, get, getAll } from '../api';
import type { Person, Team as TeamView } from '../api-types';
import { ErrorNote, Section, submitted, useChanges, useLoad, When } from '../components/common';
import { AdminOnly, subjectHref, WhatItCanDo } from '../components/rights';

/** Checkboxes of the organization's people, the members ticked. */
function MemberChoice({ people, members }: { people: Person[]; members: string[] }) {
  if (!people.length) return <p class="muted wide">No people yet: add some on the People page.</p>;
  return (
    <fieldset class="wide choices">
      <legend>Members</legend>
      {people.map((p) => (
        <label key={p.id}>
          <input type="checkbox" name="members" value={p.id} defaultChecked={members.includes(p.id)} /> {p.name}
        </label>
      ))}
    </fieldset>
  );
}

/** Teams: people who share role bindings. Add one with its members, delete; each row leads to the team. */
export function Teams() {
  return (
    <AdminOnly title="Teams">
      <TeamList />
    </AdminOnly>
  );
}

function TeamList() {
  const list = useLoad(() => Promise.all([getAll<TeamView>('/api/v1/teams'), getAll<Person>('/api/v1/people')]), []);
  const { error, confirm, setConfirm, act } = useChanges(() => list.reload());
  const [teams = [], people = []] = list.data ?? [];
  const nameOf = (id: string) => people.find((p) => p.id === id)?.name ?? id;

  const add = async (event: Event) => {
    const { field, all, form } = submitted(event);
    if (await act(() => api('POST', '/api/v1/teams', { name: field('name'), members: all('members') }))) form.reset();
  };

  return (
    <main id="main">
      <h1>Teams</h1>
      <ErrorNote error={error ?? list.error} />
      <Section title="Add a team">
        <form class="grid-form" onSubmit={add} aria-label="Add a team">
          <label>
            Team name <input name="name" required maxLength={64} placeholder="web team" />
          </label>
          <MemberChoice people={people} members={[]} />
          <div class="wide">
            <button type="submit" class="primary">
              Add the team
            </button>
          </div>
        </form>
      </Section>
      <Section title={list.data ? `${teams.length} team${teams.length === 1 ? '' : 's'}` : 'Teams'}>
        <table>
          <caption class="visually-hidden">The organization’s teams</caption>
          <thead>
            <tr>
              <th>Team</th>
              <th>Members</th>
              <th>Added</th>
              <th>
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {teams.map((t) => (
              <tr key={t.id} data-team={t.name}>
                <td>
                  <a href={subjectHref({ type: 'team', id: t.id })}>{t.name}</a>
                </td>
                <td>
                  {t.members
                    .map(nameOf)
                    .sort((a, b) => a.localeCompare(b))
                    .join(', ') || <span class="muted">nobody yet</span>}
                </td>
                <td>
                  <When at={t.created_at} />
                </td>
                <td class="row-actions">
                  {confirm === t.id ? (
                    <>
                      <button type="button" class="danger" onClick={() => void act(() => api('DELETE', `/api/v1/teams/${t.id}`))}>
                        Yes, delete {t.name}
                      </button>{' '}
                      <button type="button" onClick={() => setConfirm(null)}>
                        Keep
                      </button>
                      <div class="warning small">Its roles go with it; its members lose what the team gave them.</div>
                    </>
                  ) : (
                    <button type="button" onClick={() => setConfirm(t.id)} aria-label={`Delete ${t.name}`}>
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

/** One team: its members (changed here) and what it can do. */
export function Team({ teamId }: { teamId: string }) {
  return (
    <AdminOnly title="A team">
      <TeamDetail teamId={teamId} />
    </AdminOnly>
  );
}

function TeamDetail({ teamId }: { teamId: string }) {
  const loaded = useLoad(() => Promise.all([get<TeamView>(`/api/v1/teams/${teamId}`), getAll<Person>('/api/v1/people')]), [teamId]);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [team, people = []] = loaded.data ?? [];

  const save = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setError(null);
    setSaved(false);
    try {
      await api('PATCH', `/api/v1/teams/${teamId}`, { members: form.getAll('members').map(String) });
      setSaved(true);
      await loaded.reload();
    } catch (problem) {
      setError(problem);
    }
  };

  return (
    <main id="main">
      <p class="crumbs">
        <a href="/teams">Teams</a>
      </p>
      <h1>{team?.name ?? '…'}</h1>
      <ErrorNote error={error ?? loaded.error} />
      {team ? (
        <>
          <Section title="People in this team">
            <form class="grid-form" onSubmit={save} aria-label="Members">
              <MemberChoice key={team.members.join()} people={people} members={team.members} />
              <p class="wide">
                <button type="submit" class="primary">
                  Save the members
                </button>{' '}
                {saved ? (
                  <span class="notice" role="status">
                    Saved: their rights change at once.
                  </span>
                ) : null}
              </p>
            </form>
            {team.oidc_groups.length ? <p class="hint small">Members of the provider’s groups {team.oidc_groups.join(', ')} join at sign-in.</p> : null}
          </Section>
          <WhatItCanDo subject={{ type: 'team', id: team.id }} name={team.name} />
        </>
      ) : (
        <p class="muted">Loading…</p>
      )}
    </main>
  );
}
