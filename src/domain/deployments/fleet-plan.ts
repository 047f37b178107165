import type { FleetGate, FleetPlan } from '../contracts/runs';
import { parseDuration } from '../time/durations';
import type { DeploymentRun } from './model';
import { healthCheckOf } from './strategy';
import { windowGroups } from './window';

/** What a fleet run's workflow needs to run its batches (or its window), read from the run as its trigger stored it. */
export function fleetPlanOf(fleet: NonNullable<DeploymentRun['fleet']>): FleetPlan {
  const { total, batches, max_failures: maxFailures } = fleet;
  const maxConcurrency = fleet.max_concurrency ?? null;
  const defined = fleet.strategy?.gates ?? [];
  // A window's gate stands before its target's group (the trigger started a group there).
  const groups = maxConcurrency ? windowGroups(total, fleet.batch_size, defined.flatMap((gate) => (gate.before_target ? [gate.before_target] : []))) : [];
  const placeOf = (gate: (typeof defined)[number]) =>
    maxConcurrency ? { beforeBatch: gate.before_target ? (groups[gate.before_target - 1] ?? batches + 1) : batches + 1, beforeTarget: gate.before_target ?? 0 } : { beforeBatch: gate.before_batch ?? 0 };
  // A gate past the last batch (or target) guards nothing (the plan warns of it).
  const gates: FleetGate[] = defined
    .map((gate) => ({ ...placeOf(gate), approvals: gate.approvals, expiresIn: gate.expires_in, expiresInMs: parseDuration(gate.expires_in) * 1000 }))
    .filter((gate) => gate.beforeBatch >= 1 && gate.beforeBatch <= batches)
    .sort((a, b) => a.beforeBatch - b.beforeBatch);
  const check = healthCheckOf({ strategy: fleet.strategy });
  const healthCheck = check
    ? { command: check.command, soakSeconds: check.soak_seconds, timeoutSeconds: check.timeout_seconds, retries: check.retries, intervalSeconds: check.interval_seconds }
    : undefined;
  const rollbackAutomatic = !!fleet.rollback?.steps.length && fleet.rollback.automatic !== false;
  return { total, batches, maxFailures, ...(maxConcurrency ? { maxConcurrency } : {}), ...(gates.length ? { gates } : {}), ...(healthCheck ? { healthCheck } : {}), ...(rollbackAutomatic ? { rollbackAutomatic } : {}) };
}
