// A Git source's state on the Config page (issue 38): what it applied, whether it keeps up, and what to do when it does not.
import { api } from '../api';
import type { ConfigSource } from '../api-types';
import { session } from '../session';
import { When } from './common';

/** In sync, drifted, failing, or waiting for its host key: one word, said in text (never colour alone). */
export function sourceState(source: ConfigSource): 'waiting for a host key' | 'failing' | 'drifted' | 'in sync' | 'not synced yet' {
  const status = source.status;
  if (status.offered_host_key) return 'waiting for a host key';
  if (status.last_error) return 'failing';
  if (status.drift.length) return 'drifted';
  return status.synced_at ? 'in sync' : 'not synced yet';
}

const STATE_CLASS = { 'waiting for a host key': 'state-waiting', failing: 'state-failing', drifted: 'state-waiting', 'in sync': 'state-ok', 'not synced yet': '' } as const;

/** The revision as Git shows it (7 digits), linked to the commit when the source has a web URL. */
function Revision({ source }: { source: ConfigSource }) {
  const revision = source.status.revision_applied;
  if (!revision) return <span class="muted">none yet</span>;
  const short = <code>{revision.slice(0, 7)}</code>;
  return source.web_url ? <a href={`${source.web_url.replace(/\/$/, '')}/commit/${revision}`}>{short}</a> : short;
}

/** One source: repository, ref and path, revision, last sync, state with what to do, and its last plan. */
export function SourceCard({ source, act }: { source: ConfigSource; act: (call: () => Promise<unknown>) => Promise<boolean> }) {
  const { status } = source;
  const state = sourceState(source);
  const admin = session.can('admin');
  const sync = (trust: boolean) => act(() => api('POST', `/api/v1/config/sources/${source.id}/sync`, trust ? { trust_new_host_key: true } : {}));
  const plan = status.last_plan;
  return (
    <section class="panel" aria-label={`Source ${source.name}`} data-config-source={source.name} data-state={state}>
      <header class="panel-head">
        <h3>{source.name}</h3>
        <div class="actions">
          {admin ? (
            <button type="button" onClick={() => void sync(false)}>
              Sync now
            </button>
          ) : null}
        </div>
      </header>
      <dl class="facts">
        <dt>Repository</dt>
        <dd class="wrap">
          <code>{source.git.url}</code> at <code>{source.git.ref}</code>
          {source.git.path ? (
            <>
              , folder <code>{source.git.path}</code>
            </>
          ) : null}
        </dd>
        <dt>Revision applied</dt>
        <dd>
          <Revision source={source} />
        </dd>
        <dt>Last sync</dt>
        <dd>{status.synced_at ? <When at={status.synced_at} /> : <span class="muted">never</span>}</dd>
        <dt>State</dt>
        <dd>
          <strong class={`status ${STATE_CLASS[state]}`} data-source-state>
            {state}
          </strong>
          {state === 'drifted' ? <span class="muted small"> ({status.drift.length} changed since by another path: below)</span> : null}
        </dd>
      </dl>
      {status.last_error && !status.offered_host_key ? (
        <p class="error-note wrap" data-last-error>
          The last sync applied nothing: {status.last_error.message} (<When at={status.last_error.at} />)
        </p>
      ) : null}
      {status.offered_host_key ? (
        <div class="notice" data-offered-host-key>
          <p>
            The repository’s host offered a key this source has not pinned: <code class="wrap">{status.offered_host_key.fingerprint}</code>. Check it with the host’s owner before trusting it.
          </p>
          {admin ? (
            <button type="button" onClick={() => void sync(true)}>
              Trust this key and sync
            </button>
          ) : null}
        </div>
      ) : null}
      {plan ? (
        <div data-last-plan>
          <p>
            Last plan{plan.revision ? <> at <code>{plan.revision.slice(0, 7)}</code></> : null} (<When at={plan.at} />): {plan.create} to create, {plan.update} to update, {plan.delete} to delete,{' '}
            {plan.unchanged} unchanged{plan.error_count ? <strong>, {plan.error_count} error{plan.error_count === 1 ? '' : 's'}</strong> : null}.
          </p>
          {plan.errors.length ? (
            <ul class="plan-errors" aria-label={`Errors of ${source.name}'s last plan`}>
              {plan.errors.map((line) => (
                <li key={line}>
                  <code class="wrap">{line}</code>
                </li>
              ))}
              {plan.error_count > plan.errors.length ? <li class="muted">and {plan.error_count - plan.errors.length} more</li> : null}
            </ul>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
