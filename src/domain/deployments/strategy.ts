import type { Deployment } from './model';
import { stepDefinitions } from './new-runs';

/* A deployment's (or a fleet run's) guards as defined, with their defaults: what views, plans and triggers read of its strategy. */

/** A gate as defined: before a batch, or (in a rolling window) before a target. */
export type GateDefinition = ({ before_batch: number; before_target?: never } | { before_target: number; before_batch?: never }) & { approvals: number; expires_in: string };

/** A deployment's approval gates, as defined. */
export const gatesOf = (deployment: Pick<Deployment, 'strategy'>): GateDefinition[] =>
  (deployment.strategy?.gates ?? []).map(({ before_batch, before_target, approvals, expires_in }) =>
    typeof before_target === 'number' ? { before_target, approvals, expires_in } : { before_batch: before_batch!, approvals, expires_in },
  );

/** A deployment's rolling window as defined (a count or "25%"), or null for batches. */
export const maxConcurrencyOf = (deployment: Pick<Deployment, 'strategy'>) => (deployment.strategy?.max_concurrency as unknown as number | string | null | undefined) ?? null;

/** A deployment's health check, as defined (null: none). */
export const healthCheckOf = (deployment: Pick<Deployment, 'strategy'>) => {
  const check = deployment.strategy?.health_check;
  return check
    ? { command: check.command, soak_seconds: check.soak_seconds ?? 0, timeout_seconds: check.timeout_seconds ?? 10, retries: check.retries ?? 0, interval_seconds: check.interval_seconds ?? 5 }
    : null;
};

/** A deployment's rollback, as defined (null: none): its steps and whether it runs as soon as a run halts. */
export const rollbackOf = (deployment: Pick<Deployment, 'rollback'>) =>
  deployment.rollback?.steps.length ? { steps: stepDefinitions(deployment.rollback.steps), automatic: deployment.rollback.automatic !== false } : null;
