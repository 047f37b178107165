import type { Types } from 'mongoose';
import { organizationGrants, type SubjectGrants } from '../../../domain/access/identities';
import { gateRefusal } from '../../../domain/deployments/gates';
import type { DeploymentRun } from '../../../domain/deployments/model';
import { mayOnRunServers, runServers } from './deployments';

/** A person who may approve, or a team whose members may (named instead of them). */
export interface Approver {
  kind: 'person' | 'team';
  id: string;
  name: string;
}

/** What a person's roles allow, unnarrowed by any token of theirs: who may approve is a question of roles. */
const rolesOf = (subject: SubjectGrants) => ({ grants: subject.grants, scopes: ['admin'] });

/**
 * Who may approve the gate a run waits at, judged as an approval is: `approve` on every server the
 * run touches (assertOnRunServers), a person (assertMayDecideGate: never a service account), not
 * who triggered the run nor who approved this gate already (gateRefusal). A team whose own bindings
 * allow it is named instead of its members, when one of them may; the others by name. Empty when
 * the run waits at no open gate.
 */
export async function approversOf(run: Pick<DeploymentRun, 'organization_id' | 'deployment_id' | 'status' | 'gate' | 'actor'>, serverIds: readonly Types.ObjectId[]): Promise<Approver[]> {
  const now = new Date();
  const gate = run.gate;
  if (run.status !== 'awaiting_approval' || !gate || gate.outcome !== null || gate.expires_at <= now) return [];
  const [servers, { people, teams }] = await Promise.all([runServers(serverIds), organizationGrants(run.organization_id.toString())]);
  const context = { deploymentId: run.deployment_id.toString(), targetCount: serverIds.length };
  const mayApprove = (subject: SubjectGrants) => mayOnRunServers(rolesOf(subject), 'approve', servers, context);
  const free = new Set(people.filter((person) => gateRefusal(run, 'approve', person, now) === null).map((person) => person.id));
  const named = teams.filter((team) => mayApprove(team) && team.members.some((member) => free.has(member)));
  const inNamedTeam = new Set(named.flatMap((team) => team.members));
  const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
  return [
    ...people.filter((person) => free.has(person.id) && !inNamedTeam.has(person.id) && mayApprove(person)).sort(byName).map(({ id, name }) => ({ kind: 'person' as const, id, name })),
    ...named.sort(byName).map(({ id, name }) => ({ kind: 'team' as const, id, name })),
  ];
}
