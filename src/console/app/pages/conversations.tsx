// The conversations' list, with Ask Bosun above it.
import { api } from '../api';
import { CONVERSATION_ENDED, type ConversationListItem, type Page } from '../api-types';
import { ErrorNote, Section, Status, useLoad, When } from '../components/common';
import { useServerTitles } from '../components/server-titles';
import { StartConversation } from '../components/start-conversation';
import { Table } from '../components/table';

/** Every conversation of the organization, newest first. */
export function Conversations() {
  const list = useLoad(() => api<Page<ConversationListItem>>('GET', '/api/v1/conversations?per_page=50'), [], {
    pollMs: 3000,
    poll: (page) => page.data.some((c) => !CONVERSATION_ENDED.has(c.status)),
  });
  const title = useServerTitles();
  return (
    <main id="main">
      <h1>Conversations</h1>
      <StartConversation />
      <ErrorNote error={list.error} />
      <Section title={list.data ? `${list.data.meta.total} conversation${list.data.meta.total === 1 ? '' : 's'}` : 'Conversations'}>
        <Table
          rows={list.data?.data}
          rowKey={(c) => c.id}
          empty="No conversation yet."
          columns={[
            { head: 'Conversation', cell: (c) => <a href={`/conversations/${c.id}`}>{c.id.slice(-8)}</a> },
            {
              head: 'About',
              cell: (c) =>
                c.chatable_type === 'server' ? (
                  <a href={`/servers/${c.server_id}`}>{title(c.server_id)}</a>
                ) : (
                  <a href={`/migration-plans/${c.chatable_id}`}>migration plan → {title(c.server_id)}</a>
                ),
            },
            { head: 'Status', cell: (c) => <Status value={c.status} /> },
            { head: 'Started', cell: (c) => <When at={c.created_at} /> },
          ]}
        />
      </Section>
    </main>
  );
}
