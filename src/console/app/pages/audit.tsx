import { useState } from 'preact/hooks';
import { api } from '../api';
import { AUDIT_FILTERS, AuditFilterForm, type AuditFilters } from '../components/audit-filters';
import { ErrorNote, Section, useLoad, When } from '../components/common';
import { Table } from '../components/table';
import { navigate, useLocation } from '../router';

/** What an entry is about, named as it is now (null name, `deleted`: no longer in the organization). */
interface Subjects {
  deployment: { id: string; name: string | null; deleted: boolean } | null;
  run: { id: string; deployment_id: string | null; fleet_run_id: string | null; deleted: boolean } | null;
  server: { id: string; name: string | null; deleted: boolean } | null;
}

/** An audit entry as GET /api/v1/audit answers it. */
export interface AuditEntry {
  seq: number;
  at: string;
  actor: { type: string; id: string | null; name: string; token_id?: string | null; session_id?: string | null; run_as?: { id: string; name: string } | null };
  source_address: string | null;
  action: string;
  target: { kind: string; id: string | null };
  server_id: string | null;
  outcome: string;
  details: Record<string, unknown>;
  hash: string;
  subjects: Subjects;
}

/** One page of the trail: where it lies among the entries matching, and its neighbours' cursors. */
interface AuditPage {
  data: AuditEntry[];
  meta: { current_page: number; per_page: number; total: number; last_page: number; offset: number; older_before: number | null; newer_after: number | null };
}

interface Verdict {
  ok: boolean;
  checked: number;
  first_broken: { seq: number; reason: string } | null;
}

const PER_PAGE = 50;

export const actorText = (actor: AuditEntry['actor']) =>
  actor.type === 'schedule' ? `schedule ${actor.name}${actor.run_as ? ` as ${actor.run_as.name}` : ''}` : `${actor.name} (${actor.type.replace('_', ' ')})`;

/** A command's text and exit. */
const commandText = (e: AuditEntry) => `${String(e.details.command)}${e.details.exit_code !== undefined && e.details.exit_code !== null ? ` → exit ${String(e.details.exit_code)}` : ''}`;

/** A thing gone from the organization: its kind, its id's end (the whole id on hover) and "(deleted)". */
const Deleted = ({ kind, id }: { kind: string; id: string }) => (
  <span class="muted" title={id}>
    {kind} {id.slice(-8)} (deleted)
  </span>
);

/** "deploy-web run 1a2b3c4d on web-1", each a link to its page (a command's server: "on web-1"); null when the entry is about none of them. */
function SubjectLine({ subjects, command = false }: { subjects: Subjects; command?: boolean }) {
  const { deployment, run, server } = subjects;
  if (!deployment && !run && !server) return null;
  return (
    <span class="audit-subjects">
      {deployment ? deployment.deleted ? <Deleted kind="deployment" id={deployment.id} /> : <a href={`/deployments/${deployment.id}`}>{deployment.name}</a> : null}
      {run ? (
        <>
          {' '}
          {run.deleted ? <Deleted kind="run" id={run.id} /> : <a href={`/deployments/${run.deployment_id}/runs/${run.fleet_run_id ?? run.id}`}>run {run.id.slice(-8)}</a>}
        </>
      ) : null}
      {server ? (
        <>
          {deployment || run ? ' on ' : command ? 'on ' : ''}
          {server.deleted ? <Deleted kind="server" id={server.id} /> : <a href={`/servers/${server.id}`}>{server.name}</a>}
        </>
      ) : null}
    </span>
  );
}

/** What an entry did: a command's text and exit, then what it was about, named and linked (else its target's kind and id). */
function What({ entry }: { entry: AuditEntry }) {
  if (entry.action === 'command.run') {
    return (
      <>
        <code>{commandText(entry)}</code>
        <SubjectLine subjects={entry.subjects} command />
      </>
    );
  }
  return entry.subjects.deployment || entry.subjects.run || entry.subjects.server ? <SubjectLine subjects={entry.subjects} /> : <code>{`${entry.target.kind}${entry.target.id ? ` ${entry.target.id}` : ''}`}</code>;
}

