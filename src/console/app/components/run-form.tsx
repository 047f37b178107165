import { useState } from 'preact/hooks';
import { api } from '../api';
import type { Deployment, Plan } from '../api-types';
import { navigate } from '../router';
import { session } from '../session';
import { Section, Status, When } from './common';
import { Guards } from './deployment-guards';
import { frozenUntil } from './freeze-notices';

type Attempt = (change: () => Promise<void>) => Promise<void>;

/** Only a person with role admin for the whole organization may run through a freeze (the API decides; this only offers). */
const mayRunThroughFreeze = () => session.get()?.identity.type === 'person' && session.can('admin');

/**
 * The deployment's parameters (secret ones as password fields): Preview the plan, or Run now and go
 * to the run. While a freeze covers its targets the form says so before the click: an admin may tick
 * "Run through the freeze" and give a reason; anyone else is told until when.
 */
export function RunForm({ deployment: d, attempt }: { deployment: Deployment; attempt: Attempt }) {
  const [plan, setPlan] = useState<Plan | null>(null);
  const [through, setThrough] = useState(false);
  const until = frozenUntil(d.freezes);
  const frozen = until !== null;
  const parametersOf = (form: HTMLFormElement) => {
    const values: Record<string, string> = {};
    for (const p of d.parameters) {
      const value = (form.elements.namedItem(`param-${p.name}`) as HTMLInputElement | null)?.value ?? '';
      if (value !== '') values[p.name] = value;
    }
    return Object.keys(values).length ? { parameters: values } : {};
  };
  const preview = (form: HTMLFormElement) =>
    attempt(async () => setPlan((await api<{ data: Plan }>('POST', `/api/v1/deployments/${d.id}/plan`, parametersOf(form))).data));
  const run = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const reason = (form.elements.namedItem('freeze-reason') as HTMLInputElement | null)?.value ?? '';
    return attempt(async () => {
      const body = { ...parametersOf(form), ...(frozen && through ? { override_freeze: { reason } } : {}) };
      const started = await api<{ run_id: string }>('POST', `/api/v1/deployments/${d.id}/run`, body);
      navigate(`/deployments/${d.id}/runs/${started.run_id}`);
    });
  };

  return (
    <Section title="Run">
      <form class="grid-form" onSubmit={run} aria-label="Run the deployment">
        {d.parameters.map((p) => (
          <label key={p.name}>
            {p.name}
            {p.required ? ' (required)' : ''}
            <input
              name={`param-${p.name}`}
              type={p.secret ? 'password' : 'text'}
              autoComplete="off"
              required={p.required}
              placeholder={p.default ?? ''}
              pattern={p.pattern ?? undefined}
            />
            {p.description ? <span class="hint">{p.description}</span> : null}
          </label>
        ))}
        {frozen ? (
          <div class="wide frozen-run" data-frozen-run>
            <p class="warning">
              A change freeze covers its servers until <When at={until} />: a run now is refused
              {mayRunThroughFreeze() ? ' unless you run it through the freeze (recorded on the run, with your reason).' : '. Only a person with role admin may run through a freeze.'}
            </p>
            {mayRunThroughFreeze() ? (
              <>
                <label class="inline">
                  <input type="checkbox" name="through" checked={through} onChange={(e) => setThrough((e.currentTarget as HTMLInputElement).checked)} /> Run through the freeze
                </label>
                {through ? (
                  <label>
                    Reason <input name="freeze-reason" required maxLength={2000} placeholder="why this cannot wait for the freeze to lift" />
                  </label>
                ) : null}
              </>
            ) : null}
          </div>
        ) : null}
        <div class="wide">
          <button type="button" onClick={(e) => void preview((e.currentTarget as HTMLButtonElement).form!)}>
            Preview the plan
          </button>{' '}
          <button type="submit" class="primary" disabled={frozen && !through}>
            {!frozen ? 'Run now' : through ? 'Run now through the freeze' : `Frozen until ${new Date(until).toLocaleString()}`}
          </button>
        </div>
      </form>
      {plan ? <PlanView plan={plan} /> : null}
    </Section>
  );
}

function PlanView({ plan }: { plan: Plan }) {
  return (
    <div class="plan" aria-label="Plan">
      <h3>
        Plan: {plan.targets.length} target{plan.targets.length === 1 ? '' : 's'}{' '}
        {plan.strategy.max_concurrency !== null
          ? `in a rolling window of ${plan.strategy.max_concurrency} (${plan.strategy.batches} group${plan.strategy.batches === 1 ? '' : 's'})`
          : `in ${plan.strategy.batches} batch${plan.strategy.batches === 1 ? '' : 'es'}`}
      </h3>
      {plan.warnings.map((w) => (
        <p class="warning" role="status">
          {w.message}
        </p>
      ))}
      <ul>
        {plan.targets.map((t) => (
          <li key={t.server_id}>
            {plan.strategy.max_concurrency !== null ? 'group' : 'batch'} {t.batch}: {t.title} <code>{t.host}</code> <Status value={t.status} />
          </li>
        ))}
      </ul>
      <h4>Guards</h4>
      <Guards gates={plan.strategy.gates} healthCheck={plan.strategy.health_check} rollback={plan.rollback} inWindow={plan.strategy.max_concurrency !== null} />
      {Object.keys(plan.environment).length ? (
        <p>
          Environment:{' '}
          {Object.entries(plan.environment).map(([k, v]) => (
            <code class="env">
              {k}={v}
            </code>
          ))}
        </p>
      ) : null}
    </div>
  );
}
