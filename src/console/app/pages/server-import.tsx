import { useState } from 'preact/hooks';
import { api } from '../api';
import type { ImportDiff } from '../api-types';
import { ErrorNote, Section } from '../components/common';
import { Table } from '../components/table';

const FORMATS = [
  ['ansible-ini', 'Ansible inventory (INI)'],
  ['ansible-yaml', 'Ansible inventory (YAML)'],
  ['ssh-config', 'OpenSSH config'],
] as const;

const list = (items: string[]) => (items.length ? items.join(', ') : '—');
const shown = (value: unknown) => (Array.isArray(value) ? list(value as string[]) : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value));

/** The diff: one row per server, what the import does to it. */
function DiffTable({ diff }: { diff: ImportDiff }) {
  const rows = [
    ...diff.add.map((a) => ({ action: 'add', title: a.title, details: `${a.username}@${a.host}:${a.port} · tags ${list(a.tags)}${a.via.length ? ` · via ${list(a.via)}` : ''}` })),
    ...diff.change.map((c) => ({ action: 'change', title: c.title, details: Object.entries(c.fields).map(([field, { from, to }]) => `${field}: ${shown(from)} → ${shown(to)}`).join('; ') })),
    ...diff.unchanged.map((u) => ({ action: 'unchanged', title: u.title, details: '' })),
    ...diff.missing.map((m) => ({ action: 'missing', title: m.title, details: `${m.host} · ${diff.dry_run ? 'quarantined when applied' : 'quarantined'}` })),
  ];
  const { add, change, unchanged, missing } = diff.counts;
  return (
    <>
      <p role="status">
        {diff.dry_run ? 'Preview, nothing changed' : 'Applied'}: {add} to add, {change} to change, {unchanged} unchanged, {missing} missing
        {diff.verification ? ` · verifying ${diff.verification.servers} servers, ${diff.verification.concurrency} at a time` : ''}
      </p>
      <Table
        label="Import diff"
        rows={rows}
        rowKey={(r) => `${r.action}-${r.title}`}
        mark={(r) => ({ 'data-action': r.action })}
        columns={[
          { head: 'Action', cell: (r) => r.action },
          { head: 'Server', cell: (r) => r.title },
          { head: 'Details', cell: (r) => r.details },
        ]}
      />
      {diff.warnings.length ? (
        <ul aria-label="Warnings">
          {diff.warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      ) : null}
    </>
  );
}

/** Import an inventory: preview its diff (a dry run), then apply exactly the request previewed. */
export function ServerImport() {
  const [diff, setDiff] = useState<ImportDiff | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // What the preview shown was made from: applying sends exactly that; editing the form drops it.
  const [previewed, setPreviewed] = useState<ReturnType<typeof requestOf> | null>(null);

  /** The request as the form has it now (a dry run). */
  const requestOf = (form: HTMLFormElement) => {
    const data = new FormData(form);
    const field = (name: string) => String(data.get(name) ?? '').trim();
    const tags = field('tags').split(/[\s,]+/).filter(Boolean);
    const key = field('private_key');
    return {
      format: field('format'),
      source: field('source'),
      content: String(data.get('content') ?? ''),
      defaults: { ...(field('username') ? { username: field('username') } : {}), ...(key ? { auth_method: 'private_key', private_key: `${key}\n` } : {}), ...(tags.length ? { tags } : {}) },
      dry_run: true,
    };
  };

  const send = async (body: ReturnType<typeof requestOf>) => {
    setBusy(true);
    setError(null);
    try {
      setDiff((await api<{ data: ImportDiff }>('POST', '/api/v1/servers/import', body)).data);
      setPreviewed(body.dry_run ? body : null);
    } catch (problem) {
      setError(problem);
      setDiff(null);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main">
      <h1>Import servers</h1>
      <p class="muted">
        From an Ansible inventory or an ssh config. Preview first: nothing changes until you apply. Servers a previous import of the same source made that the inventory no
        longer lists are quarantined (kept, and left out of tag targeting until the tag is removed).
      </p>
      <Section title="Inventory">
        <form
          class="grid-form top-aligned"
          aria-label="Import an inventory"
          onInput={() => {
            setPreviewed(null);
            setDiff(null);
          }}
          onSubmit={(event) => {
            event.preventDefault();
            void send(requestOf(event.currentTarget as HTMLFormElement));
          }}
        >
          <label>
            Format{' '}
            <select name="format">
              {FORMATS.map(([value, label]) => (
                <option value={value}>{label}</option>
              ))}
            </select>
          </label>
          <label>
            Source <input name="source" required placeholder="prod-inventory" />
          </label>
          <label class="wide">
            Content <textarea name="content" rows={12} required spellcheck={false} />
          </label>
          <label>
            Default user <input name="username" placeholder="deploy" />
            <span class="muted small">
              for hosts whose inventory names no user (<code>ansible_user</code>, <code>User</code>)
            </span>
          </label>
          <label class="wide">
            Private key <textarea name="private_key" rows={4} spellcheck={false} placeholder="for the servers to add" />
          </label>
          <label>
            Tags <input name="tags" placeholder="imported" />
          </label>
          <div class="actions wide">
            <button type="submit" disabled={busy}>
              Preview
            </button>
            {previewed ? (
              <button type="button" class="primary" disabled={busy} onClick={() => void send({ ...previewed, dry_run: false })}>
                Apply this import
              </button>
            ) : null}
          </div>
        </form>
      </Section>
      <ErrorNote error={error} />
      {diff ? (
        <Section title={diff.dry_run ? 'Preview' : 'Applied'}>
          <DiffTable diff={diff} />
        </Section>
      ) : null}
    </main>
  );
}
