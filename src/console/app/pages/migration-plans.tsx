import { useState } from 'preact/hooks';
import { api, get } from '../api';
import type { ConversationListItem, MigrationPlan as MigrationPlanView, MigrationPlanListItem, Page, ServerListItem } from '../api-types';
import { ErrorNote, Section, Status, useLoad, When } from '../components/common';
import { Table } from '../components/table';
import { navigate } from '../router';
import { session } from '../session';
import { useServerTitles } from '../components/server-titles';
import { StartConversation } from '../components/start-conversation';

/** The organization's migration plans: a source server, a target server, and notes for the planner. */
export function MigrationPlans() {
  const list = useLoad(() => get<MigrationPlanListItem[]>('/api/v1/migration-plans?per_page=100'), []);
  const title = useServerTitles();
  const [adding, setAdding] = useState(false);
  return (
    <main id="main">
      <h1>Migration plans</h1>
      {session.can('conversations:write') ? (
        <p>
          <button type="button" class="primary" onClick={() => setAdding(!adding)} aria-expanded={adding}>
            New migration plan
          </button>
        </p>
      ) : null}
      {adding ? <NewPlan /> : null}
      <ErrorNote error={list.error} />
      <Section title={list.data ? `${list.data.length} plan${list.data.length === 1 ? '' : 's'}` : 'Plans'}>
        <Table
          rows={list.data}
          rowKey={(p) => p.id}
          empty="No migration plan yet."
          columns={[
            { head: 'Plan', cell: (p) => <a href={`/migration-plans/${p.id}`}>{p.title}</a> },
            { head: 'From', cell: (p) => title(p.source_server_id) },
            { head: 'To', cell: (p) => title(p.target_server_id) },
            { head: 'Updated', cell: (p) => <When at={p.updated_at} /> },
          ]}
        />
      </Section>
    </main>
  );
}

function NewPlan() {
  const servers = useLoad(() => get<ServerListItem[]>('/api/v1/servers?per_page=100'), []);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setError(null);
    try {
      const created = await api<{ data: { id: string } }>('POST', '/api/v1/migration-plans', {
        title: String(form.get('title') ?? ''),
        source_server_id: String(form.get('source') ?? ''),
        target_server_id: String(form.get('target') ?? ''),
        notes: String(form.get('notes') ?? ''),
      });
      navigate(`/migration-plans/${created.data.id}`);
    } catch (problem) {
      setError(problem);
    }
  };
  const options = (servers.data ?? []).map((s) => <option value={s.id}>{s.title}</option>);
  return (
    <Section title="New migration plan">
      <form class="grid-form" onSubmit={submit}>
        <label>
          Title <input name="title" required />
        </label>
        <label>
          From (source) <select name="source">{options}</select>
        </label>
        <label>
          To (target) <select name="target">{options}</select>
        </label>
        <label class="wide">
          Notes for the planner <textarea name="notes" rows={3} placeholder="Site files live in /var/www/shop; the database is PostgreSQL 15." />
        </label>
        <ErrorNote error={error} />
        <div class="wide">
          <button type="submit" class="primary">
            Create
          </button>
        </div>
      </form>
    </Section>
  );
}

/** A migration plan: its two servers, its conversations (each a thread with its transfers' progress), and a new one. */
export function MigrationPlan({ planId }: { planId: string }) {
  const plan = useLoad(() => get<MigrationPlanView>(`/api/v1/migration-plans/${planId}`), [planId]);
  const conversations = useLoad(
    () => api<Page<ConversationListItem>>('GET', `/api/v1/conversations?chatable_type=migration_plan&chatable_id=${planId}&per_page=50`),
    [planId],
    { pollMs: 3000, poll: (page) => page.data.some((c) => !['completed', 'failed', 'cancelled'].includes(c.status)) },
  );
  const p = plan.data;
  if (!p) return <main id="main">{plan.error ? <ErrorNote error={plan.error} /> : <p class="muted">Loading…</p>}</main>;
  const server = (s: MigrationPlanView['source'], id: string) =>
    s ? (
      <>
        <a href={`/servers/${s.id}`}>{s.title}</a> <code>{s.host}</code> <Status value={s.status} /> {s.os ?? ''}
      </>
    ) : (
      <span class="muted">deleted ({id.slice(-8)})</span>
    );
  return (
    <main id="main">
      <p class="crumbs">
        <a href="/migration-plans">Migration plans</a> /
      </p>
      <h1>{p.title}</h1>
      <Section title="Plan">
        <dl class="facts">
          <dt>From (source)</dt>
          <dd>{server(p.source, p.source_server_id)}</dd>
          <dt>To (target)</dt>
          <dd>{server(p.target, p.target_server_id)}</dd>
          <dt>Notes</dt>
          <dd class="pre">{p.notes || <span class="muted">none</span>}</dd>
        </dl>
      </Section>
      <StartConversation chatable={{ type: 'migration_plan', id: p.id }} />
      <Section title="Conversations">
        <ErrorNote error={conversations.error} />
        <ul class="plain">
          {(conversations.data?.data ?? []).map((c) => (
            <li key={c.id}>
              <a href={`/conversations/${c.id}`}>{c.id.slice(-8)}</a> <Status value={c.status} /> <When at={c.created_at} />
            </li>
          ))}
        </ul>
        {conversations.data?.data.length === 0 ? <p class="muted">None yet: ask Bosun above, e.g. “copy /var/www to the new server”.</p> : null}
      </Section>
    </main>
  );
}
