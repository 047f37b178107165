import { useState } from 'preact/hooks';
import { api, get } from '../api';
import type { CreatedNotificationChannel, NotificationChannel, NotificationDelivery, Page } from '../api-types';
import { ErrorNote, Section, submitted, useChanges, useLoad, When } from '../components/common';
import { useConfigChanges } from '../config-changes';
import { attemptsOf, DeliveryState, NextAttempt } from '../components/delivery-progress';
import { Table } from '../components/table';
import { EVENT_TYPES } from '../../../domain/notifications/event-types';
import { ChangeButton, ManagedNote, managedText } from '../components/managed';

/** Notification channels: each with its events and state; an admin adds, tests, enables and deletes them. */
export function NotificationChannels() {
  const channels = useLoad(() => get<NotificationChannel[]>('/api/v1/notification-channels'), []);
  const { error, confirm, setConfirm, act } = useChanges(channels.reload);
  const [created, setCreated] = useState<CreatedNotificationChannel | null>(null);

  const add = async (event: Event) => {
    const { field, all, form } = submitted(event);
    const made = await act(async () => {
      const tags = field('tags') ? field('tags').split(',').map((t) => t.trim()).filter(Boolean) : null;
      const body = { name: field('name'), type: field('type'), url: field('url'), events: all('events'), filter: { tags, only_final_failure: field('only_final_failure') === 'on' } };
      setCreated((await api<{ data: CreatedNotificationChannel }>('POST', '/api/v1/notification-channels', body)).data);
    });
    if (made) form.reset();
  };

  return (
    <main id="main">
      <h1>Notifications</h1>
      <p class="muted">Channels are told of the events they subscribe to: signed webhooks (Standard Webhooks) or Slack messages, retried for 24 hours, in order per run.</p>
      <ErrorNote error={channels.error ?? error} />
      {created ? (
        <Section title={`Channel “${created.name}” added`}>
          <p class="notice">Its signing secret, shown this once: give it to the receiver to verify each webhook’s signature.</p>
          <p class="token-once">
            <code aria-label="The signing secret">{created.secret}</code>{' '}
            <button type="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </p>
        </Section>
      ) : null}
      <Section title={channels.data ? `${channels.data.length} channel${channels.data.length === 1 ? '' : 's'}` : 'Channels'}>
        <Table
          caption="Notification channels"
          rows={channels.data}
          rowKey={(c) => c.id}
          mark={(c) => ({ 'data-channel': c.name })}
          columns={[
            {
              head: 'Name',
              class: 'channel-name',
              cell: (c) => (
                <>
                  <a href={`/notifications/${c.id}`}>{c.name}</a>
                  <div class="muted small">{c.url}</div>
                  {c.managed_by ? <div class="muted small">{managedText(c.managed_by)}</div> : null}
                </>
              ),
            },
            { head: 'Type', cell: (c) => c.type },
            { head: 'Events', cell: (c) => c.events.join(', '), class: 'small' },
            { head: 'State', cell: (c) => (c.enabled ? 'enabled' : <span class="warning">disabled: {c.disabled_reason}</span>) },
          ]}
          actions={{
            cell: (c) => (
              <>
                <button type="button" onClick={() => void act(() => api('POST', `/api/v1/notification-channels/${c.id}/test`))} aria-label={`Send a test to ${c.name}`}>
                  Send a test
                </button>{' '}
                {c.enabled ? null : (
                  <ChangeButton managedBy={c.managed_by} onClick={() => void act(() => api('PATCH', `/api/v1/notification-channels/${c.id}`, { enabled: true }))} label={`Enable ${c.name}`}>
                    Enable
                  </ChangeButton>
                )}{' '}
                {confirm === c.id ? (
                  <button type="button" class="danger" onClick={() => void act(() => api('DELETE', `/api/v1/notification-channels/${c.id}`))}>
                    Yes, delete {c.name}
                  </button>
                ) : (
                  <ChangeButton managedBy={c.managed_by} onClick={() => setConfirm(c.id)} label={`Delete ${c.name}`}>
                    Delete…
                  </ChangeButton>
                )}
              </>
            ),
          }}
        />
      </Section>
      <Section title="Add a channel">
        <form class="grid-form" onSubmit={(e) => void add(e)} aria-label="Add a channel">
          <label>
            Name <input name="name" required maxLength={64} />
          </label>
          <label>
            Type
            <select name="type">
              <option value="webhook">webhook</option>
              <option value="slack">slack</option>
            </select>
          </label>
          <label class="wide">
            URL <input name="url" required type="url" placeholder="https://hooks.example.com/bosun" />
          </label>
          <fieldset class="wide">
            <legend>Events</legend>
            {EVENT_TYPES.map((type) => (
              <label key={type}>
                <input type="checkbox" name="events" value={type} defaultChecked={type === 'run.failed'} /> {type}
              </label>
            ))}
          </fieldset>
          <label>
            Only servers tagged <input name="tags" placeholder="prod, web" />
          </label>
          <label class="inline">
            <input type="checkbox" name="only_final_failure" /> Only a run’s final failure
          </label>
          <div class="wide">
            <button type="submit" class="primary">
              Add the channel
            </button>
          </div>
        </form>
      </Section>
    </main>
  );
}

