import { useState } from 'preact/hooks';
import { api, getAll } from '../api';
import type { Deployment, ServiceAccount } from '../api-types';
import { session } from '../session';
import { ErrorNote, submitted, useLoad } from './common';
import { browserZone } from './zoned';

/**
 * Adds a schedule to a deployment: when (a cron expression or an interval, in a time zone), the
 * service account its ticks run as, the deployment's parameters, a note. Naming a service account is
 * an administrator's (the API's rule); others are told who can.
 */
export function AddSchedule({ deploymentId, parameters, added }: { deploymentId: string; parameters: Deployment['parameters']; added: () => Promise<void> }) {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [kind, setKind] = useState<'cron' | 'every'>('cron');
  const admin = session.can('admin');
  const accounts = useLoad(() => (admin && open ? getAll<ServiceAccount>('/api/v1/service-accounts') : Promise.resolve([] as ServiceAccount[])), [admin, open]);
  if (!session.can('deployments:write')) return null;
  if (!admin) {
    return <p class="muted">A schedule runs as a service account, which an administrator names: ask one to add it here.</p>;
  }
  if (!open) {
    return (
      <p>
        <button type="button" onClick={() => setOpen(true)}>
          Add a schedule
        </button>
      </p>
    );
  }
  const add = (event: Event) => {
    const { field, form } = submitted(event);
    const values: Record<string, string> = {};
    for (const p of parameters) if (field(`param-${p.name}`) !== '') values[p.name] = field(`param-${p.name}`);
    setError(null);
    void (async () => {
      try {
        await api('POST', `/api/v1/deployments/${deploymentId}/schedules`, {
          name: field('name'),
          [kind]: field('when'),
          time_zone: field('time_zone'),
          run_as: field('run_as'),
          parameters: values,
          note: field('note') || null,
        });
        form.reset();
        setOpen(false);
        await added();
      } catch (problem) {
        setError(problem);
      }
    })();
  };
  return (
    <form class="grid-form" onSubmit={add} aria-label="Add a schedule">
      <ErrorNote error={error} />
      <label>
        Name
        <input name="name" required maxLength={64} placeholder="nightly" />
      </label>
      <fieldset class="inline-choice">
        <legend>Repeat</legend>
        <label>
          <input type="radio" name="kind" checked={kind === 'cron'} onChange={() => setKind('cron')} /> at times (cron)
        </label>
        <label>
          <input type="radio" name="kind" checked={kind === 'every'} onChange={() => setKind('every')} /> every interval
        </label>
      </fieldset>
      <label>
        {kind === 'cron' ? 'Cron expression' : 'Interval'}
        <input name="when" required placeholder={kind === 'cron' ? '30 2 * * 1-5' : '6h'} />
        <span class="hint">{kind === 'cron' ? 'five fields: minute hour day-of-month month day-of-week' : 'such as 15m, 6h or 1d'}</span>
      </label>
      <label>
        Time zone
        <input name="time_zone" required defaultValue={browserZone()} />
      </label>
      <label>
        Runs as
        <select name="run_as" required>
          {(accounts.data ?? []).map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </select>
        <span class="hint">the service account each run is triggered as; it must be allowed to run this deployment</span>
      </label>
      {parameters.map((p) => (
        <label key={p.name}>
          {p.name}
          {p.required ? ' (required)' : ''}
          <input name={`param-${p.name}`} type={p.secret ? 'password' : 'text'} autoComplete="off" required={p.required} placeholder={p.default ?? ''} />
        </label>
      ))}
      <label class="wide">
        Note
        <input name="note" maxLength={500} placeholder="why it runs at this time" />
      </label>
      <div class="wide">
        <button type="submit" class="primary">
          Add the schedule
        </button>{' '}
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
