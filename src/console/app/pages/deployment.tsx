import { useState } from 'preact/hooks';
import { api, get } from '../api';
import { FINISHED, type Deployment as DeploymentView, type Plan, type RunListItem } from '../api-types';
import { ErrorNote, Section, seconds, Status, summaryText, useLoad, When } from '../components/common';
import { Schedules } from '../components/schedules';
import { navigate } from '../router';
import { session } from '../session';
import { targetsText } from './deployments';

/** A deployment: its steps and targets, a Run form for its parameters with a plan preview, its schedules, and its history. */
export function Deployment({ deploymentId }: { deploymentId: string }) {
  const deployment = useLoad(() => get<DeploymentView>(`/api/v1/deployments/${deploymentId}`), [deploymentId]);
  const runs = useLoad(() => get<RunListItem[]>(`/api/v1/deployments/${deploymentId}/runs?per_page=20`), [deploymentId], {
    pollMs: 2000,
    poll: (list) => list.some((r) => !FINISHED.has(r.status)),
  });
  const [error, setError] = useState<unknown>(null);
  const [plan, setPlan] = useState<Plan | null>(null);
  const d = deployment.data;
  if (!d) return <main id="main">{deployment.error ? <ErrorNote error={deployment.error} /> : <p class="muted">Loading…</p>}</main>;

  const parametersOf = (form: HTMLFormElement) => {
    const values: Record<string, string> = {};
    for (const p of d.parameters) {
      const value = (form.elements.namedItem(`param-${p.name}`) as HTMLInputElement | null)?.value ?? '';
      if (value !== '') values[p.name] = value;
    }
    return Object.keys(values).length ? { parameters: values } : {};
  };
  const preview = async (form: HTMLFormElement) => {
    setError(null);
    try {
      setPlan((await api<{ data: Plan }>('POST', `/api/v1/deployments/${deploymentId}/plan`, parametersOf(form))).data);
    } catch (problem) {
      setError(problem);
    }
  };
  const run = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const started = await api<{ run_id: string }>('POST', `/api/v1/deployments/${deploymentId}/run`, parametersOf(event.currentTarget as HTMLFormElement));
      navigate(`/deployments/${deploymentId}/runs/${started.run_id}`);
    } catch (problem) {
      setError(problem);
    }
  };
  const retry = async (runId: string) => {
    setError(null);
    try {
      const started = await api<{ run_id: string }>('POST', `/api/v1/deployments/${deploymentId}/runs/${runId}/retry`);
      navigate(`/deployments/${deploymentId}/runs/${started.run_id}`);
    } catch (problem) {
      setError(problem);
    }
  };

  return (
    <main id="main">
      <p class="crumbs">
        <a href="/deployments">Deployments</a> /
      </p>
      <h1>{d.name}</h1>
      <p>
        Runs on {d.server_id ? <a href={`/servers/${d.server_id}`}>its server</a> : targetsText(d)}
        {d.strategy ? `, ${d.strategy.batch_size ?? 'all'} at a time, ${d.strategy.max_failures ?? 0} failures allowed` : ''}.
      </p>
      <ErrorNote error={error} />
      {session.can('deployments:run') ? (
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
            <div class="wide">
              <button type="button" onClick={(e) => void preview((e.currentTarget as HTMLButtonElement).form!)}>
                Preview the plan
              </button>{' '}
              <button type="submit" class="primary">
                Run now
              </button>
            </div>
          </form>
          {plan ? <PlanView plan={plan} /> : null}
        </Section>
      ) : null}
      <Schedules deploymentId={deploymentId} ticked={() => void runs.reload()} />
      <Section title="Steps">
        <ol class="steps">
          {d.steps.map((step) => (
            <li key={step.name}>
              <strong>{step.name}</strong> <code class="command">{step.command}</code>
              <span class="muted small">
                {' '}
                {step.retries ? `${step.retries} retries · ` : ''}
                {step.timeout_seconds ? `limit ${step.timeout_seconds} s · ` : ''}
                {step.continue_on_error ? 'continues on error' : ''}
              </span>
            </li>
          ))}
        </ol>
      </Section>
      <Section title="Runs">
        <ErrorNote error={runs.error} />
        <table>
          <thead>
            <tr>
              <th>Run</th>
              <th>Status</th>
              <th>Targets</th>
              <th>Triggered by</th>
              <th>Started</th>
              <th>Duration</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {(runs.data ?? []).map((r) => (
              <tr key={r.id}>
                <td>
                  <a href={`/deployments/${deploymentId}/runs/${r.id}`}>{r.id.slice(-8)}</a>
                  {r.retry_of ? <span class="muted small"> retry</span> : null}
                </td>
                <td>
                  <Status value={r.status} />
                </td>
                <td>{summaryText(r.summary)}</td>
                <td>{r.triggered_by}</td>
                <td>
                  <When at={r.started_at ?? r.created_at} />
                </td>
                <td>{seconds(r.duration_seconds)}</td>
                <td>
                  {r.status === 'failed' && session.can('deployments:run') ? (
                    <button type="button" onClick={() => void retry(r.id)}>
                      Retry what failed
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {runs.data?.length === 0 ? <p class="muted">Never run.</p> : null}
      </Section>
    </main>
  );
}

function PlanView({ plan }: { plan: Plan }) {
  return (
    <div class="plan" aria-label="Plan">
      <h3>
        Plan: {plan.targets.length} target{plan.targets.length === 1 ? '' : 's'} in {plan.strategy.batches} batch{plan.strategy.batches === 1 ? '' : 'es'}
      </h3>
      {plan.warnings.map((w) => (
        <p class="warning" role="status">
          {w.message}
        </p>
      ))}
      <ul>
        {plan.targets.map((t) => (
          <li key={t.server_id}>
            batch {t.batch}: {t.title} <code>{t.host}</code> <Status value={t.status} />
          </li>
        ))}
      </ul>
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
