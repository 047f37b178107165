// The audit trail's filters: names typed with suggestions (people, service accounts, servers, actions), sent as ids.
import { useEffect, useState } from 'preact/hooks';
import { get } from '../api';
import { submitted, useLoad } from './common';

/** What GET /api/v1/audit/choices offers. */
interface AuditChoices {
  actors: { type: 'person' | 'service_account'; id: string; name: string }[];
  servers: { id: string; name: string }[];
  actions: string[];
}

export const AUDIT_FILTERS = ['actor', 'action', 'server', 'since', 'until'] as const;
export type AuditFilters = Partial<Record<(typeof AUDIT_FILTERS)[number], string>>;

const isId = (text: string) => /^[0-9a-f]{24}$/i.test(text);

/** An ISO time as a datetime-local input shows it (the browser's zone). */
const localInput = (iso: string | undefined) => {
  if (!iso) return undefined;
  const at = new Date(iso);
  return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

/** An input's text for a URL's id: its name once the choices are read, unless the person typed meanwhile. */
function useNameOf(id: string | undefined, named: { id: string; name: string }[]) {
  const [text, setText] = useState(id ?? '');
  const name = named.find((choice) => choice.id === id)?.name;
  useEffect(() => {
    if (name) setText((typed) => (typed === id ? name : typed));
  }, [name]);
  return { value: text, onInput: (event: Event) => setText((event.currentTarget as HTMLInputElement).value) };
}

/** The filter form: a name becomes its id before the query (the URL keeps ids, so it reads the same for anyone). */
export function AuditFilterForm({ filters, onFilter }: { filters: AuditFilters; onFilter: (filters: AuditFilters) => void }) {
  const choices = useLoad(() => get<AuditChoices>('/api/v1/audit/choices'), []);
  const [problem, setProblem] = useState<string | null>(null);
  const actors = choices.data?.actors ?? [];
  const servers = choices.data?.servers ?? [];
  const actorInput = useNameOf(filters.actor, actors);
  const serverInput = useNameOf(filters.server, servers);

  const filter = (event: Event) => {
    const { field } = submitted(event);
    const next: AuditFilters = {};
    const actor = field('actor');
    const named = actors.filter((candidate) => candidate.name === actor);
    // A name two identities share (a person and a service account) is sent as the name: the trail matches both.
    if (actor) next.actor = named.length === 1 ? named[0]!.id : actor;
    const server = field('server');
    if (server) {
      const id = servers.find((candidate) => candidate.name === server)?.id ?? (isId(server) ? server.toLowerCase() : null);
      if (!id) return setProblem(`No server is named “${server}”.`);
      next.server = id;
    }
    if (field('action')) next.action = field('action');
    for (const name of ['since', 'until'] as const) if (field(name)) next[name] = new Date(field(name)).toISOString();
    setProblem(null);
    onFilter(next);
  };

  return (
    <form class="filters" onSubmit={filter} aria-label="Filter the trail">
      <label>
        Actor <input name="actor" list="audit-actors" placeholder="a name" {...actorInput} />
      </label>
      <datalist id="audit-actors">
        {actors.map((actor) => (
          <option key={actor.id} value={actor.name} label={actor.type === 'person' ? 'person' : 'service account'} />
        ))}
      </datalist>
      <label>
        Action <input name="action" list="audit-actions" placeholder="run.* or command.run" defaultValue={filters.action} />
      </label>
      <datalist id="audit-actions">
        {(choices.data?.actions ?? []).map((action) => (
          <option key={action} value={action} />
        ))}
      </datalist>
      <label>
        Server <input name="server" list="audit-servers" placeholder="its name" {...serverInput} />
      </label>
      <datalist id="audit-servers">
        {servers.map((server) => (
          <option key={server.id} value={server.name} />
        ))}
      </datalist>
      <label>
        Since <input name="since" type="datetime-local" defaultValue={localInput(filters.since)} />
      </label>
      <label>
        Until <input name="until" type="datetime-local" defaultValue={localInput(filters.until)} />
      </label>
      <button type="submit">Filter</button>
      {problem ? (
        <p role="alert" class="error-note">
          {problem}
        </p>
      ) : null}
    </form>
  );
}
