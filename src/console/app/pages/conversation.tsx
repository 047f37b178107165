// One conversation's page: the thread of instructions and the steps planned for each, live.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { CONVERSATION_ENDED, type Conversation as ConversationView } from '../api-types';
import { ErrorNote, Section, Status, When } from '../components/common';
import { ConversationStep } from '../components/conversation-step';
import { useServerTitles } from '../components/server-titles';
import { watchConversation } from '../live';
import { session } from '../session';

/** A conversation as a thread: each instruction, the steps planned for it with their risk and live output. */
export function Conversation({ conversationId }: { conversationId: string }) {
  const [conversation, setConversation] = useState<ConversationView | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => watchConversation(conversationId, setConversation, setError), [conversationId]);
  const title = useServerTitles();

  const act = async (method: string, path: string, body?: unknown) => {
    setBusy(true);
    setError(null);
    try {
      setConversation((await api<{ data: ConversationView }>(method, `/api/v1/conversations/${conversationId}${path}`, body)).data);
      return true;
    } catch (problem) {
      setError(problem);
      return false;
    } finally {
      setBusy(false);
    }
  };

  const c = conversation;
  if (!c) return <main id="main">{error ? <ErrorNote error={error} /> : <p class="muted">Loading…</p>}</main>;
  let number = 0;
  const numbered = new Map(c.steps.map((step) => [step.id, ++number]));
  const canWrite = session.can('conversations:write');
  return (
    <main id="main">
      <p class="crumbs">
        <a href="/conversations">Conversations</a> /{' '}
        {c.chatable_type === 'server' ? <a href={`/servers/${c.server_id}`}>{title(c.server_id)}</a> : <a href={`/migration-plans/${c.chatable_id}`}>migration plan</a>} /
      </p>
      <h1>
        Conversation {c.id.slice(-8)} <Status value={c.status} />
      </h1>
      <ErrorNote error={error} />
      {c.error ? (
        <p class="error-note" role="alert">
          {c.error}
        </p>
      ) : null}
      <Section
        title="Conversation"
        actions={
          <>
            {!CONVERSATION_ENDED.has(c.status) && canWrite ? (
              <button type="button" class="danger" disabled={busy} onClick={() => void act('POST', '/cancel')}>
                Cancel the conversation
              </button>
            ) : null}
            {c.temporal_ui_url ? (
              <a class="button" href={c.temporal_ui_url} target="_blank" rel="noreferrer">
                Open in Temporal
              </a>
            ) : null}
          </>
        }
      >
        <Facts conversation={c} title={title} />
      </Section>
      {c.messages.map((message) => {
        const steps = c.steps.filter((step) => step.message_id === message.id);
        return (
          <Section key={message.id} title={`“${message.text}”`}>
            <p class="muted small">
              <When at={message.created_at} /> · {message.planned ? `${steps.length} step${steps.length === 1 ? '' : 's'} planned` : 'being planned…'}
            </p>
            <ol class="run-steps">
              {steps.map((step) => (
                <ConversationStep key={step.id} step={step} number={numbered.get(step.id)!} conversation={c} onChanged={setConversation} />
              ))}
            </ol>
          </Section>
        );
      })}
      {canWrite && c.status !== 'cancelled' ? <FollowUp busy={busy} send={(message) => act('POST', '/messages', { message })} /> : null}
    </main>
  );
}

/** Who started it and when, on which servers (a migration's source → target), and whether every step waits for a person. */
function Facts({ conversation: c, title }: { conversation: ConversationView; title: (id: string | null | undefined) => string }) {
  return (
    <dl class="facts">
      <dt>Started by</dt>
      <dd>{c.created_by}</dd>
      <dt>Started</dt>
      <dd>
        <When at={c.created_at} />
      </dd>
      <dt>On</dt>
      <dd>
        {c.source_server_id ? (
          <>
            <a href={`/servers/${c.source_server_id}`}>{title(c.source_server_id)}</a> (source) →{' '}
          </>
        ) : null}
        <a href={`/servers/${c.server_id}`}>{title(c.server_id)}</a>
        {c.source_server_id ? ' (target)' : ''}
      </dd>
      <dt>Approval</dt>
      <dd>{c.require_approval ? 'every step waits for a person' : 'as the command policy says'}</dd>
    </dl>
  );
}

/** The next instruction, planned and run after the current steps. */
function FollowUp({ busy, send }: { busy: boolean; send: (message: string) => Promise<boolean> }) {
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    if (await send(String(new FormData(form).get('message') ?? ''))) form.reset();
  };
  return (
    <Section title="Follow up">
      <form class="grid-form" onSubmit={submit} aria-label="Follow up">
        <label class="wide">
          Next instruction
          <textarea name="message" rows={2} required maxLength={2000} placeholder="Now restart nginx" />
        </label>
        <div class="wide">
          <button type="submit" class="primary" disabled={busy}>
            Send
          </button>
          <span class="hint"> Planned and run after the current steps.</span>
        </div>
      </form>
    </Section>
  );
}
