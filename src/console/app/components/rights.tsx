import { Fragment, type ComponentChildren } from 'preact';
import { getAll } from '../api';
import type { DeploymentListItem, Person, RoleBinding, ServiceAccount, Team } from '../api-types';
import { session } from '../session';
import { ROLE_ACTIONS } from '../../../domain/access/roles';
import { ErrorNote, Section, useLoad } from './common';

export type SubjectType = RoleBinding['subject']['type'];

/** Where a subject's own page is: its "what can it do". */
export const subjectHref = (subject: { type: SubjectType; id: string }) =>
  `/${subject.type === 'person' ? 'people' : subject.type === 'team' ? 'teams' : 'service-accounts'}/${subject.id}`;

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** A binding as a sentence: "operator on servers tagged web, every deployment, at most 20 servers per run". */
export function bindingSentence(binding: RoleBinding, deploymentName: (id: string) => string): string {
  const servers = binding.servers ? `servers tagged ${binding.servers.tags.join(' and ')}` : 'every server';
  const deployments = binding.deployments
    ? `${binding.deployments.length === 1 ? 'deployment' : 'deployments'} ${binding.deployments.map(deploymentName).join(', ')}`
    : 'every deployment';
  const limit = binding.max_targets_per_run ? `, at most ${plural(binding.max_targets_per_run, 'server')} per run` : '';
  return `${binding.role} on ${servers}, ${deployments}${limit}`;
}

/** Bindings as sentences, each with what its role allows and, for a team's, the team it comes through. */
export function Grants({ bindings, teamName, deploymentName, nobody }: {
  bindings: RoleBinding[];
  teamName: (id: string) => string | undefined;
  deploymentName: (id: string) => string;
  nobody: string;
}) {
  if (!bindings.length) return <p class="muted">{nobody}</p>;
  return (
    <ul class="plain grants">
      {bindings.map((b) => {
        const team = b.subject.type === 'team' ? teamName(b.subject.id) : undefined;
        return (
          <li key={b.id} data-binding={b.id}>
            <strong>{bindingSentence(b, deploymentName)}</strong>
            {team ? <span class="muted"> — through the team {team}</span> : null}
            <div class="muted small">may {ROLE_ACTIONS[b.role].join(', ')}</div>
          </li>
        );
      })}
    </ul>
  );
}

/** Deployment names by id, for sentences (one the caller cannot read stays an id). */
export const namesOf = (deployments: DeploymentListItem[] | undefined) => (id: string) => deployments?.find((d) => d.id === id)?.name ?? id;

/** What the organization's administrators see of who is who: every person, service account and team. */
export function useDirectory() {
  return useLoad(
    async () => {
      const [people, accounts, teams, deployments] = await Promise.all([
        getAll<Person>('/api/v1/people'),
        getAll<ServiceAccount>('/api/v1/service-accounts'),
        getAll<Team>('/api/v1/teams'),
        getAll<DeploymentListItem>('/api/v1/deployments'),
      ]);
      const nameOf = (subject: { type: SubjectType; id: string }) =>
        (subject.type === 'person' ? people : subject.type === 'team' ? teams : accounts).find((s) => s.id === subject.id)?.name;
      return { people, accounts, teams, deployments, nameOf };
    },
    [],
  );
}

/**
 * "What can this identity do": a person's, service account's or team's bindings (a person's own and
 * those of its teams), as sentences by role, tags and deployment.
 */
export function WhatItCanDo({ subject, name }: { subject: { type: SubjectType; id: string }; name: string }) {
  const world = useLoad(
    () => Promise.all([getAll<RoleBinding>('/api/v1/role-bindings'), getAll<Team>('/api/v1/teams'), getAll<DeploymentListItem>('/api/v1/deployments')]),
    [subject.type, subject.id],
  );
  const [bindings = [], teams = [], deployments] = world.data ?? [];
  const memberOf = subject.type === 'person' ? teams.filter((t) => t.members.includes(subject.id)) : [];
  const through = new Set(memberOf.map((t) => t.id));
  const relevant = bindings.filter((b) => b.subject.id === subject.id || (b.subject.type === 'team' && through.has(b.subject.id)));
  return (
    <Section title={`What ${name} can do`} actions={<a href={`/role-bindings?subject=${subject.type}:${subject.id}`}>Grant a role</a>}>
      <ErrorNote error={world.error} />
      {memberOf.length ? (
        <p>
          Member of{' '}
          {memberOf.map((t, i) => (
            <Fragment key={t.id}>
              {i ? ', ' : ''}
              <a href={subjectHref({ type: 'team', id: t.id })}>{t.name}</a>
            </Fragment>
          ))}
          .
        </p>
      ) : null}
      {world.data ? (
        <Grants bindings={relevant} teamName={(id) => teams.find((t) => t.id === id)?.name} deploymentName={namesOf(deployments)} nobody={`No role: ${name} can do nothing yet.`} />
      ) : (
        <p class="muted">Loading…</p>
      )}
    </Section>
  );
}

/** A page for administrators only: anyone else is told so (their navigation does not offer it). */
export function AdminOnly({ title, children }: { title: string; children: ComponentChildren }) {
  if (session.can('admin')) return <>{children}</>;
  return (
    <main id="main">
      <h1>{title}</h1>
      <p>Managing people, teams, service accounts and roles takes the admin role. <a href="/account">Your own account</a> shows what you can do.</p>
    </main>
  );
}
