import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, get } from '../api';
import { FINISHED, type Deployment, type Page, type Run as RunView, type RunTargetDetail } from '../api-types';
import { ErrorNote, Section, Status, useLoad, When } from '../components/common';
import { holdOf, RunDuration, TargetStatus, targetsText } from '../components/run-waits';
import { WholeLog } from '../components/whole-log';
import { FreezeNotes, GatePanel, PauseControls, RollbackPanel } from '../components/run-guards';
import { watchRun, type Streamed } from '../live';
import { session } from '../session';
import { AuditTable, type AuditEntry } from './audit';

/** A step with its output: a one-server run's, or a fleet target's. */
type Step = RunView['steps'][number] | RunTargetDetail['steps'][number];

function Steps({ steps, logPath }: { steps: Step[]; logPath: string }) {
  return (
    <ol class="run-steps">
      {steps.map((step, index) => (
        <li key={index} class="run-step">
          <h3>
            <span class="step-no">{index + 1}</span> {step.name} <Status value={step.status} />
            <span class="muted small">
              {step.exit_code !== null ? ` exit ${step.exit_code}` : ''}
              {step.attempts > 1 ? ` · ${step.attempts} attempts` : ''}
            </span>
          </h3>
          <code class="command">{step.command}</code>
          {step.status !== 'pending' || step.output ? (
            <WholeLog
              path={`${logPath}/steps/${index + 1}/log`}
              anchor={String(index + 1)}
              label={`Output of ${step.name}`}
              version={`${step.status}:${(step as Streamed).streamed ?? step.output.length}:${step.attempts}`}
              live={!FINISHED.has(step.status)}
            />
          ) : null}
        </li>
      ))}
    </ol>
  );
}

/** Where a run's page sits: Deployments / the deployment's name (once read) / what follows. */
function Crumbs({ deploymentId, children }: { deploymentId: string; children?: ComponentChildren }) {
  const deployment = useLoad(() => get<Deployment>(`/api/v1/deployments/${deploymentId}`), [deploymentId]);
  return (
    <p class="crumbs">
      <a href="/deployments">Deployments</a> /{' '}
      {deployment.data ? (
        <>
          <a href={`/deployments/${deploymentId}`}>{deployment.data.name}</a> /{' '}
        </>
      ) : null}
      {children}
    </p>
  );
}

/** A run as it happens: live over the page's socket, re-read on any doubt. */
export function Run({ deploymentId, runId }: { deploymentId: string; runId: string }) {
  const [run, setRun] = useState<RunView | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => watchRun(deploymentId, runId, setRun, setError), [deploymentId, runId]);

  const cancel = async () => {
    setError(null);
    try {
      await api('POST', `/api/v1/deployments/${deploymentId}/runs/${runId}/cancel`);
    } catch (problem) {
      setError(problem);
    }
  };

  if (!run) return <main id="main">{error ? <ErrorNote error={error} /> : <p class="muted">Loading…</p>}</main>;
  const fleet = run.strategy !== null;
  const parameters = Object.entries(run.parameters);
  const runPath = `/api/v1/deployments/${deploymentId}/runs/${runId}`;
  return (
    <main id="main">
      <Crumbs deploymentId={deploymentId} />
      <h1>
        Run {run.id.slice(-8)} <Status value={run.status} />
      </h1>
      <ErrorNote error={error} />
      <FreezeNotes run={run} />
      {run.error ? (
        <p class="error-note" role="alert">
          {run.error}
        </p>
      ) : null}
      <Section
        title="Run"
        actions={
          <>
            {!FINISHED.has(run.status) && session.can('deployments:run') ? (
              <button type="button" class="danger" onClick={() => void cancel()}>
                Cancel the run
              </button>
            ) : null}
            {run.temporal_ui_url ? (
              <a class="button" href={run.temporal_ui_url} target="_blank" rel="noreferrer">
                Open in Temporal
              </a>
            ) : null}
          </>
        }
      >
        <dl class="facts">
          <dt>Triggered by</dt>
          <dd data-trigger>
            <TriggeredBy run={run} deploymentId={deploymentId} />
          </dd>
          <dt>Started</dt>
          <dd>
            <When at={run.started_at} />
          </dd>
          <dt>Duration</dt>
          <dd>
            <RunDuration run={run} />
          </dd>
          {run.retry_of ? (
            <>
              <dt>Retry of</dt>
              <dd>
                <a href={`/deployments/${deploymentId}/runs/${run.retry_of}`}>{run.retry_of.slice(-8)}</a>
              </dd>
            </>
          ) : null}
          <dt>Parameters</dt>
          <dd>
            {parameters.length
              ? parameters.map(([k, v]) => (
                  <code class="env">
                    {k}={v}
                  </code>
                ))
              : 'none'}
          </dd>
        </dl>
        <PauseControls run={run} runPath={runPath} />
      </Section>
      <GatePanel run={run} runPath={runPath} />
      {session.can('audit:read') ? <WhoDidWhat runId={runId} status={run.status} /> : null}
      <RollbackPanel run={run} runPath={runPath} deploymentId={deploymentId} />
      {fleet ? (
        <Section title={`Targets: ${run.summary.success} of ${run.summary.total} succeeded`}>
          <p class="muted" data-summary>
            {targetsText(run)}
          </p>
          <ul class="target-grid">
            {run.targets.map((t) => (
              <li key={t.server_id} class={`target ${holdOf(run, t) ? `target-held target-held-${holdOf(run, t)}` : `target-${t.status}`}`} data-target={t.title}>
                <a href={`/deployments/${deploymentId}/runs/${runId}/targets/${t.server_id}`}>
                  <strong>{t.title}</strong>
                  <span class="muted small">{run.strategy?.max_concurrency ? 'group' : 'batch'} {t.batch}</span>
                  <TargetStatus run={run} target={t} />
                  {t.health ? <span class={`small health health-${t.health.status}`}>health {t.health.status}</span> : null}
                  {t.rollback ? <span class={`small health health-${t.rollback.status}`}>rollback {t.rollback.status}</span> : null}
                </a>
              </li>
            ))}
          </ul>
        </Section>
      ) : (
        <Section title="Steps">
          <Steps steps={run.steps} logPath={`/api/v1/deployments/${deploymentId}/runs/${runId}`} />
        </Section>
      )}
    </main>
  );
}

