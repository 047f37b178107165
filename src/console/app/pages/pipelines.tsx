import { get } from '../api';
import type { Pipeline, PipelineRun } from '../api-types';
import { ErrorNote, Section, Status, useLoad, When } from '../components/common';
import { Table } from '../components/table';

/** The organization's pipelines, each with its number of stages and its last run. */
export function Pipelines() {
  const list = useLoad(async () => {
    const pipelines = await get<Pipeline[]>('/api/v1/pipelines?per_page=100');
    const lastRuns = await Promise.all(pipelines.map((p) => get<PipelineRun[]>(`/api/v1/pipelines/${p.id}/runs?per_page=1`).then((runs) => runs[0] ?? null)));
    return pipelines.map((pipeline, i) => ({ pipeline, last: lastRuns[i]! }));
  }, []);
  return (
    <main id="main">
      <h1>Pipelines</h1>
      <ErrorNote error={list.error} />
      <Section title={list.data ? `${list.data.length} pipeline${list.data.length === 1 ? '' : 's'}` : 'Pipelines'}>
        <Table
          rows={list.data}
          rowKey={(row) => row.pipeline.id}
          mark={(row) => ({ 'data-pipeline': row.pipeline.name })}
          empty="No pipeline yet: define one with POST /api/v1/pipelines."
          columns={[
            { head: 'Pipeline', cell: ({ pipeline }) => <a href={`/pipelines/${pipeline.id}`}>{pipeline.name}</a> },
            { head: 'Stages', cell: ({ pipeline }) => pipeline.stages.length },
            {
              head: 'Last run',
              cell: ({ pipeline, last }) =>
                last ? (
                  <a href={`/pipelines/${pipeline.id}/runs/${last.id}`}>
                    <Status value={last.status} />
                  </a>
                ) : (
                  <Status value="never run" />
                ),
            },
            { head: 'When', cell: ({ last }) => <When at={last ? (last.started_at ?? last.created_at) : null} /> },
          ]}
        />
      </Section>
    </main>
  );
}