/** One channel's deliveries, newest first, with their attempts; any can be sent again. */
export function NotificationChannelPage({ channelId }: { channelId: string }) {
  const channel = useLoad(() => get<NotificationChannel>(`/api/v1/notification-channels/${channelId}`), [channelId]);
  useConfigChanges(channel.reload);
  const deliveries = useLoad(() => api<Page<NotificationDelivery>>('GET', `/api/v1/notification-channels/${channelId}/deliveries?per_page=50`), [channelId], {
    pollMs: 3000,
    poll: (page) => page.data.some((d) => d.status === 'pending' || d.status === 'delivering'),
  });
  const { error, act } = useChanges(deliveries.reload);
  const c = channel.data;
  return (
    <main id="main">
      <h1>{c ? `Channel ${c.name}` : 'Channel'}</h1>
      {c ? <ManagedNote managedBy={c.managed_by} /> : null}
      <ErrorNote error={channel.error ?? deliveries.error ?? error} />
      {c ? (
        <p class="muted">
          {c.type} to {c.url} · {c.enabled ? 'enabled' : `disabled: ${c.disabled_reason ?? ''}`}
        </p>
      ) : null}
      <Section title="Deliveries" actions={<button type="button" onClick={() => void deliveries.reload()}>Refresh</button>}>
        <Table
          caption="Deliveries"
          rows={deliveries.data?.data}
          rowKey={(d) => d.id}
          mark={(d) => ({ 'data-delivery': d.id })}
          columns={[
            {
              head: 'Event',
              cell: (d) => (
                <>
                  {d.event.type} <span class="muted small">{d.event.subject.kind} {d.event.subject.id}</span>
                  <div class="muted small">
                    <When at={d.event.at} /> · <code>{d.webhook_id}</code>
                  </div>
                </>
              ),
            },
            { head: 'Status', cell: (d) => <DeliveryState delivery={d} />, class: 'delivery-state' },
            { head: 'Attempts', cell: (d) => <Attempts delivery={d} />, class: 'delivery-attempts' },
            { head: 'Next attempt', cell: (d) => <NextAttempt delivery={d} /> },
          ]}
          actions={{
            cell: (d) => (
              <button type="button" onClick={() => void act(() => api('POST', `/api/v1/notification-channels/${channelId}/deliveries/${d.id}/redeliver`))} aria-label={`Redeliver ${d.event.type} ${d.id}`}>
                Redeliver
              </button>
            ),
          }}
        />
      </Section>
    </main>
  );
}

/** A delivery's attempts, folded: this round's out of the policy's maximum; each one's time, and the answer's code and first bytes or the error. */
function Attempts({ delivery: d }: { delivery: NotificationDelivery }) {
  return (
    <details>
      <summary data-attempts>
        {attemptsOf(d)}
        {d.attempt_count > d.round_attempts ? <span class="muted small"> ({d.attempt_count} in all rounds)</span> : null}
      </summary>
      <ul class="small">
        {d.attempts.map((a, i) => (
          <li key={i}>
            <When at={a.at} />: {a.response_code ?? a.error} {a.response_body ? <code>{a.response_body}</code> : null}
          </li>
        ))}
      </ul>
    </details>
  );
}
