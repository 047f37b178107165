import type { Types } from 'mongoose';
import { DeploymentRunModel } from '../../domain/deployments/model';
import { environmentName, MASK } from '../../domain/deployments/parameters';
import type { TriggerInput } from './schemas';
import type { Principal } from '../../domain/tokens/service';
import { resolveTargets } from './targets';
import { toDeploymentView } from './views';
import { parametersFor, type FindDeployment } from './definitions';
import { planOf } from './plan-hash';

/** A plan: what a trigger with this body would run, where and in which batches, and what to look out for. Runs nothing, stores nothing. */
export function deploymentPlanner(findDeployment: FindDeployment) {
  return async function plan(principal: Principal, deploymentId: string, input: TriggerInput = { parameters: {} }) {
    const deployment = await findDeployment(principal, deploymentId);
    const values = parametersFor(deployment, input.parameters);
    const servers = await resolveTargets(deployment);
    const planned = planOf(deployment, servers, values);
    const { gates, healthCheck, rollback } = planned;
    const { batchSize, maxFailures, batches } = planned.strategy;
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
      if (servers.length && gate.before_batch > batches) {
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
    return {
      deployment_id: deployment._id.toString(),
      plan_hash: planned.hash,
      rollback,
      strategy: { batch_size: batchSize, max_failures: maxFailures, batches: servers.length ? batches : 0, gates, health_check: healthCheck },
      targets: servers.map((server, index) => ({
        server_id: server._id.toString(),
        title: server.title,
        host: server.host,
        status: server.status,
        batch: planned.targets[index]!.batch,
      })),
      steps: toDeploymentView(deployment).steps,
      environment: Object.fromEntries(values.map((p) => [environmentName(p.name), p.secret ? MASK : p.value])),
      warnings,
    };
  };
}

