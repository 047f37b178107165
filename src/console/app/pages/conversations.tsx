import { useEffect, useState } from 'preact/hooks';
import { api, get } from '../api';
import type { Conversation as ConversationView, ConversationListItem, ConversationStep, MigrationPlanListItem, Page, ServerListItem } from '../api-types';
import { ErrorNote, Section, Status, useLoad, When } from '../components/common';
import { WholeLog } from '../components/whole-log';
import { watchConversation, type Streamed } from '../live';
import { navigate } from '../router';
import { session } from '../session';

const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** Server titles by id, for pages that list things naming servers by id. */
export function useServerTitles() {
  const servers = useLoad(() => get<ServerListItem[]>('/api/v1/servers?per_page=100'), []);
  return (id: string | null | undefined) => (id ? (servers.data?.find((s) => s.id === id)?.title ?? id.slice(-8)) : '—');
}

/**
 * Starts a conversation: about the given server or plan, or about one picked from the lists. The
 * instruction is plain English; the plan of steps appears on the conversation's page.
 */
export function StartConversation({ chatable }: { chatable?: { type: 'server' | 'migration_plan'; id: string } }) {
  const servers = useLoad(() => (chatable ? Promise.resolve([]) : get<ServerListItem[]>('/api/v1/servers?per_page=100')), [chatable?.id]);
  const plans = useLoad(() => (chatable ? Promise.resolve([]) : get<MigrationPlanListItem[]>('/api/v1/migration-plans?per_page=100')), [chatable?.id]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  if (!session.can('conversations:write')) return null;

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const [type, id] = chatable ? [chatable.type, chatable.id] : String(form.get('about') ?? '').split(':');
    setBusy(true);
    setError(null);
    try {
      const started = await api<{ data: { id: string } }>('POST', '/api/v1/conversations', {
        chatable_type: type,
        chatable_id: id,
        message: String(form.get('message') ?? ''),
        require_approval: form.get('require_approval') === 'on',
      });
      navigate(`/conversations/${started.data.id}`);
    } catch (problem) {
      setError(problem);
      setBusy(false);
    }
  };

  return (
    <Section title="Ask Bosun">
      <form class="grid-form" onSubmit={submit} aria-label="Start a conversation">
        {chatable ? null : (
          <label>
            About
            <select name="about" required>
              {(servers.data ?? []).map((s) => (
                <option value={`server:${s.id}`}>server {s.title}</option>
              ))}
              {(plans.data ?? []).map((p) => (
                <option value={`migration_plan:${p.id}`}>migration plan {p.title}</option>
              ))}
            </select>
          </label>
        )}
        <label class="wide">
          Instruction
          <textarea name="message" rows={2} required maxLength={2000} placeholder="Show the last 50 errors of nginx" />
        </label>
        <label class="inline">
          <input type="checkbox" name="require_approval" /> Ask me before every step
        </label>
        <ErrorNote error={error} />
        <div class="wide">
          <button type="submit" class="primary" disabled={busy}>
            Plan and run
          </button>
          <span class="hint"> Steps are checked against the organization’s command policy; risky ones wait for a person.</span>
        </div>
      </form>
    </Section>
  );
}

