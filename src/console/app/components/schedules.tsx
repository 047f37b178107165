import { useEffect, useState } from 'preact/hooks';
import { api, get } from '../api';
import type { Deployment, Page, Schedule, ScheduleTick } from '../api-types';
import { AddSchedule } from './schedule-form';
import { frozenUntil } from './freeze-notices';
import { session } from '../session';
import { ErrorNote, Section, Status, submitted, useLoad, When } from './common';
import { Table } from './table';
import { browserZone, ZonedTime } from './zoned';
import { ManagedNote } from './managed';
import { useConfigChanges } from '../config-changes';

/** Why a tick started no run, in words. */
const SKIPPED: Record<string, string> = {
  missed: 'missed: Bosun was down for longer than the catch-up window',
  overlap: 'skipped: the last run was still going',
  frozen: 'skipped: a change freeze covered its servers',
  paused: 'skipped: the schedule was paused',
  forbidden: 'skipped: its service account may not run this deployment',
  refused: 'refused by the trigger',
};

/** A deployment's schedules: when each runs (in your zone and its own), paused or not and why, its ticks. */
export function Schedules({ deploymentId, parameters, frozen, ticked }: { deploymentId: string; parameters: Deployment['parameters']; frozen: Deployment['freezes']; ticked: () => void }) {
  const list = useLoad(() => get<Schedule[]>(`/api/v1/deployments/${deploymentId}/schedules?per_page=100`), [deploymentId]);
  useConfigChanges(list.reload);
  return (
    <Section title="Schedules" id="schedules">
      <ErrorNote error={list.error} />
      {list.data?.length === 0 ? <p class="muted">No schedules.</p> : null}
      <AddSchedule deploymentId={deploymentId} parameters={parameters} added={list.reload} />
      {(list.data ?? []).map((s) => (
        <ScheduleCard key={s.id} schedule={s} path={`/api/v1/deployments/${deploymentId}/schedules/${s.id}`} deploymentId={deploymentId} frozen={frozen} changed={list.reload} ticked={ticked} />
      ))}
    </Section>
  );
}

function ScheduleCard({
  schedule: s,
  path,
  deploymentId,
  frozen,
  changed,
  ticked,
}: {
  schedule: Schedule;
  path: string;
  deploymentId: string;
  /** The change freezes holding the deployment's servers now: a tick now would be skipped. */
  frozen: Deployment['freezes'];
  changed: () => Promise<void>;
  ticked: () => void;
}) {
  const [error, setError] = useState<unknown>(null);
  /** The number of ticks before a Run now: the ticks are polled until one more is there. */
  const [ticksBefore, setTicksBefore] = useState<number | null>(null);
  const ticks = useLoad(() => api<Page<ScheduleTick>>('GET', `${path}/ticks?per_page=10`), [path], {
    pollMs: 1000,
    poll: (page) => ticksBefore !== null && page.meta.total <= ticksBefore,
  });
  const tickCount = ticks.data?.meta.total;
  // A tick of a Run now came in: the deployment's runs show its run too.
  useEffect(() => {
    if (ticksBefore !== null && tickCount !== undefined && tickCount > ticksBefore) ticked();
  }, [tickCount]);
  const act = async (call: () => Promise<unknown>) => {
    setError(null);
    try {
      await call();
      return true;
    } catch (problem) {
      setError(problem);
      return false;
    }
  };
  const pause = (event: Event) => {
    const { field, form } = submitted(event);
    void act(async () => {
      await api('POST', `${path}/${s.paused ? 'unpause' : 'pause'}`, { note: field('note') || null });
      form.reset();
      await changed();
    });
  };
  const runNow = () =>
    void act(async () => {
      setTicksBefore(ticks.data?.meta.total ?? 0);
      await api('POST', `${path}/trigger`, {});
      await ticks.reload();
    });
  return (
    <article class="schedule" aria-label={`Schedule ${s.name}`} data-schedule={s.name}>
      <h3>
        {s.name} <Status value={s.paused ? 'paused' : 'active'} />
      </h3>
      <div class="schedule-body">
        <div>
          <ManagedNote managedBy={s.managed_by} />
          <ScheduleFacts schedule={s} />
          <ErrorNote error={error} />
          <div class="schedule-actions">
            {session.can('deployments:write') ? (
              <form onSubmit={pause} aria-label={s.paused ? `Unpause ${s.name}` : `Pause ${s.name}`}>
                <label>
                  Note <input name="note" maxLength={500} placeholder={s.paused ? 'why it may run again' : 'why it must not run'} />
                </label>
                <button type="submit">{s.paused ? 'Unpause' : 'Pause'}</button>
              </form>
            ) : (
              <p class="muted small">Pausing a schedule takes the deployments:write right, which you do not have.</p>
            )}
            {session.can('deployments:run') && frozen.length ? (
              <p class="warning" data-frozen-run-now>
                Frozen by {frozen.map((f) => f.name).join(', ')} until <When at={frozenUntil(frozen)} />: a tick now would be skipped (it runs as {s.run_as.name}, and
                only a person with role admin runs through a freeze, from the Run form above).
              </p>
            ) : null}
            {session.can('deployments:run') ? (
              <button type="button" onClick={runNow} disabled={frozen.length > 0} title={`Start a run now, as ${s.run_as.name}, the way a tick does`}>
                Run now
              </button>
            ) : null}
          </div>
          <h4>Recent ticks</h4>
          <ErrorNote error={ticks.error} />
          <TickList ticks={ticks.data?.data} deploymentId={deploymentId} />
        </div>
        <NextRuns schedule={s} />
      </div>
    </article>
  );
}

