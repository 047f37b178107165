import { z } from 'zod';
import { Types } from 'mongoose';
import type { CheckContext, KindAdapter, ManagedBy, NameIndex } from '../../../domain/config/types';
import { DeploymentModel, DeploymentRunModel, UNFINISHED_RUN_STATUSES, type Deployment } from '../../../domain/deployments/model';
import { deleteDeployment } from '../../../domain/deployments/store';
import { PipelineModel } from '../../../domain/pipelines/model';
import { deleteSchedulesOf } from '../../../domain/schedules/store';
import type { ScheduleWorkflows } from '../../../domain/temporal/schedules';
import { definitionFields, oneKindOfTarget, targetsOf } from '../../deployments/schemas';
import { requiredText } from '../../http/text';
import { checked, dropRemovedSchedules, issueProblems, nameOr, present, referenceResolver, refused, writeDocument, type RemovedSchedules } from './references-a';

/*
 * Deployments in config files: the create body with `server` (a server's title) for `server_id` and
 * `targets.servers` (titles) for `targets.server_ids`; every other field as the API has it.
 */

const { name: deploymentName, server_id: _serverId, targets: _targets, ...rest } = definitionFields;

export const deploymentFileSchema = z
  .strictObject({
    server: requiredText('server', 120).optional().describe('The one server it runs on, by title'),
    targets: targetsOf('servers', requiredText('a server title', 120)).optional().describe('Servers by title, and tags: resolved at each trigger'),
    ...rest,
  })
  .superRefine((v, ctx) => oneKindOfTarget(v, ctx, true, 'server'));

type Spec = z.infer<typeof deploymentFileSchema>;
type Step = { name: string; command: string; timeout_seconds?: number | null; retries?: number | null; continue_on_error?: boolean | null };
type Parameter = { name: string; description?: string | null; default?: string | null; required?: boolean | null; secret?: boolean | null; pattern?: string | null };
type Strategy = {
  batch_size?: unknown;
  max_concurrency?: unknown;
  max_failures?: unknown;
  gates?: ReadonlyArray<{ before_batch?: number | null; before_target?: number | null; approvals: number; expires_in: string }> | null;
  health_check?: { command: string; soak_seconds?: number | null; timeout_seconds?: number | null; retries?: number | null; interval_seconds?: number | null } | null;
};

/** A deployment as config files write it, whether parsed from a file or read from its document. */
interface Shape {
  server?: string | null;
  targets?: { servers?: readonly string[] | null; tags?: readonly string[] | null } | null;
  strategy?: Strategy | null;
  rollback?: { steps: readonly Step[]; automatic?: boolean | null } | null;
  parameters?: readonly Parameter[] | null;
  steps: readonly Step[];
}

const step = (s: Step) => ({ name: s.name, command: s.command, ...present('timeout_seconds', s.timeout_seconds), retries: s.retries ?? 0, continue_on_error: s.continue_on_error ?? false });

/** A parameter as `parameters` declares it (a pipeline's declares them the same way). */
export const canonicalParameter = (p: Parameter) => ({
  name: p.name,
  ...present('description', p.description),
  ...present('default', p.default),
  required: p.required ?? false,
  secret: p.secret ?? false,
  ...present('pattern', p.pattern),
});

const strategy = (s: Strategy) => ({
  ...present('batch_size', s.batch_size),
  ...present('max_concurrency', s.max_concurrency),
  ...present('max_failures', s.max_failures),
  ...present('gates', s.gates?.map(({ before_batch, before_target, approvals, expires_in }) => ({ ...present('before_batch', before_batch), ...present('before_target', before_target), approvals, expires_in }))),
  ...(s.health_check
    ? {
        health_check: {
          command: s.health_check.command,
          soak_seconds: s.health_check.soak_seconds ?? 0,
          timeout_seconds: s.health_check.timeout_seconds ?? 10,
          retries: s.health_check.retries ?? 0,
          interval_seconds: s.health_check.interval_seconds ?? 5,
        },
      }
    : {}),
});

