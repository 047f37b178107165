import { useState } from 'preact/hooks';
import { api, get } from '../api';
import { FINISHED, type Deployment as DeploymentView, type RunListItem } from '../api-types';
import { ErrorNote, Section, seconds, Status, summaryText, useLoad, When } from '../components/common';
import { Guards } from '../components/deployment-guards';
import { FreezeNotices } from '../components/freeze-notices';
import { RunForm } from '../components/run-form';
import { Schedules } from '../components/schedules';
import { Table } from '../components/table';
import { navigate } from '../router';
import { session } from '../session';
import { targetsText } from './deployments';
import { ChangeButton, ManagedNote, managedReason } from '../components/managed';
import { useConfigChanges } from '../config-changes';

/** A deployment: its steps and targets, a Run form for its parameters with a plan preview, its schedules, and its history. */
export function Deployment({ deploymentId }: { deploymentId: string }) {
  const deployment = useLoad(() => get<DeploymentView>(`/api/v1/deployments/${deploymentId}`), [deploymentId]);
  const runs = useLoad(() => get<RunListItem[]>(`/api/v1/deployments/${deploymentId}/runs?per_page=20`), [deploymentId], {
    pollMs: 2000,
    poll: (list) => list.some((r) => !FINISHED.has(r.status)),
  });
  // Applied from Git, or forced elsewhere: the definition shown is read again.
  useConfigChanges(deployment.reload);
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
      <ManagedNote managedBy={d.managed_by} id="managed-by" />
      <p data-runs-on>
        Runs on {d.server_id ? <a href={`/servers/${d.server_id}`}>{d.server_title ?? 'its server (deleted)'}</a> : targetsText(d)}
        {d.strategy ? `, ${d.strategy.max_concurrency !== null ? `a rolling window of ${d.strategy.max_concurrency}` : `${d.strategy.batch_size ?? 'all'} at a time`}, ${d.strategy.max_failures ?? 0} failures allowed` : ''}.
      </p>
      <FreezeNotices freezes={d.freezes} covers={d.server_id ? undefined : (f) => `${f.server_ids.length} of its servers`} />
      {d.strategy || d.rollback ? (
        <Section title="Guards">
          <Guards gates={d.strategy?.gates ?? []} healthCheck={d.strategy?.health_check ?? null} rollback={d.rollback} inWindow={d.strategy?.max_concurrency != null} />
        </Section>
      ) : null}
      <ErrorNote error={error} />
      {session.can('deployments:run') ? <RunForm deployment={d} attempt={attempt} /> : null}
      <Schedules deploymentId={deploymentId} parameters={d.parameters} frozen={d.freezes.filter((f) => f.active_now)} ticked={() => void runs.reload()} />
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
      {session.can('deployments:write') ? <DeleteDeployment deployment={d} attempt={attempt} /> : null}
    </main>
  );
}

type Attempt = (change: () => Promise<void>) => Promise<void>;

/** Delete, asked twice; disabled, saying why, while a Git source manages the deployment. */
function DeleteDeployment({ deployment: d, attempt }: { deployment: DeploymentView; attempt: Attempt }) {
  const [asking, setAsking] = useState(false);
  const remove = () =>
    attempt(async () => {
      await api('DELETE', `/api/v1/deployments/${d.id}`);
      navigate('/deployments');
    });
  return (
    <Section title="Delete">
      <p class="muted small">Deletes the definition and its run history (refused while a run is queued or running, or a pipeline runs it).</p>
      {asking ? (
        <>
          <button type="button" class="danger" onClick={() => void remove()}>
            Yes, delete {d.name}
          </button>{' '}
          <button type="button" onClick={() => setAsking(false)}>
            Keep
          </button>
        </>
      ) : (
        <>
          <ChangeButton managedBy={d.managed_by} describedBy="managed-by" onClick={() => setAsking(true)} label={`Delete ${d.name}`}>
            Delete…
          </ChangeButton>
          {d.managed_by ? <span class="muted small"> {managedReason(d.managed_by)}</span> : null}
        </>
      )}
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
