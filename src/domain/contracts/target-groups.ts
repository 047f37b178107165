import type { FleetRunInput, FleetTarget, HealthCheck } from './runs';

/**
 * A batch's targets run together in one workflow, a child of their fleet run's (at most
 * TARGET_GROUP_SIZE of them: see workflows/fleet-groups.ts): a workflow per target cost a run of 100
 * quick targets a third of its time, most of it Temporal's.
 */
export const TARGET_GROUP_SIZE = 40;

/** A group of a batch's targets, as its workflow takes them. */
export interface TargetGroupInput {
  run: Pick<FleetRunInput, 'runId' | 'organizationId' | 'deploymentId' | 'deploymentName' | 'triggeredBy'>;
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

