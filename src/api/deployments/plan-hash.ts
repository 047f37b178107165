import { createHash } from 'node:crypto';
import { stepDefinitions, type StepDefinition } from '../../domain/deployments/new-runs';
import type { Deployment } from '../../domain/deployments/model';
import type { ParameterValue } from '../../domain/deployments/parameters';
import { gatesOf, healthCheckOf, rollbackOf, type GateDefinition } from '../../domain/deployments/strategy';
import { ApiError } from '../http/errors';
import { resolveStrategy, type ResolvedStrategy } from './targets';

/** What a plan hash covers: what a run would do, where, in which order, with what. */
export interface PlannedRun {
  /** Each target with its batch, in batch order. */
  targets: ReadonlyArray<{ serverId: string; batch: number }>;
  steps: readonly StepDefinition[];
  strategy: ResolvedStrategy;
  gates: readonly GateDefinition[];
  healthCheck: { command: string; soak_seconds: number; timeout_seconds: number; retries: number; interval_seconds: number } | null;
  rollback: { steps: readonly StepDefinition[]; automatic: boolean } | null;
  parameters: readonly ParameterValue[];
}

const gatePlace = (gate: GateDefinition) => gate.before_target ?? gate.before_batch;

/**
 * The plan's hash: SHA-256 over its resolved targets and batches, its steps, its strategy (gates
 * and health check included) and its parameters' names and non-secret values (a secret's value is never hashed: a
 * hash of a short secret could be guessed). The same plan gives the same hash in any process.
 */
export function planHash(plan: PlannedRun): string {
  const stepsKey = (steps: readonly StepDefinition[]) => stepDefinitions(steps).map((s) => [s.name, s.command, s.timeout_seconds, s.retries, s.continue_on_error]);
  const canonical = {
    targets: plan.targets.map((t) => [t.serverId, t.batch]),
    steps: stepsKey(plan.steps),
    // A window's, and its gates' targets, only where there is one: a batched plan's hash is what it was.
    strategy: [plan.strategy.batchSize, plan.strategy.maxFailures, plan.strategy.batches, ...(plan.strategy.maxConcurrency !== null ? [plan.strategy.maxConcurrency] : [])],
    gates: [...plan.gates].sort((a, b) => gatePlace(a) - gatePlace(b)).map((g) => [...(g.before_target !== undefined ? ['target', g.before_target] : [g.before_batch]), g.approvals, g.expires_in]),
    health: plan.healthCheck ? [plan.healthCheck.command, plan.healthCheck.soak_seconds, plan.healthCheck.timeout_seconds, plan.healthCheck.retries, plan.healthCheck.interval_seconds] : null,
    rollback: plan.rollback ? [plan.rollback.automatic, stepsKey(plan.rollback.steps)] : null,
    parameters: [...plan.parameters].sort((a, b) => a.name.localeCompare(b.name)).map((p) => [p.name, p.secret ? null : p.value]),
  };
  return createHash('sha256').update(JSON.stringify(canonical), 'utf8').digest('hex');
}

/**
 * What a run of `deployment` on `servers` (resolved now, in their order) with these parameters would
 * be, and its hash: the one reading of a definition that POST /plan shows and a trigger checks. A
 * one-server deployment has no strategy, gates, health check nor rollback.
 */
export function planOf(deployment: Pick<Deployment, 'server_id' | 'strategy' | 'rollback' | 'steps'>, servers: readonly { _id: { toString(): string } }[], parameters: readonly ParameterValue[]) {
  const fleet = !deployment.server_id;
  const gates = fleet ? gatesOf(deployment) : [];
  const strategy = resolveStrategy(fleet && deployment.strategy ? { ...deployment.strategy, gates } : null, servers.length);
  const planned = {
    targets: servers.map((server, index) => ({ serverId: server._id.toString(), batch: strategy.batchOfTargets[index]! })),
    steps: deployment.steps,
    strategy,
    gates,
    healthCheck: fleet ? healthCheckOf(deployment) : null,
    rollback: fleet ? rollbackOf(deployment) : null,
    parameters,
  };
  return { ...planned, hash: planHash(planned) };
}

/** A trigger that names the plan it reviewed runs only that plan: 409 plan_changed (with both hashes) when it changed since. */
export function assertPlanUnchanged(given: string | undefined, current: string): void {
  if (given === undefined || given === current) return;
  throw new ApiError('plan_changed', 'The plan changed since it was reviewed (a server tagged or removed, a step or the strategy edited): review it again with POST /plan; nothing started', undefined, {
    given_plan_hash: given,
    current_plan_hash: current,
  });
}
