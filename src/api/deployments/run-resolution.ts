import type { Types } from 'mongoose';
import { checkRunTargets } from '../access/gate';
import { ApiError } from '../http/errors';
import { ServerModel } from '../../domain/servers/model';
import type { Principal } from '../../domain/tokens/service';
import { DeploymentRunModel, type Deployment, type DeploymentRun } from '../../domain/deployments/model';
import type { ParameterValue } from '../../domain/deployments/parameters';
import type { RetryInput, TriggerInput } from './schemas';
import { refuseIfFrozen } from '../freezes/enforce';
import type { freezesOf } from '../../domain/freezes/coverage';
import { resolveTargets, type TargetServer } from './targets';
import { assertPlanUnchanged, planOf } from './plan-hash';
import type { ResolvedRun } from './run-creation';

/*
 * What a trigger's or a retry's run touches, resolved and checked before anything is stored: its
 * servers (the deployment's one, its targets now, or what a retried run left undone), the caller's
 * permission on each, the plan that was reviewed (a trigger's `plan_hash`), and the change freezes.
 */

/** The fields every run of the request has, whatever it touches: who triggered it, its parameters and steps. */
type RunFields = ResolvedRun['fields'];

/** Servers by id, with what a freeze asks of them (a server deleted since: its id alone). */
async function serversOf(ids: Types.ObjectId[]) {
  const found = await ServerModel.find({ _id: { $in: ids } }, { title: 1, tags: 1 }).lean();
  return ids.map((id) => found.find((s) => s._id.equals(id)) ?? { _id: id, title: null, tags: [] });
}

/** A trigger's run: the deployment's server, or each of its targets now, with the plan and freezes checked. */
export const resolveTrigger =
  (
    {
      principal,
      deployment,
      deploymentId,
      values,
      input,
      freezes,
      heldWhileFrozen = false,
    }: {
      principal: Principal;
      deployment: Deployment;
      deploymentId: string;
      values: ParameterValue[];
      input: TriggerInput;
      freezes: ReturnType<typeof freezesOf>;
      /** A pipeline stage's run: a change freeze holds it (frozen) rather than refusing it. */
      heldWhileFrozen?: boolean;
    },
    fields: RunFields,
  ) =>
  async (): Promise<ResolvedRun> => {
    // What runs is what was planned: the same hash as POST /plan's, checked against the one reviewed.
    const hashed = (servers: readonly { _id: Types.ObjectId }[]) => {
      const { hash } = planOf(deployment, servers, values);
      assertPlanUnchanged(input.plan_hash, hash);
      return hash;
    };
    if (deployment.server_id) {
      await checkRunTargets(principal, deploymentId, [{ _id: deployment.server_id }]);
      const plan_hash = hashed([{ _id: deployment.server_id }]);
      const freeze_override = heldWhileFrozen ? null : await refuseIfFrozen(principal, () => serversOf([deployment.server_id!]), input.override_freeze, { freezes });
      return { fields: { ...fields, plan_hash, freeze_override }, server: { _id: deployment.server_id } as TargetServer, targets: null };
    }
    const servers = await resolveTargets(deployment);
    if (!servers.length) throw new ApiError('conflict', 'The deployment’s targets match no server: add servers with its tags, or list servers in targets.server_ids');
    await checkRunTargets(principal, deploymentId, servers);
    const plan_hash = hashed(servers);
    const freeze_override = heldWhileFrozen ? null : await refuseIfFrozen(principal, servers, input.override_freeze, { freezes });
    return { fields: { ...fields, plan_hash, freeze_override, strategy: deployment.strategy, rollback: deployment.rollback }, server: null, targets: servers.map((server) => ({ server, start_step: 0 })) };
  };

/** A run's first step that did not succeed: where its retry starts. */
const firstUnfinished = (run: DeploymentRun) => Math.max(0, run.steps.findIndex((step) => step.status !== 'success'));

/** Where a retry of a run (or of a fleet run's target) starts, and what the steps it skips recorded. */
const retryStart = (run: DeploymentRun) => {
  const start = firstUnfinished(run);
  return { start_step: start, skipped_outputs: run.steps.slice(0, start).map((step) => step.outputs ?? []) };
};

/** A retry's run: what the original left undone (its server, or its targets that did not succeed), each from its first step that did not succeed. */
export const resolveRetry =
  ({ principal, deploymentId, original, input }: { principal: Principal; deploymentId: string; original: DeploymentRun; input: RetryInput }, fields: RunFields) =>
  async (): Promise<ResolvedRun> => {
    if (!original.fleet) {
      if (original.status === 'success') throw new ApiError('conflict', 'The run succeeded: there is nothing to retry');
      await checkRunTargets(principal, deploymentId, [{ _id: original.server_id! }]);
      const freeze_override = await refuseIfFrozen(principal, () => serversOf([original.server_id!]), input.override_freeze);
      return { fields: { ...fields, freeze_override, ...retryStart(original) }, server: { _id: original.server_id } as TargetServer, targets: null };
    }
    const left = await DeploymentRunModel.find({ parent_run_id: original._id, status: { $ne: 'success' } }, { 'steps.output': 0 }).sort({ batch: 1, _id: 1 }).lean<DeploymentRun[]>();
    if (!left.length) throw new ApiError('conflict', 'Every target succeeded: there is nothing to retry');
    const servers = new Map(
      (await ServerModel.find({ _id: { $in: left.map((t) => t.server_id) } }, { title: 1, host: 1, status: 1, tags: 1 }).lean<TargetServer[]>()).map((s) => [s._id.toString(), s]),
    );
    const touched = left.map((t) => servers.get(String(t.server_id)) ?? { _id: t.server_id!, title: t.server_title ?? null, tags: [] });
    await checkRunTargets(principal, deploymentId, touched);
    const freeze_override = await refuseIfFrozen(principal, touched, input.override_freeze);
    return {
      fields: { ...fields, freeze_override, strategy: original.fleet.strategy, rollback: original.fleet.rollback },
      server: null,
      targets: left.map((t) => ({
        // A server deleted since keeps its place: its target fails, unrun, saying so.
        server: servers.get(String(t.server_id)) ?? ({ _id: t.server_id, title: t.server_title ?? String(t.server_id), host: t.server_host ?? '', status: 'unverified' } as TargetServer),
        ...retryStart(t),
      })),
    };
  };
