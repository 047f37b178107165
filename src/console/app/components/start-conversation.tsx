// "Ask Bosun": a new conversation about a server or a migration plan.
import { useState } from 'preact/hooks';
import { api, get } from '../api';
import type { MigrationPlanListItem, ServerListItem } from '../api-types';
import { navigate } from '../router';
import { session } from '../session';
import { ErrorNote, Section, useLoad } from './common';

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