/** The canonical spec: the create schema's key order, defaults filled, absent and empty optional parts left out. */
function canonical(d: Shape): Record<string, unknown> {
  return {
    ...present('server', d.server),
    ...(d.targets ? { targets: { ...present('servers', d.targets.servers ? [...d.targets.servers] : null), ...present('tags', d.targets.tags ? [...d.targets.tags] : null) } } : {}),
    ...(d.strategy ? { strategy: strategy(d.strategy) } : {}),
    ...(d.rollback?.steps.length ? { rollback: { steps: d.rollback.steps.map(step), automatic: d.rollback.automatic ?? true } } : {}),
    ...present('parameters', d.parameters?.map(canonicalParameter)),
    steps: d.steps.map(step),
  };
}

const asShape = (d: Deployment, names: NameIndex): Shape => ({
  server: d.server_id ? nameOr(names, 'Server', d.server_id) : null,
  targets: d.targets ? { servers: (d.targets.server_ids ?? []).map((id) => nameOr(names, 'Server', id)), tags: d.targets.tags } : null,
  strategy: d.strategy as Strategy | null,
  rollback: d.rollback,
  parameters: d.parameters,
  steps: d.steps,
});

/** The document's definition fields for a checked spec (every one set: a replace leaves nothing of before). */
function storedFields(spec: Spec, names: NameIndex) {
  const server = (title: string) => {
    const id = names.idOf('Server', title);
    if (!id) throw new Error(`no server titled "${title}"`);
    return new Types.ObjectId(id);
  };
  return {
    server_id: spec.server !== undefined ? server(spec.server) : null,
    targets: spec.targets ? { server_ids: (spec.targets.servers ?? []).map(server), tags: spec.targets.tags ?? [] } : null,
    strategy: spec.strategy ?? null,
    rollback: spec.rollback ?? null,
    parameters: spec.parameters ?? [],
    steps: spec.steps,
  };
}

export function deploymentKind({ schedules }: { schedules: Pick<ScheduleWorkflows, 'remove'> }): KindAdapter {
  const removedSchedules: RemovedSchedules = new Map();
  return {
    kind: 'Deployment',
    nameSchema: deploymentName,
    fileSchema: deploymentFileSchema,

    async current(organizationId, names) {
      const deployments = await DeploymentModel.find({ organization_id: organizationId }).sort({ name: 1 }).lean<Deployment[]>();
      return deployments.map((d) => ({ id: d._id.toString(), name: d.name, spec: canonical(asShape(d, names)), managed_by: (d as { managed_by?: ManagedBy | null }).managed_by ?? null }));
    },

    async check(spec, context: CheckContext) {
      const parsed = deploymentFileSchema.safeParse(spec);
      const references = referenceResolver(context.names);
      // References are judged even when the schema is not, so one plan names every problem.
      if (typeof spec.server === 'string') references.id('Server', spec.server.trim(), ['server']);
      const targets = spec.targets as { servers?: unknown } | undefined;
      if (Array.isArray(targets?.servers)) targets.servers.forEach((title, i) => typeof title === 'string' && references.id('Server', title.trim(), ['targets', 'servers', i]));
      const problems = [...(parsed.success ? [] : issueProblems(parsed.error)), ...references.problems];
      return problems.length || !parsed.success ? refused(problems) : checked(canonical(parsed.data));
    },

    async write(context, object) {
      await writeDocument(DeploymentModel, context, object, storedFields(deploymentFileSchema.parse(object.spec), context.names));
    },

    /** As the API's delete: its schedules and its run history go with it. */
    async remove({ session }, id) {
      const deploymentId = new Types.ObjectId(id);
      removedSchedules.set(id, await deleteSchedulesOf({ deployment_id: deploymentId }, session));
      await deleteDeployment(deploymentId, session);
    },

    async pruneBlocker(organizationId, id, staying) {
      if (await DeploymentRunModel.exists({ organization_id: organizationId, deployment_id: id, status: { $in: UNFINISHED_RUN_STATUSES } })) {
        return 'a run of it is queued or running: cancel it or let it finish first';
      }
      const using = await PipelineModel.find({ organization_id: organizationId, 'stages.deployment_id': id }, { name: 1 }).sort({ name: 1 }).lean();
      const stay = using.filter((p) => staying.idOf('Pipeline', p.name) === p._id.toString()).map((p) => `"${p.name}"`);
      if (!stay.length) return null;
      return stay.length === 1 ? `pipeline ${stay[0]} runs it in a stage and stays` : `pipelines ${stay.join(', ')} run it in their stages and stay`;
    },

    async afterApply(_organizationId, { removed }) {
      await dropRemovedSchedules(removed, removedSchedules, schedules);
    },
  };
}
