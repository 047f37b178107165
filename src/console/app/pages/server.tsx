import { useState } from 'preact/hooks';
import { api, get } from '../api';
import { FINISHED, type Server as ServerView, type ServerActivity } from '../api-types';
import { ErrorNote, Section, Status, useLoad, When } from '../components/common';
import { Table } from '../components/table';
import { session } from '../session';
import { StartConversation } from '../components/start-conversation';
import { FreezeNotices } from '../components/freeze-notices';

/** What touched the server lately: runs (its part of fleet runs too) and conversations. */
function Activity({ serverId }: { serverId: string }) {
  const activity = useLoad(() => get<ServerActivity[]>(`/api/v1/servers/${serverId}/activity?limit=20`), [serverId], {
    pollMs: 3000,
    poll: (items) => items.some((a) => !FINISHED.has(a.status)),
  });
  const href = (a: ServerActivity) =>
    a.kind === 'conversation' ? `/conversations/${a.id}` : `/deployments/${a.deployment_id}/runs/${a.id}${a.fleet ? `/targets/${serverId}` : ''}`;
  return (
    <Section title="Recent activity">
      <ErrorNote error={activity.error} />
      <Table
        rows={activity.data}
        rowKey={(a) => `${a.kind}-${a.id}`}
        empty="Nothing has run on this server yet."
        columns={[
          {
            head: 'What',
            cell: (a) => (
              <>
                <span class="muted small">{a.kind === 'run' ? (a.fleet ? 'fleet run' : 'run') : a.role === 'source' ? 'migration (source)' : 'conversation'}</span>{' '}
                <a href={href(a)}>{a.title}</a>
                {a.error ? <div class="muted small">{a.error}</div> : null}
              </>
            ),
          },
          { head: 'Status', cell: (a) => <Status value={a.status} /> },
          { head: 'By', cell: (a) => a.by },
          { head: 'When', cell: (a) => <When at={a.created_at} /> },
        ]}
      />
    </Section>
  );
}

/** How a server is reached: directly, or through its jump hosts in order (each a link to its page). */
function Route({ via }: { via: string[] }) {
  const hops = useLoad(() => Promise.all(via.map((id) => get<ServerView>(`/api/v1/servers/${id}`).catch(() => null))), [via.join(',')]);
  if (!via.length) return <span class="muted">directly</span>;
  return (
    <span data-route>
      through{' '}
      {via.map((id, index) => {
        const hop = hops.data?.[index];
        return (
          <span key={id}>
            {index ? ' → ' : ''}
            <a href={`/servers/${id}`}>{hop ? `${hop.title} (${hop.username}@${hop.host}:${hop.port})` : id}</a>
          </span>
        );
      })}{' '}
      <span class="muted">(jump hosts, as ssh -J)</span>
    </span>
  );
}

/** One server: its fingerprint, its pinned host key, and what to do when the key changed. */
export function Server({ serverId }: { serverId: string }) {
  const server = useLoad(() => get<ServerView>(`/api/v1/servers/${serverId}`), [serverId], {
    pollMs: 2000,
    poll: (s) => s.status === 'unverified' && !s.last_error,
  });
  const [error, setError] = useState<unknown>(null);
  const [confirmTrust, setConfirmTrust] = useState(false);
  const s = server.data;
  const keyChanged = !!s?.last_error && /host key/i.test(s.last_error);

  const verify = async (trustNewHostKey: boolean) => {
    setError(null);
    try {
      await api('POST', `/api/v1/servers/${serverId}/verify`, trustNewHostKey ? { trust_new_host_key: true } : {});
      setConfirmTrust(false);
      await server.reload();
    } catch (problem) {
      setError(problem);
    }
  };

  if (!s) return <main id="main">{server.error ? <ErrorNote error={server.error} /> : <p class="muted">Loading…</p>}</main>;
  return (
    <main id="main">
      <p class="crumbs">
        <a href="/servers">Servers</a> /
      </p>
      <h1>
        {s.title} <Status value={s.status} />
      </h1>
      <FreezeNotices freezes={s.freezes} />
      <ErrorNote error={error} />
      {s.last_error ? (
        <p class="error-note" role="alert">
          Last check: {s.last_error}
        </p>
      ) : null}
      <Section
        title="Server"
        actions={
          session.can('servers:write') ? (
            <button type="button" onClick={() => void verify(false)}>
              Verify again
            </button>
          ) : null
        }
      >
        <dl class="facts">
          <dt>Address</dt>
          <dd>
            <code>
              {s.username}@{s.host}:{s.port}
            </code>
          </dd>
          <dt>Authentication</dt>
          <dd>{s.auth_method === 'private_key' ? 'private key (stored encrypted, never shown)' : 'password (stored encrypted, never shown)'}</dd>
          <dt>Reached</dt>
          <dd>
            <Route via={s.via} />
          </dd>
          <dt>Tags</dt>
          <dd>{s.tags.length ? s.tags.map((tag) => <span class="tag">{tag}</span>) : <span class="muted">none</span>}</dd>
          <dt>Host key</dt>
          <dd>
            <code>{s.host_key_fingerprint ?? 'not pinned yet'}</code>
          </dd>
          <dt>System</dt>
          <dd>
            {s.fingerprint
              ? `${s.fingerprint.os?.name ?? ''} ${s.fingerprint.os?.version ?? ''}, kernel ${s.fingerprint.os?.kernel ?? '?'}, ${s.fingerprint.cpu_cores ?? '?'} cores, ${s.fingerprint.ram ?? '?'} RAM, ${s.fingerprint.disk ?? '?'} disk`
              : 'unknown until verified'}
          </dd>
          <dt>Verified</dt>
          <dd>
            <When at={s.verified_at} />
          </dd>
          <dt>Last check</dt>
          <dd>
            <When at={s.last_checked_at} />
          </dd>
        </dl>
      </Section>
      {keyChanged && session.can('servers:write') ? (
        <Section title="The host key changed">
          <p>
            The server answered with a different host key than the one pinned (<code>{s.host_key_fingerprint}</code>). That is expected after a
            reinstall or a key rotation — and is also what a machine impersonating this server would look like. Bosun runs nothing on it until
            you decide.
          </p>
          {confirmTrust ? (
            <p>
              <button type="button" class="danger" onClick={() => void verify(true)}>
                Yes, trust the key it presents now
              </button>{' '}
              <button type="button" onClick={() => setConfirmTrust(false)}>
                Cancel
              </button>
            </p>
          ) : (
            <button type="button" onClick={() => setConfirmTrust(true)}>
              Trust the new host key…
            </button>
          )}
        </Section>
      ) : null}
      {s.status === 'verified' ? <StartConversation chatable={{ type: 'server', id: s.id }} /> : null}
      <Activity serverId={serverId} />
    </main>
  );
}
