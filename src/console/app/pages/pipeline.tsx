import { useState } from 'preact/hooks';
import { api, get } from '../api';
import { FINISHED, type Pipeline, type PipelineRun } from '../api-types';
import { ErrorNote, Section, Status, useLoad, When } from '../components/common';
import { useConfigChanges } from '../config-changes';
import { PipelineGraph } from '../components/pipeline-graph';
import { StageValues } from '../components/pipeline-stage';
import { Table } from '../components/table';
import { navigate } from '../router';
import { session } from '../session';
import { ManagedNote } from '../components/managed';

type Stage = Pipeline['stages'][number];

/** A stage of the definition: its deployment, when it runs, its gate, its parameters as written. */
function DefinedStage({ stage }: { stage: Stage }) {
  return (
    <>
      <h3>{stage.name}</h3>
      <p>
        <a href={`/deployments/${stage.deployment.id}`}>{stage.deployment.name || 'its deployment (deleted)'}</a>
      </p>
      {stage.when !== 'success' ? <p class="small">runs {stage.when === 'always' ? 'whatever happened before' : 'when a stage it needs failed'}</p> : null}
      {stage.gate ? (
        <p class="small" data-stage-gate>
          {stage.gate.approvals} approval{stage.gate.approvals === 1 ? '' : 's'} before it starts (expires in {stage.gate.expires_in})
        </p>
      ) : null}
      <StageValues values={stage.parameters} label={`Parameters of ${stage.name}`} />
    </>
  );
}

/** The pipeline's parameters (secret ones as password fields): Run, then go to the run. */
function PipelineRunForm({ pipeline }: { pipeline: Pipeline }) {
  const [error, setError] = useState<unknown>(null);
  const run = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const parameters: Record<string, string> = {};
    for (const p of pipeline.parameters) {
      const value = (form.elements.namedItem(`param-${p.name}`) as HTMLInputElement | null)?.value ?? '';
      if (value !== '') parameters[p.name] = value;
    }
    setError(null);
    try {
      const started = await api<{ run_id: string }>('POST', `/api/v1/pipelines/${pipeline.id}/run`, Object.keys(parameters).length ? { parameters } : {});
      navigate(`/pipelines/${pipeline.id}/runs/${started.run_id}`);
    } catch (problem) {
      setError(problem);
    }
  };
  return (
    <Section title="Run">
      <ErrorNote error={error} />
      <form class="grid-form" onSubmit={(e) => void run(e)} aria-label="Run the pipeline">
        {pipeline.parameters.map((p) => (
          <label key={p.name}>
            {p.name}
            {p.required ? ' (required)' : ''}
            <input name={`param-${p.name}`} type={p.secret ? 'password' : 'text'} autoComplete="off" required={p.required} placeholder={p.default ?? ''} pattern={p.pattern ?? undefined} />
            {p.description ? <span class="hint">{p.description}</span> : null}
          </label>
        ))}
        <div class="wide">
          <button type="submit" class="primary">
            Run now
          </button>
        </div>
      </form>
    </Section>
  );
}

const stagesDone = (run: PipelineRun) => `${run.stages.filter((s) => s.status === 'success').length} of ${run.stages.length} succeeded`;

/** A pipeline: its stages drawn as a graph, a Run form for its parameters, and its runs. */
export function PipelinePage({ pipelineId }: { pipelineId: string }) {
  const pipeline = useLoad(() => get<Pipeline>(`/api/v1/pipelines/${pipelineId}`), [pipelineId]);
  const runs = useLoad(() => get<PipelineRun[]>(`/api/v1/pipelines/${pipelineId}/runs?per_page=20`), [pipelineId], {
    pollMs: 2000,
    poll: (list) => list.some((r) => !FINISHED.has(r.status)),
  });
  useConfigChanges(pipeline.reload);
  const p = pipeline.data;
  if (!p) return <main id="main">{pipeline.error ? <ErrorNote error={pipeline.error} /> : <p class="muted">Loading…</p>}</main>;
  return (
    <main id="main">
      <p class="crumbs">
        <a href="/pipelines">Pipelines</a> /
      </p>
      <h1>{p.name}</h1>
      <ManagedNote managedBy={p.managed_by} />
      {p.description ? <p>{p.description}</p> : null}
      <Section title="Stages">
        <PipelineGraph stages={p.stages} label={`The stages of ${p.name}`} box={(stage) => <DefinedStage stage={stage} />} />
      </Section>
      {session.can('deployments:run') ? <PipelineRunForm pipeline={p} /> : null}
      <Section title="Runs">
        <ErrorNote error={runs.error} />
        <Table
          rows={runs.data}
          rowKey={(r) => r.id}
          mark={(r) => ({ 'data-pipeline-run': r.id })}
          empty="Never run."
          columns={[
            {
              head: 'Run',
              cell: (r) => (
                <>
                  <a href={`/pipelines/${p.id}/runs/${r.id}`}>{r.id.slice(-8)}</a>
                  {r.retry_of ? <span class="muted small"> retry</span> : null}
                </>
              ),
            },
            { head: 'Status', cell: (r) => <Status value={r.status} /> },
            { head: 'Stages', cell: stagesDone },
            { head: 'Triggered by', cell: (r) => r.actor?.name ?? r.triggered_by },
            { head: 'Started', cell: (r) => <When at={r.started_at ?? r.created_at} /> },
            { head: 'Ended', cell: (r) => <When at={r.completed_at} /> },
          ]}
        />
      </Section>
    </main>
  );
}
