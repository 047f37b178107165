import { useState } from 'preact/hooks';
import { api, get } from '../api';
import { FINISHED, type Deployment as DeploymentView, type Plan, type RunListItem } from '../api-types';
import { ErrorNote, Section, seconds, Status, summaryText, useLoad, When } from '../components/common';
import { Schedules } from '../components/schedules';
import { Table } from '../components/table';
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
  const d = deployment.data;
  if (!d) return <main id="main">{deployment.error ? <ErrorNote error={deployment.error} /> : <p class="muted">Loading…</p>}</main>;

  /** Does what a button asks; its failure is shown at the top of the page. */
  const attempt = async (change: () => Promise<void>) => {
    setError(null);
    try {
      await change();
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
      {session.can('deployments:run') ? <RunForm deployment={d} attempt={attempt} /> : null}
      <Schedules deploymentId={deploymentId} parameters={d.parameters} ticked={() => void runs.reload()} />
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
        <RunHistory deploymentId={deploymentId} runs={runs.data} attempt={attempt} />
      </Section>
    </main>
  );
}

type Attempt = (change: () => Promise<void>) => Promise<void>;

/** The deployment's parameters (secret ones as password fields): Preview the plan, or Run now and go to the run. */
function RunForm({ deployment: d, attempt }: { deployment: DeploymentView; attempt: Attempt }) {
  const [plan, setPlan] = useState<Plan | null>(null);
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
    return attempt(async () => {
      const started = await api<{ run_id: string }>('POST', `/api/v1/deployments/${d.id}/run`, parametersOf(form));
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
  );
}

/** The deployment's latest runs, each with its summary; a failed one can be retried (what failed, as a new run). */
function RunHistory({ deploymentId, runs, attempt }: { deploymentId: string; runs: RunListItem[] | undefined; attempt: Attempt }) {
  const retry = (runId: string) =>
    attempt(async () => {
      const started = await api<{ run_id: string }>('POST', `/api/v1/deployments/${deploymentId}/runs/${runId}/retry`);
      navigate(`/deployments/${deploymentId}/runs/${started.run_id}`);
    });
  return (
    <Table
      rows={runs}
      rowKey={(r) => r.id}
      empty="Never run."
      columns={[
        {
          head: 'Run',
          cell: (r) => (
            <>
              <a href={`/deployments/${deploymentId}/runs/${r.id}`}>{r.id.slice(-8)}</a>
              {r.retry_of ? <span class="muted small"> retry</span> : null}
            </>
          ),
        },
        { head: 'Status', cell: (r) => <Status value={r.status} /> },
        { head: 'Targets', cell: (r) => summaryText(r.summary) },
        { head: 'Triggered by', cell: (r) => r.triggered_by },
        { head: 'Started', cell: (r) => <When at={r.started_at ?? r.created_at} /> },
        { head: 'Duration', cell: (r) => seconds(r.duration_seconds) },
      ]}
      actions={{
        cell: (r) =>
          r.status === 'failed' && session.can('deployments:run') ? (
            <button type="button" onClick={() => void retry(r.id)}>
              Retry what failed
            </button>
          ) : null,
      }}
    />
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
