import { useEffect } from 'preact/hooks';
import { api, get } from '../api';
import type { ApprovalWait, FeedRun, Freeze, Page, ScheduleListed } from '../api-types';
import { Elapsed, ErrorNote, Section, Status, summaryText, useLoad, When } from '../components/common';
import { Table } from '../components/table';
import { pageSocket } from '../live';
import { session } from '../session';
import { useWaitingForMe } from '../waiting';
import { coversText } from './freezes';

/*
 * A person's first page: what waits for them (runs at a gate they may approve), what is in progress,
 * what failed lately, the freezes that hold now or soon, and the next scheduled runs. The lists
 * follow the organization's runs live (RunsChanged) and the API filters each by what the person may see.
 */

const IN_PROGRESS = 'queued,running,awaiting_approval,paused,frozen';
const DAY = 24 * 3600_000;
const WEEK = 7 * DAY;

const runLink = (r: Pick<FeedRun, 'id' | 'deployment_id'>, hash = '') => `/deployments/${r.deployment_id}/runs/${r.id}${hash}`;

/** What holds a run's queued targets while it waits between batches (all of them: the batches before have run). */
const HELD: Record<string, string> = { awaiting_approval: 'waiting for approval', paused: 'paused', frozen: 'frozen' };

/** A fleet run's targets in words, those held named for what holds them; a one-server run's step running now. */
function progress(r: FeedRun): string {
  if (!r.strategy) return r.steps.find((s) => s.status === 'running')?.name ?? '—';
  const held = HELD[r.status] && r.summary.queued ? `${r.summary.queued} ${HELD[r.status]}` : '';
  const counted = summaryText(held ? { ...r.summary, queued: 0 } : r.summary);
  return `${[counted, held].filter(Boolean).join(', ') || 'no targets yet'} of ${r.summary.total}`;
}

function WaitingForYou() {
  const waiting = useWaitingForMe();
  const person = session.get()?.identity.type === 'person';
  return (
    <Section title={waiting?.length ? `Waiting for you (${waiting.length})` : 'Waiting for you'} id="waiting">
      <Table<ApprovalWait>
        label="Runs waiting for your approval"
        rows={waiting ?? undefined}
        rowKey={(r) => r.id}
        mark={(r) => ({ 'data-run': r.id })}
        empty={person ? 'Nothing waits for your approval.' : 'Only people approve; runs waiting at a gate are listed for those who may approve them.'}
        columns={[
          { head: 'Deployment', cell: (r) => <a href={runLink(r, '#gate')}>{r.deployment_name}</a> },
          { head: 'Approvals', cell: (r) => (r.gate ? `${r.gate.approvals.length} of ${r.gate.approvals_required}, before ${r.gate.before_target !== null ? `target ${r.gate.before_target}` : `batch ${r.gate.before_batch}`}` : '—') },
          { head: 'Triggered by', cell: (r) => r.trigger.name },
          { head: 'Waiting', cell: (r) => <Elapsed from={r.waiting_since} to={null} /> },
          { head: 'Expires', cell: (r) => <When at={r.gate?.expires_at} /> },
        ]}
      />
    </Section>
  );
}

function RunList({ title, runs, empty, failed }: { title: string; runs: { data?: Page<FeedRun>; error?: unknown }; empty: string; failed?: boolean }) {
  const page = runs.data;
  const more = page && page.meta.total > page.data.length ? ` (the latest ${page.data.length} of ${page.meta.total})` : '';
  return (
    <Section title={`${title}${page ? ` · ${page.meta.total}` : ''}`}>
      <ErrorNote error={runs.error} />
      <Table<FeedRun>
        label={title}
        rows={page?.data}
        rowKey={(r) => r.id}
        mark={(r) => ({ 'data-run': r.id, 'data-status': r.status })}
        empty={empty}
        columns={[
          { head: 'Deployment', cell: (r) => <a href={runLink(r)}>{r.deployment_name}</a> },
          { head: 'Status', cell: (r) => <Status value={r.status} /> },
          failed ? { head: 'Why', cell: (r) => <span class="why">{r.error ?? '—'}</span> } : { head: 'Progress', cell: progress },
          { head: 'Triggered by', cell: (r) => r.trigger.name },
          { head: failed ? 'Ended' : 'Began', cell: (r) => <When at={failed ? r.completed_at : (r.started_at ?? r.created_at)} /> },
        ]}
      />
      {more ? <p class="muted">{more.trim()}</p> : null}
    </Section>
  );
}