/** What a schedule is: when, as whom, how it overlaps and catches up, its parameters and note, who paused it. */
function ScheduleFacts({ schedule: s }: { schedule: Schedule }) {
  const parameters = Object.entries(s.parameters);
  return (
    <dl class="facts">
      <dt>When</dt>
      <dd>
        {s.cron ? (
          <>
            <code>{s.cron}</code> (cron)
          </>
        ) : (
          `every ${s.every}`
        )}{' '}
        in <strong>{s.time_zone}</strong>
      </dd>
      <dt>Runs as</dt>
      <dd>{s.run_as.name} (service account)</dd>
      <dt>Overlap</dt>
      <dd>
        {s.overlap} · catch-up window {s.catch_up_window} · jitter {s.jitter ?? 'none'}
      </dd>
      {parameters.length ? (
        <>
          <dt>Parameters</dt>
          <dd>
            {parameters.map(([k, v]) => (
              <code class="env" key={k}>
                {k}={v}
              </code>
            ))}
          </dd>
        </>
      ) : null}
      {s.note ? (
        <>
          <dt>Note</dt>
          <dd>{s.note}</dd>
        </>
      ) : null}
      {s.pause ? (
        <>
          <dt>{s.paused ? 'Paused' : 'Unpaused'}</dt>
          <dd data-pause>
            by <strong>{s.pause.by?.name ?? 'someone'}</strong> <When at={s.pause.at} />
            {s.pause.note ? `: ${s.pause.note}` : ''}
          </dd>
        </>
      ) : null}
    </dl>
  );
}

function NextRuns({ schedule: s }: { schedule: Schedule }) {
  const mine = browserZone();
  if (s.next_runs === null) return <p class="muted">The next runs are unknown now (Temporal could not be asked).</p>;
  if (!s.next_runs.length) return <p class="muted">No next runs{s.paused ? ' while paused' : ''}.</p>;
  return (
    <table class="next-runs" aria-label={`Next runs of ${s.name}`}>
      <caption>Next runs</caption>
      <thead>
        <tr>
          <th scope="col">
            Your time <span class="zone">({mine})</span>
          </th>
          <th scope="col">
            Schedule’s time <span class="zone">({s.time_zone})</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {s.next_runs.map((r) => (
          <tr key={r.at} class={r.frozen_by.length ? 'frozen' : undefined} data-frozen={r.frozen_by.length ? 'yes' : undefined}>
            <td>
              <ZonedTime at={r.at} zone={mine} />
              {r.frozen_by.length ? <div class="small">in freeze {r.frozen_by.map((f) => f.name).join(', ')}: skipped</div> : null}
            </td>
            <td>
              <ZonedTime at={r.at} zone={s.time_zone} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function TickList({ ticks, deploymentId }: { ticks: ScheduleTick[] | undefined; deploymentId: string }) {
  if (!ticks) return <p class="muted">Loading…</p>;
  if (!ticks.length) return <p class="muted">No ticks yet.</p>;
  return (
    <Table
      class="ticks"
      rows={ticks}
      rowKey={(t) => t.id}
      mark={(t) => ({ 'data-tick': t.outcome })}
      columns={[
        {
          head: 'Due',
          cell: (t) => (
            <>
              <When at={t.scheduled_at} />
              {t.requested_by ? <div class="muted small">run now by {t.requested_by.name}</div> : null}
            </>
          ),
        },
        { head: 'Outcome', cell: (t) => <Status value={t.outcome} /> },
        {
          head: 'Run, or why not',
          cell: (t) => (
            <>
              {t.run_id ? <a href={`/deployments/${deploymentId}/runs/${t.run_id}`}>Run {t.run_id.slice(-8)}</a> : <span>{SKIPPED[t.outcome] ?? t.outcome}</span>}
              {t.message ? <div class="muted small">{t.message}</div> : null}
            </>
          ),
        },
      ]}
    />
  );
}