/** Every conversation of the organization, newest first. */
export function Conversations() {
  const list = useLoad(() => api<Page<ConversationListItem>>('GET', '/api/v1/conversations?per_page=50'), [], {
    pollMs: 3000,
    poll: (page) => page.data.some((c) => !ENDED.has(c.status)),
  });
  const title = useServerTitles();
  return (
    <main id="main">
      <h1>Conversations</h1>
      <StartConversation />
      <ErrorNote error={list.error} />
      <Section title={list.data ? `${list.data.meta.total} conversation${list.data.meta.total === 1 ? '' : 's'}` : 'Conversations'}>
        <table>
          <thead>
            <tr>
              <th>Conversation</th>
              <th>About</th>
              <th>Status</th>
              <th>Started</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.data ?? []).map((c) => (
              <tr key={c.id}>
                <td>
                  <a href={`/conversations/${c.id}`}>{c.id.slice(-8)}</a>
                </td>
                <td>
                  {c.chatable_type === 'server' ? (
                    <a href={`/servers/${c.server_id}`}>{title(c.server_id)}</a>
                  ) : (
                    <a href={`/migration-plans/${c.chatable_id}`}>migration plan → {title(c.server_id)}</a>
                  )}
                </td>
                <td>
                  <Status value={c.status} />
                </td>
                <td>
                  <When at={c.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.data?.data.length === 0 ? <p class="muted">No conversation yet.</p> : null}
      </Section>
    </main>
  );
}

/** The last "moved X of Y (NN%), R" line a transfer wrote: its progress. */
function transferProgress(log: string): { percent: number; text: string } | null {
  const lines = log.match(/^moved .*\((\d{1,3})%\).*$/gm);
  const last = lines?.[lines.length - 1];
  if (!last) return null;
  return { percent: Number(/\((\d{1,3})%\)/.exec(last)![1]), text: last };
}

function Step({ step, number, conversation, onChanged }: { step: ConversationStep; number: number; conversation: ConversationView; onChanged: (c: ConversationView) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const waiting = step.status === 'pending' && step.approval !== null && step.approval.decision === null && conversation.status === 'awaiting_approval';
  const moved = step.transfer ? transferProgress(step.execution_log) : null;
  // Done: the whole of it, said by the transfer's own summary line rather than its last progress line.
  const summary = step.status === 'completed' ? step.execution_log.match(/^(?:verified|transferred|moved) .*$/gm)?.pop() : undefined;
  const progress = moved && step.status === 'completed' ? { percent: 100, text: summary ?? 'done' } : moved;

  const decide = async (action: 'approve' | 'reject') => {
    setBusy(true);
    setError(null);
    try {
      onChanged((await api<{ data: ConversationView }>('POST', `/api/v1/conversations/${conversation.id}/steps/${step.id}/${action}`)).data);
    } catch (problem) {
      setError(problem);
    } finally {
      setBusy(false);
    }
  };

  return (
    <li class={`run-step${waiting ? ' waiting' : ''}`} data-step={step.title}>
      <h3>
        <span class="step-no">{number}</span> {step.title} <Status value={step.status} /> <span class={`risk risk-${step.risk}`}>{step.risk}</span>
        <span class="muted small">{step.exit_code !== null ? ` exit ${step.exit_code}` : ''}</span>
      </h3>
      <code class="command">{step.command}</code>
      {step.approval?.decision ? (
        <p class="small">
          <Status value={step.approval.decision} /> by {step.approval.decided_by} <When at={step.approval.decided_at} />
        </p>
      ) : null}
      {waiting && session.can('conversations:write') && session.get()?.identity.type === 'person' ? (
        <div class="approval" role="group" aria-label={`Decide on step ${number}`}>
          <p>
            This step waits for a person: it is <strong>{step.risk}</strong>. Read the command above before deciding.
          </p>
          <button type="button" class="primary" disabled={busy} onClick={() => void decide('approve')}>
            Approve and run
          </button>{' '}
          <button type="button" class="danger" disabled={busy} onClick={() => void decide('reject')}>
            Reject
          </button>
          <ErrorNote error={error} />
        </div>
      ) : waiting ? (
        <p class="warning">Waits for a person with the conversations:write scope to approve or reject it (a service account cannot).</p>
      ) : null}
      {progress ? (
        <div class="progress">
          <progress max={100} value={progress.percent} aria-label={`Transfer of step ${number}`} /> <span class="small">{progress.text}</span>
        </div>
      ) : null}
      {step.status !== 'pending' || step.execution_log ? (
        <WholeLog
          path={`/api/v1/conversations/${conversation.id}/steps/${step.id}/log`}
          anchor={String(number)}
          label={`Output of ${step.title}`}
          version={`${step.status}:${(step as Streamed).streamed ?? step.execution_log.length}`}
          live={step.status === 'running'}
        />
      ) : null}
    </li>
  );
}

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
  const followUp = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const message = String(new FormData(form).get('message') ?? '');
    if (await act('POST', '/messages', { message })) form.reset();
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
            {!ENDED.has(c.status) && canWrite ? (
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
                <Step key={step.id} step={step} number={numbered.get(step.id)!} conversation={c} onChanged={setConversation} />
              ))}
            </ol>
          </Section>
        );
      })}
      {canWrite && c.status !== 'cancelled' ? (
        <Section title="Follow up">
          <form class="grid-form" onSubmit={followUp} aria-label="Follow up">
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
      ) : null}
    </main>
  );
}
