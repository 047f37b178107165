import type { Client } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { deploymentRunWorkflowId, fleetTargetGroupWorkflowId } from '../../src/domain/contracts/workflow-ids';

/** MongoDB's operation counters (serverStatus opcounters), summed over kinds, and per kind. */
export interface OpCounts {
  total: number;
  byKind: Record<string, number>;
}

/** The bench's mongod's operation counters now (every client's: the bench's mongod serves only this Bosun). */
export async function opcounters(mongoUri: string): Promise<OpCounts> {
  const client = new MongoClient(mongoUri);
  try {
    const status = await client.db('admin').command({ serverStatus: 1, opcounters: 1 });
    const byKind = Object.fromEntries(Object.entries(status.opcounters as Record<string, number>).map(([k, v]) => [k, Number(v)]));
    return { total: Object.values(byKind).reduce((a, b) => a + b, 0), byKind };
  } finally {
    await client.close();
  }
}

export const opsBetween = (before: OpCounts, after: OpCounts): OpCounts => {
  const byKind = Object.fromEntries(Object.entries(after.byKind).map(([k, v]) => [k, v - (before.byKind[k] ?? 0)]));
  return { total: after.total - before.total, byKind };
};

export interface HistorySize {
  /** Events of the fleet workflow, summed over its executions (continue-as-new starts another). */
  events: number;
  executions: number;
  /** Events of one target group's workflow (the first batch's first), for scale. */
  groupEvents: number;
}

/** The history of a fleet run's workflow, across continue-as-new. */
export async function fleetHistory(temporal: Client, runId: string): Promise<HistorySize> {
  const workflowId = deploymentRunWorkflowId(runId);
  const runIds: string[] = [];
  for await (const execution of temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runIds.push(execution.runId);
  const lengths = await Promise.all(runIds.map(async (id) => (await temporal.workflow.getHandle(workflowId, id).describe()).historyLength));
  const group = await temporal.workflow.getHandle(fleetTargetGroupWorkflowId(runId, 1, 1)).describe();
  return { events: lengths.reduce((a, b) => a + b, 0), executions: runIds.length, groupEvents: group.historyLength };
}

/**
 * BENCH_MONGO_OPS=1: mongod's profiler (level 2, every operation) on Bosun's database while the measured
 * runs go, then its entries counted by collection and kind ("deployment_runs update"): which writes a
 * target costs. The profiler's own writes cost mongod CPU, so the CPU figures of such a run are not the
 * ones to compare.
 */
export async function profileOperations(mongoUri: string): Promise<{ stop(): Promise<Array<[string, number]>> }> {
  const client = new MongoClient(mongoUri);
  const db = client.db();
  await db.command({ profile: 0 });
  await db.collection('system.profile').drop().catch(() => undefined);
  await db.createCollection('system.profile', { capped: true, size: 256 * 1024 * 1024 }).catch(() => undefined);
  await db.command({ profile: 2 });
  return {
    async stop() {
      try {
        await db.command({ profile: 0 });
        const rows = await db
          .collection('system.profile')
          .aggregate<{ _id: { ns: string; op: string; name: string | null }; n: number }>([
            { $group: { _id: { ns: '$ns', op: '$op', name: { $cond: [{ $eq: ['$op', 'command'] }, { $first: { $map: { input: { $objectToArray: '$command' }, in: '$$this.k' } } }, null] } }, n: { $sum: 1 } } },
          ])
          .toArray();
        return rows
          .map((row): [string, number] => [`${row._id.ns.replace(/^[^.]*\./, '')} ${row._id.op}${row._id.name ? ` ${row._id.name}` : ''}`, row.n])
          .sort((a, b) => b[1] - a[1]);
      } finally {
        await client.close();
      }
    },
  };
}
