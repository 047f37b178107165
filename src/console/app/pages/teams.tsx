import { useState } from 'preact/hooks';
import { api, get, getAll } from '../api';
import type { Person, Team as TeamView } from '../api-types';
import { ErrorNote, Section, submitted, useChanges, useLoad, When } from '../components/common';
import { Confirmed } from '../components/confirm';
import { AdminOnly, subjectHref, WhatItCanDo } from '../components/rights';
import { Table } from '../components/table';

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
  const { error, act, ...asking } = useChanges(() => list.reload());
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
          {list.data ? <MemberChoice people={people} members={[]} /> : null}
          <div class="wide">
            <button type="submit" class="primary">
              Add the team
            </button>
          </div>
        </form>
      </Section>
      <Section title={list.data ? `${teams.length} team${teams.length === 1 ? '' : 's'}` : 'Teams'}>
        <Table
          caption="The organization’s teams"
          rows={list.data ? teams : undefined}
          empty={
            <span data-empty="teams">
              No team yet. A team grants roles to several people at once: add one with the form above (a name, and its members), then give it a
              role on the <a href="/role-bindings">Role bindings</a> page — every member gets what the role allows, and loses it on leaving the team.
            </span>
          }
          rowKey={(t) => t.id}
          mark={(t) => ({ 'data-team': t.name })}
          columns={[
            { head: 'Team', cell: (t) => <a href={subjectHref({ type: 'team', id: t.id })}>{t.name}</a> },
            {
              head: 'Members',
              cell: (t) =>
                t.members
                  .map(nameOf)
                  .sort((a, b) => a.localeCompare(b))
                  .join(', ') || <span class="muted">nobody yet</span>,
            },
            { head: 'Added', cell: (t) => <When at={t.created_at} /> },
          ]}
          actions={{
            class: 'row-actions',
            cell: (t) => (
              <Confirmed
                asking={asking}
                id={t.id}
                ask="Delete…"
                askLabel={`Delete ${t.name}`}
                yes={`Yes, delete ${t.name}`}
                onYes={() => void act(() => api('DELETE', `/api/v1/teams/${t.id}`))}
                managedBy={t.managed_by}
                warning="Its roles go with it; its members lose what the team gave them."
              />
            ),
          }}
        />
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