function FreezesSoon() {
  const list = useLoad(() => get<Freeze[]>('/api/v1/freezes'), []);
  const now = Date.now();
  const soon = (list.data ?? []).filter((f) => f.active_now || (f.next_window && Date.parse(f.next_window.starts_at) < now + WEEK));
  return (
    <Section title="Change freezes, now and in the next 7 days">
      <ErrorNote error={list.error} />
      <Table<Freeze>
        label="Change freezes now and soon"
        rows={list.data ? soon : undefined}
        rowKey={(f) => f.id}
        mark={(f) => ({ 'data-freeze': f.name })}
        empty="No freeze holds now or in the next 7 days."
        columns={[
          { head: 'Freeze', cell: (f) => <a href="/freezes">{f.name}</a> },
          { head: 'Covers', cell: coversText },
          {
            head: 'When',
            cell: (f) =>
              f.active_now && f.current_window ? (
                <strong class="status status-frozen">
                  holds now, until <When at={f.current_window.ends_at} />
                </strong>
              ) : (
                <>
                  from <When at={f.next_window?.starts_at} /> to <When at={f.next_window?.ends_at} />
                </>
              ),
          },
        ]}
      />
    </Section>
  );
}

function NextScheduled() {
  const list = useLoad(() => api<Page<ScheduleListed>>('GET', '/api/v1/schedules?per_page=100'), []);
  const next = (list.data?.data ?? [])
    .filter((s) => s.next_runs?.length)
    .map((s) => ({ schedule: s, at: s.next_runs![0]!.at }))
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
    .slice(0, 5);
  return (
    <Section title="Next scheduled runs" actions={<a href="/schedules">Every schedule</a>}>
      <ErrorNote error={list.error} />
      <Table<(typeof next)[number]>
        label="Next scheduled runs"
        rows={list.data ? next : undefined}
        rowKey={(n) => n.schedule.id}
        empty="No schedule runs soon."
        columns={[
          { head: 'When', cell: (n) => <When at={n.at} /> },
          { head: 'Schedule', cell: (n) => <a href={`/deployments/${n.schedule.deployment_id}#schedules`}>{n.schedule.name}</a> },
          { head: 'Deployment', cell: (n) => <a href={`/deployments/${n.schedule.deployment_id}`}>{n.schedule.deployment_name}</a> },
        ]}
      />
    </Section>
  );
}

export function Dashboard() {
  const inProgress = useLoad(() => api<Page<FeedRun>>('GET', `/api/v1/runs?status=${IN_PROGRESS}&per_page=20`), []);
  const failed = useLoad(() => api<Page<FeedRun>>('GET', `/api/v1/runs?status=failed&since=${encodeURIComponent(new Date(Date.now() - DAY).toISOString())}&per_page=10`), []);
  // The organization's runs changed: both lists read again (the API says which the person may see).
  useEffect(() => {
    const socket = pageSocket();
    const changed = () => {
      void inProgress.reload();
      void failed.reload();
    };
    socket.on('RunsChanged', changed);
    return () => void socket.off('RunsChanged', changed);
  }, [inProgress.reload, failed.reload]);
  return (
    <main id="main">
      <h1>Dashboard</h1>
      <WaitingForYou />
      <RunList title="In progress" runs={inProgress} empty="No run is in progress." />
      <RunList title="Failed in the last 24 hours" runs={failed} empty="No run failed in the last 24 hours." failed />
      <div class="dashboard-pair">
        <FreezesSoon />
        <NextScheduled />
      </div>
    </main>
  );
}
