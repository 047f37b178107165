import type { Types } from 'mongoose';
import { DeploymentRunModel } from '../../domain/deployments/model';
import { ownRunsOf } from '../../domain/deployments/runs';
import { environmentName, MASK } from '../../domain/deployments/parameters';
import type { TriggerInput } from './schemas';
import type { Principal } from '../../domain/tokens/service';
import { resolveTargets } from './targets';
import { stepDefinitions } from '../../domain/deployments/new-runs';
import { parametersFor, type FindDeployment } from './definitions';
import { planOf } from './plan-hash';
import { freezesCovering, freezesStarting } from '../../domain/freezes/coverage';

/** A run's likely duration when its deployment has no successful run to go by. */
export const DEFAULT_LIKELY_RUN_SECONDS = 3600;

/** How long a run of the deployment likely takes: its last successful run's duration, else DEFAULT_LIKELY_RUN_SECONDS. */
async function likelyDuration(deploymentId: Types.ObjectId): Promise<{ seconds: number; basis: 'last_success' | 'default' }> {
  const last = await DeploymentRunModel.findOne(
    { ...ownRunsOf(deploymentId), status: 'success', started_at: { $ne: null }, completed_at: { $ne: null } },
    { started_at: 1, completed_at: 1 },
  )
    .sort({ createdAt: -1, _id: -1 })
    .lean();
  if (!last?.started_at || !last.completed_at) return { seconds: DEFAULT_LIKELY_RUN_SECONDS, basis: 'default' };
  return { seconds: Math.max(1, Math.round((last.completed_at.getTime() - last.started_at.getTime()) / 1000)), basis: 'last_success' };
}

/** A plan: what a trigger with this body would run, where and in which batches, and what to look out for. Runs nothing, stores nothing. */
export function deploymentPlanner(findDeployment: FindDeployment) {
  return async function plan(principal: Principal, deploymentId: string, input: TriggerInput = { parameters: {} }) {
    const deployment = await findDeployment(principal, deploymentId);
    const values = parametersFor(deployment, input.parameters);
    const servers = await resolveTargets(deployment);
    const planned = planOf(deployment, servers, values);
    const { gates, healthCheck, rollback } = planned;
    const { batchSize, maxFailures, batches, maxConcurrency } = planned.strategy;
    const busy = new Map(
      (
        await DeploymentRunModel.aggregate<{ _id: Types.ObjectId; n: number }>([
          { $match: { server_id: { $in: servers.map((s) => s._id) }, status: { $in: ['queued', 'running'] }, queue_seq: { $ne: null } } },
          { $group: { _id: '$server_id', n: { $sum: 1 } } },
        ])
      ).map((row) => [row._id.toString(), row.n]),
    );
    const warnings: { server_id: string | null; code: string; message: string }[] = [];
    if (!servers.length) warnings.push({ server_id: null, code: 'no_targets', message: 'No server matches the deployment’s targets: a trigger would be refused' });
    for (const gate of gates) {
      if (!servers.length) continue;
      if (gate.before_target !== undefined && gate.before_target > servers.length) {
        warnings.push({ server_id: null, code: 'gate_ignored', message: `The gate before target ${gate.before_target} guards nothing: the run has ${servers.length} target${servers.length > 1 ? 's' : ''}, so it is ignored` });
      }
      if (gate.before_batch !== undefined && gate.before_batch > batches) {
        warnings.push({ server_id: null, code: 'gate_ignored', message: `The gate before batch ${gate.before_batch} guards nothing: the run has ${batches} batch${batches > 1 ? 'es' : ''}, so it is ignored` });
      }
    }
    for (const server of servers) {
      const id = server._id.toString();
      if (server.status === 'unverified') warnings.push({ server_id: id, code: 'unverified', message: `${server.title} is not verified: its target would fail without running` });
      if (server.status === 'offline') warnings.push({ server_id: id, code: 'offline', message: `${server.title} is offline: its steps would fail unless it comes back` });
      const waiting = busy.get(id);
      if (waiting) warnings.push({ server_id: id, code: 'busy', message: `${server.title} has ${waiting} run${waiting > 1 ? 's' : ''} queued or running: this run would wait its turn` });
    }
    // Freezes: those covering targets now (a trigger would be refused), and those opening while a run would likely still go.
    const now = new Date();
    const likely = await likelyDuration(deployment._id);
    const [covering, starting] = await Promise.all([
      freezesCovering(deployment.organization_id, servers, now),
      freezesStarting(deployment.organization_id, servers, now, new Date(now.getTime() + likely.seconds * 1000)),
    ]);
    const frozenBy = new Map<string, { id: string; name: string; ends_at: string }[]>();
    for (const cover of covering) {
      for (const server of cover.servers) {
        const id = server._id.toString();
        frozenBy.set(id, [...(frozenBy.get(id) ?? []), { id: cover.freeze._id.toString(), name: cover.freeze.name, ends_at: cover.window.ends_at.toISOString() }]);
      }
    }
    for (const server of servers) {
      const by = frozenBy.get(server._id.toString());
      if (by) warnings.push({ server_id: server._id.toString(), code: 'frozen', message: `${server.title} is frozen by ${by.map((f) => `${f.name} until ${f.ends_at}`).join(', ')}: a trigger would be refused (409 frozen)` });
    }
    for (const cover of starting) {
      warnings.push({ server_id: null, code: 'freeze_upcoming', message: `Change freeze ${cover.freeze.name} starts at ${cover.window.starts_at.toISOString()} on ${cover.servers.length} of the targets, within the run's likely duration (${likely.seconds} s): batches not started by then wait for it to end` });
    }
    return {
      deployment_id: deployment._id.toString(),
      plan_hash: planned.hash,
      rollback,
      strategy: { batch_size: maxConcurrency === null ? batchSize : null, max_concurrency: maxConcurrency, max_failures: maxFailures, batches: servers.length ? batches : 0, gates, health_check: healthCheck },
      targets: servers.map((server, index) => ({
        server_id: server._id.toString(),
        title: server.title,
        host: server.host,
        status: server.status,
        batch: planned.targets[index]!.batch,
      })),
      steps: stepDefinitions(deployment.steps),
      environment: Object.fromEntries(values.map((p) => [environmentName(p.name), p.secret ? MASK : p.value])),
      warnings,
      likely_duration: likely,
      frozen_targets: servers.flatMap((server) => {
        const by = frozenBy.get(server._id.toString());
        return by ? [{ server_id: server._id.toString(), title: server.title, freezes: by }] : [];
      }),
      upcoming_freezes: starting.map((cover) => ({
        id: cover.freeze._id.toString(),
        name: cover.freeze.name,
        starts_at: cover.window.starts_at.toISOString(),
        ends_at: cover.window.ends_at.toISOString(),
        server_ids: cover.servers.map((server) => server._id.toString()),
      })),
    };
  };
}

