import { z } from 'zod';
import type { AuditEntry } from '../../domain/audit/model';
import { DeploymentModel, DeploymentRunModel } from '../../domain/deployments/model';
import { ServerModel } from '../../domain/servers/model';

/*
 * What an entry is about, named as it is now: its deployment, its run and its server, read when the
 * trail is listed (the entry itself is hashed as written, ids only). Read in the caller's organization
 * only, one query per kind for a page: an id that is not (or no longer) one of its things is `deleted`.
 */

const named = (kind: string) =>
  z.object({
    id: z.string(),
    name: z.string().nullable().describe(`The ${kind}’s name now; null when deleted`),
    deleted: z.boolean().describe(`No ${kind} of the organization has this id (any more)`),
  });

export const subjectsSchema = z
  .object({
    deployment: named('deployment').nullable(),
    run: z
      .object({
        id: z.string(),
        deployment_id: z.string().nullable().describe('Its deployment (null when the run is deleted)'),
        fleet_run_id: z.string().nullable().describe('A fleet run’s target or rollback: the fleet run it belongs to, whose page shows it'),
        deleted: z.boolean(),
      })
      .nullable(),
    server: named('server').describe('A server’s name is its title').nullable(),
  })
  .describe('What the entry is about, named as it is now (not hashed: read when listed)')
  .meta({ id: 'AuditSubjects' });

export type Subjects = z.infer<typeof subjectsSchema>;

interface SubjectIds {
  deployment: string | null;
  run: string | null;
  server: string | null;
}

const idOf = (value: unknown): string | null => (typeof value === 'string' && /^[0-9a-f]{24}$/i.test(value) ? value.toLowerCase() : null);

/** The ids an entry names: its target, a command's server and run, a route's deployment, a trigger's created run. */
function subjectIdsOf({ action, target, server_id: serverId, details }: AuditEntry): SubjectIds {
  const params = (details.params ?? {}) as Record<string, unknown>;
  const underDeployment = typeof details.route === 'string' && / \/api\/v1\/deployments\/:id(\/|$)/.test(details.route);
  return {
    deployment: idOf(target.kind === 'deployment' ? target.id : underDeployment ? params.id : null),
    run: idOf(target.kind === 'run' ? target.id : (details.run_id ?? (action === 'run.trigger' ? details.created_id : null))),
    server: idOf(serverId ?? (target.kind === 'server' ? target.id : null)),
  };
}

const unique = (ids: (string | null)[]) => [...new Set(ids.filter((id): id is string => id !== null))];

/** Each entry's subjects, read in `organizationId` only: runs first (they name their deployments), then deployments and servers. */
export async function subjectsOf(organizationId: string, entries: AuditEntry[]): Promise<Subjects[]> {
  const ids = entries.map(subjectIdsOf);
  const runIds = unique(ids.map((id) => id.run));
  const runs = runIds.length ? await DeploymentRunModel.find({ _id: { $in: runIds }, organization_id: organizationId }, { deployment_id: 1, parent_run_id: 1, 'rolls_back.run_id': 1 }).lean() : [];
  const runById = new Map(runs.map((run) => [String(run._id), run]));
  const deploymentIds = unique([...ids.map((id) => id.deployment), ...runs.map((run) => String(run.deployment_id))]);
  const serverIds = unique(ids.map((id) => id.server));
  const [deployments, servers] = await Promise.all([
    deploymentIds.length ? DeploymentModel.find({ _id: { $in: deploymentIds }, organization_id: organizationId }, { name: 1 }).lean() : [],
    serverIds.length ? ServerModel.find({ _id: { $in: serverIds }, organization_id: organizationId }, { title: 1 }).lean() : [],
  ]);
  const deploymentNames = new Map(deployments.map((deployment) => [String(deployment._id), deployment.name]));
  const serverNames = new Map(servers.map((server) => [String(server._id), server.title]));
  const namedAs = (names: Map<string, string>, id: string | null) => (id ? { id, name: names.get(id) ?? null, deleted: !names.has(id) } : null);

  return ids.map(({ deployment, run, server }) => {
    const found = run ? runById.get(run) : undefined;
    const fleetRun = found ? (found.parent_run_id ?? found.rolls_back?.run_id ?? null) : null;
    return {
      deployment: namedAs(deploymentNames, deployment ?? (found ? String(found.deployment_id) : null)),
      run: run ? { id: run, deployment_id: found ? String(found.deployment_id) : null, fleet_run_id: fleetRun ? String(fleetRun) : null, deleted: !found } : null,
      server: namedAs(serverNames, server),
    };
  });
}
