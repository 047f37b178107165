import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { FINISHED, type PipelineRun } from '../api-types';
import { Elapsed, ErrorNote, Section, Status, When } from '../components/common';
import { PipelineGraph } from '../components/pipeline-graph';
import { RunStage } from '../components/pipeline-stage';
import { watchPipelineRun } from '../live';
import { navigate } from '../router';
import { session } from '../session';

/** Cancel while it goes on, Retry once it failed or was cancelled (a new run keeping what succeeded). */
function RunActions({ run }: { run: PipelineRun }) {
  const [error, setError] = useState<unknown>(null);
  if (!session.can('deployments:run')) return null;
  const path = `/api/v1/pipelines/${run.pipeline_id}/runs/${run.id}`;
  const attempt = async (change: () => Promise<void>) => {
    setError(null);
    try {
      await change();
    } catch (problem) {
      setError(problem);
    }
  };
  const cancel = () => attempt(async () => void (await api('POST', `${path}/cancel`)));
  const retry = () =>
    attempt(async () => {
      const started = await api<{ run_id: string }>('POST', `${path}/retry`);
      navigate(`/pipelines/${run.pipeline_id}/runs/${started.run_id}`);
    });
  return (
    <>
      <ErrorNote error={error} />
      <div class="actions">
        {!FINISHED.has(run.status) && !run.cancel_requested_at ? (
          <button type="button" class="danger" onClick={() => void cancel()}>
            Cancel the run
          </button>
        ) : null}
        {run.status === 'failed' || run.status === 'cancelled' ? (
          <button type="button" onClick={() => void retry()}>
            Retry (keeps what succeeded)
          </button>
        ) : null}
      </div>
    </>
  );
}

/** A pipeline run: its stages drawn as the pipeline's graph in their statuses, live over the page's socket. */
export function PipelineRunPage({ pipelineId, runId }: { pipelineId: string; runId: string }) {
  const [run, setRun] = useState<PipelineRun | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setRun(null);
    return watchPipelineRun(pipelineId, runId, setRun, setError);
  }, [pipelineId, runId]);
  if (!run) return <main id="main">{error ? <ErrorNote error={error} /> : <p class="muted">Loading…</p>}</main>;
  const parameters = Object.entries(run.parameters as Record<string, string>);
  return (
    <main id="main">
      <p class="crumbs">
        <a href="/pipelines">Pipelines</a> / <a href={`/pipelines/${run.pipeline_id}`}>{run.pipeline_name}</a> /
      </p>
      <h1>
        Run {run.id.slice(-8)} <Status value={run.status} />
      </h1>
      <dl class="facts panel">
        <dt>Triggered by</dt>
        <dd>
          {run.actor?.name ?? run.triggered_by}
          {run.schedule ? ` (schedule ${run.schedule.name})` : ''}
        </dd>
        <dt>Started</dt>
        <dd>
          <When at={run.started_at ?? run.created_at} />
        </dd>
        <dt>Duration</dt>
        <dd>
          <Elapsed from={run.started_at} to={run.completed_at} />
        </dd>
        {run.retry_of ? (
          <>
            <dt>Retry of</dt>
            <dd>
              <a href={`/pipelines/${run.pipeline_id}/runs/${run.retry_of}`}>run {run.retry_of.slice(-8)}</a>
            </dd>
          </>
        ) : null}
        {run.cancelled_by ? (
          <>
            <dt>Cancelled by</dt>
            <dd>{run.cancelled_by.name}</dd>
          </>
        ) : null}
        {parameters.map(([name, value]) => (
          <Fragment key={name}>
            <dt>{name}</dt>
            <dd>
              <code>{value}</code>
            </dd>
          </Fragment>
        ))}
      </dl>
      {run.error ? (
        <p class="error-note" data-run-error>
          {run.error}
        </p>
      ) : null}
      <ErrorNote error={error} />
      <Section title="Stages" actions={<RunActions run={run} />}>
        <PipelineGraph stages={run.stages} label={`The stages of run ${run.id.slice(-8)}`} box={(stage) => <RunStage run={run} stage={stage} />} />
      </Section>
    </main>
  );
}
