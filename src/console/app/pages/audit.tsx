import { useState } from 'preact/hooks';
import { api } from '../api';
import type { Page } from '../api-types';
import { ErrorNote, Section, submitted, useLoad, When } from '../components/common';
import { Table } from '../components/table';

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
}

interface Verdict {
  ok: boolean;
  checked: number;
  first_broken: { seq: number; reason: string } | null;
}

const FILTERS = ['actor', 'action', 'server', 'since', 'until'] as const;

export const actorText = (actor: AuditEntry['actor']) =>
  actor.type === 'schedule' ? `schedule ${actor.name}${actor.run_as ? ` as ${actor.run_as.name}` : ''}` : `${actor.name} (${actor.type.replace('_', ' ')})`;

/** What an entry did, in a line: a command's text and exit, or the route's target. */
export const whatText = (e: AuditEntry) =>
  e.action === 'command.run'
    ? `${String(e.details.command)}${e.details.exit_code !== undefined && e.details.exit_code !== null ? ` → exit ${String(e.details.exit_code)}` : ''}`
    : `${e.target.kind}${e.target.id ? ` ${e.target.id}` : ''}`;

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
        { head: 'What', cell: (e) => <code>{whatText(e)}</code> },
        { head: 'Outcome', cell: (e) => e.outcome },
      ]}
    />
  );
}

/** The audit trail: filtered, newest first, a page at a time; and its verification. */
export function Audit() {
  const [query, setQuery] = useState<Record<string, string>>({});
  const [page, setPage] = useState(1);
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  const [verifyError, setVerifyError] = useState<unknown>(null);
  const search = new URLSearchParams({ ...query, page: String(page), per_page: '50' });
  const entries = useLoad(() => api<Page<AuditEntry>>('GET', `/api/v1/audit?${search}`), [search.toString()]);

  const filter = (event: Event) => {
    const { field } = submitted(event);
    const next: Record<string, string> = {};
    for (const name of FILTERS) {
      const value = field(name);
      if (value) next[name] = name === 'since' || name === 'until' ? new Date(value).toISOString() : value;
    }
    setPage(1);
    setQuery(next);
  };
  const verify = async () => {
    setVerifyError(null);
    try {
      setVerdict(await api<Verdict>('POST', '/api/v1/audit/verify'));
    } catch (error) {
      setVerifyError(error);
    }
  };
  const meta = entries.data?.meta;

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
        <form class="filters" onSubmit={filter} aria-label="Filter the trail">
          <label>
            Actor (name or id) <input name="actor" defaultValue={query.actor} />
          </label>
          <label>
            Action <input name="action" placeholder="run.* or command.run" defaultValue={query.action} />
          </label>
          <label>
            Server id <input name="server" defaultValue={query.server} />
          </label>
          <label>
            Since <input name="since" type="datetime-local" />
          </label>
          <label>
            Until <input name="until" type="datetime-local" />
          </label>
          <button type="submit">Filter</button>
        </form>
      </Section>
      <Section title={meta ? `${meta.total} entr${meta.total === 1 ? 'y' : 'ies'}` : 'Entries'}>
        <AuditTable entries={entries.data?.data ?? []} />
        {meta && meta.last_page > 1 ? (
          <nav aria-label="Pages" class="week-nav">
            <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
              Newer
            </button>
            <span>
              Page {meta.current_page} of {meta.last_page}
            </span>
            <button type="button" disabled={page >= meta.last_page} onClick={() => setPage(page + 1)}>
              Older
            </button>
          </nav>
        ) : null}
      </Section>
    </main>
  );
}
