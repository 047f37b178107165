import { api } from '../api';
import type { Page, ScheduleListed } from '../api-types';
import { ErrorNote, Section, Status, useLoad } from '../components/common';
import { Table } from '../components/table';
import { browserZone, inZone, ZonedTime } from '../components/zoned';

/** When a schedule fires, in words: its cron or interval, and its zone. */
export const whenText = (s: Pick<ScheduleListed, 'cron' | 'every' | 'time_zone'>) => (s.cron ? `cron ${s.cron}` : `every ${s.every}`) + ` in ${s.time_zone}`;

/** The page of what a schedule runs: its deployment's, or its pipeline's. */
const ownerPath = (s: Pick<ScheduleListed, 'deployment_id' | 'pipeline_id'>) => (s.pipeline_id ? `/pipelines/${s.pipeline_id}` : `/deployments/${s.deployment_id}`);

/** Every schedule of the deployments and pipelines the person may read, the soonest next run first (paused ones last). */
export function SchedulesPage() {
  const list = useLoad(() => api<Page<ScheduleListed>>('GET', '/api/v1/schedules?per_page=100'), []);
  const page = list.data;
  const next = (s: ScheduleListed) => (s.next_runs?.length ? Date.parse(s.next_runs[0]!.at) : Infinity);
  const rows = page ? [...page.data].sort((a, b) => next(a) - next(b) || a.name.localeCompare(b.name)) : undefined;
  return (
    <main id="main">
      <h1>Schedules</h1>
      <p class="muted">
        Each deployment’s and pipeline’s schedules, the next run first; times in your zone ({browserZone()}) and the schedule’s. Add one from a deployment’s page (its Schedules section).
      </p>
      <ErrorNote error={list.error} />
      <Section title={page ? `${page.meta.total} schedule${page.meta.total === 1 ? '' : 's'}` : 'Schedules'}>
        <Table<ScheduleListed>
          label="Every schedule"
          rows={rows}
          rowKey={(s) => s.id}
          mark={(s) => ({ 'data-schedule': s.name })}
          empty="No schedule yet: open a deployment and add one in its Schedules section."
          columns={[
            { head: 'Schedule', cell: (s) => <a href={`${ownerPath(s)}#schedules`}>{s.name}</a> },
            {
              head: 'Runs',
              cell: (s) => (
                <a href={ownerPath(s)}>
                  {s.pipeline_id ? 'pipeline ' : ''}
                  {s.pipeline_name ?? s.deployment_name}
                </a>
              ),
            },
            { head: 'When', cell: whenText },
            {
              head: 'Next run',
              cell: (s) =>
                s.paused ? (
                  <Status value="paused" />
                ) : s.next_runs?.[0] ? (
                  <span data-next-run={s.next_runs[0].at}>
                    {inZone(s.next_runs[0].at, browserZone())}
                    <br />
                    <span class="muted">
                      <ZonedTime at={s.next_runs[0].at} zone={s.time_zone} />
                    </span>
                  </span>
                ) : (
                  <span class="muted">{s.next_runs === null ? 'unknown: Temporal could not be asked' : 'none'}</span>
                ),
            },
            { head: 'Runs as', cell: (s) => s.run_as.name },
          ]}
        />
        {page && page.meta.total > page.data.length ? <p class="muted">The first {page.data.length} of {page.meta.total} by name.</p> : null}
      </Section>
    </main>
  );
}
