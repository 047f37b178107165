import type { FleetRunInput, FleetTarget, HealthCheck, TargetRunInput } from './runs';

/** What a fleet run's targets carry of their run. */
export type TargetsRun = Pick<FleetRunInput, 'runId' | 'organizationId' | 'deploymentId' | 'deploymentName' | 'triggeredBy'>;

/** A fleet target as a run on its server, in batch (or window group) `batch`: what its workflow runs, its own or its group's. */
export const targetRunInput = (run: TargetsRun, target: FleetTarget, batch: number): TargetRunInput => ({
  runId: target.runId,
  organizationId: run.organizationId,
  deploymentId: run.deploymentId,
  serverId: target.serverId,
  deploymentName: run.deploymentName,
  triggeredBy: run.triggeredBy,
  serverTitle: target.serverTitle,
  fleetRunId: run.runId,
  batch,
});

/**
 * A batch's targets run together in one workflow, a child of their fleet run's (at most
 * TARGET_GROUP_SIZE of them: see workflows/fleet-groups.ts): a workflow per target cost a run of 100
 * quick targets a third of its time, most of it Temporal's.
 */
export const TARGET_GROUP_SIZE = 40;

/** A group of a batch's targets, as its workflow takes them. */
export interface TargetGroupInput {
  run: TargetsRun;
  batch: number;
  targets: FleetTarget[];
  /** Checked on each target as soon as its steps succeed (a health check without a soak); null: none, or after the batch. */
  healthCheck: HealthCheck | null;
}

/** How each target of a group ended, in the group's order: why it failed (null: its steps succeeded), and why it is unhealthy. */
export interface TargetOutcome {
  failed: string | null;
  unhealthy: string | null;
}

