import type { Deployment } from '../api-types';
import { seconds } from './common';

type Gate = NonNullable<Deployment['strategy']>['gates'][number];
type HealthCheck = NonNullable<Deployment['strategy']>['health_check'];
type Rollback = Deployment['rollback'];

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * What guards a fleet run of a deployment, before it bites: its approval gates, its health check and
 * its rollback steps. The deployment's page and its plan preview show the same list.
 */
export function Guards({ gates, healthCheck, rollback, inWindow = false }: { gates: readonly Gate[]; healthCheck: HealthCheck; rollback: Rollback; inWindow?: boolean }) {
  if (!gates.length && !healthCheck && !rollback) return <p class="muted">No approval gate, health check or rollback steps.</p>;
  return (
    <ul class="guards" aria-label="Guards">
      {[...gates]
        .sort((a, b) => (a.before_target ?? a.before_batch ?? 0) - (b.before_target ?? b.before_batch ?? 0))
        .map((g) => (
          <li key={g.before_target ?? g.before_batch} data-guard="gate">
            <strong>Approval gate</strong> {g.before_target !== undefined ? `before target ${g.before_target} (once the ${g.before_target - 1} before it ended)` : `after batch ${(g.before_batch ?? 1) - 1}, before batch ${g.before_batch}`}:{' '}
            {plural(g.approvals, 'approval')} needed, expires {g.expires_in} after it opens
          </li>
        ))}
      {healthCheck ? (
        <li data-guard="health-check">
          <strong>Health check</strong> on each target {inWindow ? 'as it ends, in its slot' : 'after its batch'}: <code class="command">{healthCheck.command}</code>{' '}
          <span class="muted small">
            after {seconds(healthCheck.soak_seconds)} soak · limit {seconds(healthCheck.timeout_seconds)} · {healthCheck.retries} {healthCheck.retries === 1 ? 'retry' : 'retries'}{' '}
            {healthCheck.interval_seconds} s apart
          </span>
        </li>
      ) : null}
      {rollback ? (
        <li data-guard="rollback">
          <strong>Rollback steps</strong>{' '}
          {rollback.automatic ? 'run at once on every server a halted run touched' : 'run on request, from a failed run’s page'}:
          <ol class="steps">
            {rollback.steps.map((step) => (
              <li key={step.name}>
                {step.name} <code class="command">{step.command}</code>
              </li>
            ))}
          </ol>
        </li>
      ) : null}
    </ul>
  );
}
