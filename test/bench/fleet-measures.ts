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