/**
 * The audit trail's entries about this run: who triggered it, who decided at its gates, paused or
 * cancelled it, and every command it ran (its targets' too), read again as its status changes.
 */
function WhoDidWhat({ runId, status }: { runId: string; status: string }) {
  const entries = useLoad(() => api<Page<AuditEntry>>('GET', `/api/v1/audit?run=${runId}&per_page=100`), [runId, status]);
  const list = entries.data?.data ?? [];
  return (
    <Section title="Who did what">
      <ErrorNote error={entries.error} />
      {list.length ? <AuditTable entries={list} /> : <p class="muted">Nothing in the audit trail yet (entries are chained about a second after each change).</p>}
      {entries.data && entries.data.meta.total > list.length ? (
        <p class="muted small">
          The newest {list.length} of {entries.data.meta.total}: <a href="/audit">the audit trail</a> has them all.
        </p>
      ) : null}
    </Section>
  );
}

/** Who or what started the run: a schedule's tick ("scheduled by nightly at …, as ci"), or a person or service account. */
function TriggeredBy({ run, deploymentId }: { run: RunView; deploymentId: string }) {
  const { trigger } = run;
  if (trigger.type !== 'schedule') return <>{run.triggered_by}</>;
  return (
    <>
      scheduled by <a href={`/deployments/${deploymentId}#schedules`}>{trigger.name}</a> at <When at={trigger.scheduled_at} />
      {run.actor ? <span class="muted"> · as {run.actor.name} (service account)</span> : null}
    </>
  );
}

/** One server of a fleet run, with each step's output. */
export function Target({ deploymentId, runId, serverId }: { deploymentId: string; runId: string; serverId: string }) {
  const target = useLoad(() => get<RunTargetDetail>(`/api/v1/deployments/${deploymentId}/runs/${runId}/targets/${serverId}`), [deploymentId, runId, serverId], {
    pollMs: 1000,
    poll: (t) => !FINISHED.has(t.status),
  });
  const t = target.data;
  if (!t) return <main id="main">{target.error ? <ErrorNote error={target.error} /> : <p class="muted">Loading…</p>}</main>;
  return (
    <main id="main">
      <Crumbs deploymentId={deploymentId}>
        <a href={`/deployments/${deploymentId}/runs/${runId}`}>Run {runId.slice(-8)}</a> /
      </Crumbs>
      <h1>
        {t.title} <Status value={t.status} />
      </h1>
      {t.error ? (
        <p class="error-note" role="alert">
          {t.error}
        </p>
      ) : null}
      <Section title={`Batch ${t.batch} · ${t.host ?? ''}`}>
        <Steps steps={t.steps} logPath={`/api/v1/deployments/${deploymentId}/runs/${runId}/targets/${serverId}`} />
      </Section>
      {t.rollback ? (
        <Section title={`Rollback: ${t.rollback.status}`}>
          <p>
            <a href={`/deployments/${deploymentId}/runs/${t.rollback.run_id}`}>The rollback run</a>, its steps and their output.
          </p>
        </Section>
      ) : null}
      {t.health ? (
        <Section title={`Health check: ${t.health.status}`}>
          <code class="command">{t.health.command}</code>
          <ol class="health-attempts">
            {t.health.attempts.map((a) => (
              <li key={a.attempt}>
                attempt {a.attempt} <When at={a.at} /> · {a.timed_out ? 'timed out' : `exit ${a.exit_code ?? '—'}`}
                {a.output ? <pre class="log">{a.output}</pre> : null}
              </li>
            ))}
          </ol>
        </Section>
      ) : null}
    </main>
  );
}
