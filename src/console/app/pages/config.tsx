import { useCallback } from 'preact/hooks';
import { get } from '../api';
import type { ConfigSource, DriftedObject } from '../api-types';
import { ErrorNote, Section, useChanges, useLoad, When } from '../components/common';
import { SourceCard } from '../components/config-sources';
import { Table } from '../components/table';
import { session } from '../session';
import { useConfigChanges } from '../config-changes';

/** Each kind's console page: its own page when it has one, else its list. */
const PAGE_OF: Record<string, (id: string) => string> = {
  Deployment: (id) => `/deployments/${id}`,
  Pipeline: (id) => `/pipelines/${id}`,
  Schedule: () => '/schedules',
  Freeze: () => '/freezes',
  Team: (id) => `/teams/${id}`,
  ServiceAccount: (id) => `/service-accounts/${id}`,
  RoleBinding: () => '/role-bindings',
  NotificationChannel: (id) => `/notifications/${id}`,
  Policy: () => '/policy',
};

/** Definitions kept in Git: the sources that apply them (admins), and what was changed here since (drift). */
export function ConfigPage() {
  const admin = session.can('admin');
  const sources = useLoad(() => (admin ? get<ConfigSource[]>('/api/v1/config/sources') : Promise.resolve([])), [admin]);
  const drift = useLoad(() => get<DriftedObject[]>('/api/v1/config/drift'), []);
  const reread = useCallback(() => Promise.all([sources.reload(), drift.reload()]), [sources.reload, drift.reload]);
  // A sync ending, an apply from CI, a forced change elsewhere: read again (the tab's return reads again too).
  useConfigChanges(reread);
  const { error, act } = useChanges(reread);

  return (
    <main id="main">
      <h1>Config</h1>
      <p class="muted">
        Definitions kept in Git: a source’s files are applied as they change, and what it applied is changed there, not here (an admin may force a change; it shows below as drift until the next apply puts the file’s
        version back).
      </p>
      <ErrorNote error={sources.error ?? drift.error ?? error} />
      <Section title="Drift" id="drift">
        <Table
          rows={drift.data}
          rowKey={(d) => `${d.kind}/${d.id}`}
          mark={(d) => ({ 'data-drifted': `${d.kind}/${d.name}` })}
          label="Drifted definitions"
          empty="Nothing changed since it was applied: every managed definition is as its file says."
          columns={[
            { head: 'Kind', cell: (d) => d.kind },
            { head: 'Name', cell: (d) => <a href={(PAGE_OF[d.kind] ?? (() => '/config'))(d.id)}>{d.name}</a> },
            {
              head: 'Defined in',
              cell: (d) => (
                <span class="wrap">
                  {d.source}
                  {d.revision ? <> @ <code>{d.revision.slice(0, 7)}</code></> : null}, {d.path}
                </span>
              ),
            },
            {
              head: 'Changed here',
              cell: (d) =>
                d.forced_at ? (
                  <>
                    forced by {d.forced_by ?? 'someone'}, <When at={d.forced_at} />
                  </>
                ) : (
                  <span class="muted">changed another way</span>
                ),
            },
          ]}
        />
      </Section>
      {admin ? (
        <Section title="Sources" id="sources">
          {sources.data?.length === 0 ? <p class="muted">No Git sources: files are applied from CI (<code>bosun config apply</code>, or POST /api/v1/config/apply).</p> : null}
          {(sources.data ?? []).map((source) => (
            <SourceCard key={source.id} source={source} act={act} />
          ))}
        </Section>
      ) : (
        <p class="muted" data-why-not>
          Git sources are set up and synced by admins of the whole organization; you see the drift of what you may read.
        </p>
      )}
    </main>
  );
}
