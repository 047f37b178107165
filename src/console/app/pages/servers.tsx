import { useState } from 'preact/hooks';
import { api, get } from '../api';
import type { ServerListItem } from '../api-types';
import { ErrorNote, Section, Status, useLoad, When } from '../components/common';
import { Table } from '../components/table';
import { FreezeLine } from '../components/freeze-notices';
import { navigate } from '../router';
import { session } from '../session';

const STATUSES = ['verified', 'unverified', 'offline'];

/** Every server, filtered by tags and status (kept in the URL, so a filtered list can be shared). */
export function Servers() {
  const query = new URLSearchParams(location.search);
  const tags = query.getAll('tag');
  const status = query.get('status') ?? '';
  const list = useLoad(
    () => get<ServerListItem[]>(`/api/v1/servers?per_page=100&${query.toString()}`),
    [location.search],
    // A server being verified changes status by itself: look again until none is.
    { pollMs: 2000, poll: (servers) => servers.some((s) => s.status === 'unverified' && !s.last_error) },
  );
  const [adding, setAdding] = useState(false);

  const filter = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const next = new URLSearchParams();
    for (const tag of String(form.get('tags') ?? '').split(/[\s,]+/).filter(Boolean)) next.append('tag', tag);
    if (form.get('status')) next.set('status', String(form.get('status')));
    navigate(`/servers${next.toString() ? `?${next}` : ''}`);
  };

  return (
    <main id="main">
      <h1>Servers</h1>
      <form class="filters" onSubmit={filter} aria-label="Filter servers">
        <label>
          Tags <input name="tags" defaultValue={tags.join(' ')} placeholder="web eu" />
        </label>
        <label>
          Status{' '}
          <select name="status" defaultValue={status}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <button type="submit">Filter</button>
        {session.can('servers:write') ? (
          <button type="button" class="primary" onClick={() => setAdding(!adding)} aria-expanded={adding}>
            Add a server
          </button>
        ) : null}
        {session.can('servers:write') ? <a href="/servers/import">Import an inventory</a> : null}
      </form>
      {adding ? (
        <AddServer
          onAdded={() => {
            setAdding(false);
            void list.reload();
          }}
        />
      ) : null}
      <ErrorNote error={list.error} />
      <Section title={list.data ? `${list.data.length} server${list.data.length === 1 ? '' : 's'}` : 'Servers'}>
        <Table
          rows={list.data}
          rowKey={(server) => server.id}
          mark={(server) => ({ 'data-server': server.title })}
          empty="No server matches."
          columns={[
            { head: 'Server', cell: (server) => <a href={`/servers/${server.id}`}>{server.title}</a> },
            {
              head: 'Address',
              cell: (server) => (
                <code>
                  {server.username}@{server.host}:{server.port}
                </code>
              ),
            },
            {
              head: 'Status',
              cell: (server) => (
                <>
                  <Status value={server.status} />
                  {server.last_error ? <div class="muted small">{server.last_error}</div> : null}
                  {server.freezes.map((f) => (
                    <div key={`${f.id}-${f.starts_at}`} class={`small freeze-cell ${f.active_now ? 'frozen' : ''}`}>
                      <FreezeLine freeze={f} />
                    </div>
                  ))}
                </>
              ),
            },
            {
              head: 'Tags',
              cell: (server) =>
                server.tags.map((tag) => (
                  <a class="tag" href={`/servers?tag=${encodeURIComponent(tag)}`}>
                    {tag}
                  </a>
                )),
            },
            {
              head: <span title="When the server was added to Bosun">Added</span>,
              cell: (server) => <When at={server.created_at} />,
            },
          ]}
        />
      </Section>
    </main>
  );
}

/** The key is pasted or read from a file in the browser, sent once over this origin, and never shown again. */
function AddServer({ onAdded }: { onAdded: () => void }) {
  const [method, setMethod] = useState<'private_key' | 'password'>('private_key');
  // A jump host must be verified (its host key pinned): those are the ones offered.
  const hops = useLoad(() => get<ServerListItem[]>('/api/v1/servers?status=verified&per_page=100'), []);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const readKeyFile = async (event: Event) => {
    const file = (event.target as HTMLInputElement).files?.[0];
    if (file) ((event.target as HTMLInputElement).form!.elements.namedItem('private_key') as HTMLTextAreaElement).value = await file.text();
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const body: Record<string, unknown> = {
      title: text('title'),
      host: text('host'),
      port: Number(text('port') || 22),
      username: text('username'),
      auth_method: method,
      tags: text('tags').split(/[\s,]+/).filter(Boolean),
    };
    if (text('via')) body.via = [text('via')];
    if (method === 'private_key') {
      body.private_key = String(form.get('private_key') ?? '');
      if (text('passphrase')) body.passphrase = String(form.get('passphrase'));
    } else body.password = String(form.get('password') ?? '');
    setBusy(true);
    setError(null);
    try {
      await api('POST', '/api/v1/servers', body);
      formElement.reset();
      onAdded();
    } catch (problem) {
      setError(problem);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Section title="Add a server">
      <form class="grid-form" onSubmit={submit}>
        <label>
          Title <input name="title" required />
        </label>
        <label>
          Host <input name="host" required placeholder="10.0.0.5 or web-1.example.com" />
        </label>
        <label>
          Port <input name="port" type="number" min={1} max={65535} defaultValue="22" />
        </label>
        <label>
          User <input name="username" required />
        </label>
        <label>
          Tags <input name="tags" placeholder="web eu" />
        </label>
        <label>
          Jump host{' '}
          <select name="via">
            <option value="">none: connect directly</option>
            {(hops.data ?? []).map((hop) => (
              <option value={hop.id} key={hop.id}>
                {hop.title} ({hop.username}@{hop.host}:{hop.port})
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Authentication</legend>
          <label>
            <input type="radio" name="auth" checked={method === 'private_key'} onChange={() => setMethod('private_key')} /> Private key
          </label>
          <label>
            <input type="radio" name="auth" checked={method === 'password'} onChange={() => setMethod('password')} /> Password
          </label>
        </fieldset>
        {method === 'private_key' ? (
          <>
            <label class="wide">
              Private key (OpenSSH or PEM) <textarea name="private_key" rows={5} required autoComplete="off" spellcheck={false} placeholder="-----BEGIN OPENSSH PRIVATE KEY-----" />
            </label>
            <label>
              Or a key file <input type="file" onChange={readKeyFile} />
            </label>
            <label>
              Passphrase <input name="passphrase" type="password" autoComplete="off" />
            </label>
          </>
        ) : (
          <label>
            Password <input name="password" type="password" required autoComplete="off" />
          </label>
        )}
        <ErrorNote error={error} />
        <div class="wide">
          <button type="submit" class="primary" disabled={busy}>
            Add and verify
          </button>
          <span class="hint"> The key or password is encrypted at rest and never shown again.</span>
        </div>
      </form>
    </Section>
  );
}