/** Entries as a table, newest first: who did what, when, and how it went. */
export function AuditTable({ entries }: { entries: AuditEntry[] }) {
  return (
    <Table
      rows={entries}
      rowKey={(e) => e.seq}
      columns={[
        { head: '#', cell: (e) => e.seq },
        { head: 'When', cell: (e) => <When at={e.at} /> },
        { head: 'Who', cell: (e) => actorText(e.actor) },
        { head: 'Action', cell: (e) => <code>{e.action}</code> },
        { head: 'What', cell: (e) => <What entry={e} /> },
        { head: 'Outcome', cell: (e) => e.outcome },
      ]}
    />
  );
}

const count = (n: number) => n.toLocaleString('en');

/** The trail's URL: its filters and, past the first page, the cursor of the page shown. */
const trailUrl = (filters: AuditFilters, cursor: Record<string, string> = {}) => {
  const search = new URLSearchParams({ ...(filters as Record<string, string>), ...cursor });
  return `/audit${search.size ? `?${search}` : ''}`;
};

/** Newer and Older, as links (the page's place is in the URL: a reload or a shared link shows the same page). */
function PageLinks({ filters, meta }: { filters: AuditFilters; meta: AuditPage['meta'] }) {
  // The page after the newest: the URL without a cursor, so it shows entries chained since.
  const newer = meta.newer_after === null ? null : meta.offset <= meta.per_page ? trailUrl(filters) : trailUrl(filters, { after: String(meta.newer_after) });
  const older = meta.older_before === null ? null : trailUrl(filters, { before: String(meta.older_before) });
  return (
    <nav aria-label="Pages" class="week-nav">
      {newer ? <a href={newer}>← Newer</a> : <span class="muted">← Newer</span>}
      <span>
        Page {count(meta.current_page)} of {count(meta.last_page)}
      </span>
      {older ? <a href={older}>Older →</a> : <span class="muted">Older →</span>}
    </nav>
  );
}

/** The audit trail: filtered, newest first, 50 a page; and its verification. The filters and the page are the URL's. */
export function Audit() {
  useLocation();
  const here = new URLSearchParams(location.search);
  const filters: AuditFilters = Object.fromEntries(AUDIT_FILTERS.flatMap((name) => (here.get(name) ? [[name, here.get(name)!]] : [])));
  const cursor = Object.fromEntries((['before', 'after'] as const).flatMap((name) => (here.get(name) ? [[name, here.get(name)!]] : [])));
  const search = new URLSearchParams({ ...(filters as Record<string, string>), ...cursor, per_page: String(PER_PAGE) });
  const entries = useLoad(() => api<AuditPage>('GET', `/api/v1/audit?${search}`), [search.toString()]);
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  const [verifyError, setVerifyError] = useState<unknown>(null);

  const verify = async () => {
    setVerifyError(null);
    try {
      setVerdict(await api<Verdict>('POST', '/api/v1/audit/verify'));
    } catch (error) {
      setVerifyError(error);
    }
  };
  const meta = entries.data?.meta;
  const shown = entries.data?.data.length ?? 0;

  return (
    <main id="main">
      <h1>Audit trail</h1>
      <p class="muted">Every change made through Bosun and every command it ran, hash-chained: newest first.</p>
      <ErrorNote error={entries.error ?? verifyError} />
      <Section
        title="Integrity"
        actions={
          <button type="button" onClick={() => void verify()}>
            Verify the chain
          </button>
        }
      >
        {verdict ? (
          <p role="status">
            {verdict.ok ? `Chain intact: ${verdict.checked} entries checked.` : `Broken at entry ${verdict.first_broken!.seq}: ${verdict.first_broken!.reason}.`}
          </p>
        ) : (
          <p class="muted">Not verified on this page yet.</p>
        )}
      </Section>
      <Section title="Filters">
        <AuditFilterForm filters={filters} onFilter={(next) => navigate(trailUrl(next))} />
      </Section>
      <Section title={!meta ? 'Entries' : shown ? `Entries ${count(meta.offset + 1)}–${count(meta.offset + shown)} of ${count(meta.total)}` : meta.total ? `No entries here (${count(meta.total)} in all)` : 'No entries'}>
        <AuditTable entries={entries.data?.data ?? []} />
        {meta && (meta.newer_after !== null || meta.older_before !== null) ? <PageLinks filters={filters} meta={meta} /> : null}
      </Section>
    </main>
  );
}
