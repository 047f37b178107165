import { useState } from 'preact/hooks';
import { api, get } from '../api';
import type { Freeze } from '../api-types';
import { ErrorNote, Section, submitted, useChanges, useLoad, When } from '../components/common';
import { Confirmed } from '../components/confirm';
import { Table } from '../components/table';
import { browserZone } from '../components/zoned';
import { session } from '../session';
import { managedText } from '../components/managed';

interface Occurrence {
  freeze: Freeze;
  start: number;
  end: number;
}

/** Monday 00:00 of the week holding `at`, in the browser's time. */
function weekOf(at: Date): Date {
  const monday = new Date(at.getFullYear(), at.getMonth(), at.getDate());
  monday.setDate(monday.getDate() - ((monday.getDay() + 6) % 7));
  return monday;
}

const addDays = (day: Date, n: number) => new Date(day.getFullYear(), day.getMonth(), day.getDate() + n);

/** A freeze's windows in the week, as the server computed them (GET /freezes?from=&to=: one-off, or each occurrence of a recurring one). */
const occurrences = (freeze: Freeze): Occurrence[] => (freeze.windows ?? []).map((w) => ({ freeze, start: Date.parse(w.starts_at), end: Date.parse(w.ends_at) }));

const clock = (ms: number) => new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

/** An occurrence's part of one day: "all day", "from 08:00", "until 18:00", "08:00–18:00". */
function partOfDay(o: Occurrence, dayStart: number, dayEnd: number): string {
  const fromStart = o.start <= dayStart;
  const toEnd = o.end >= dayEnd;
  if (fromStart && toEnd) return 'all day';
  if (fromStart) return `until ${clock(o.end)}`;
  if (toEnd) return `from ${clock(o.start)}`;
  return `${clock(o.start)}–${clock(o.end)}`;
}

export const coversText = (f: Pick<Freeze, 'tags'>) => (f.tags ? `servers tagged ${f.tags.join(' or ')}` : 'all servers');

export const windowText = (f: Freeze) => (f.kind === 'recurring' ? `cron ${f.cron} for ${f.duration}, in ${f.time_zone}` : null);

/** Change freezes: a week's calendar of what is frozen when, and the list; admins declare and lift them. */
export function Freezes() {
  const [week, setWeek] = useState(() => weekOf(new Date()));
  const freezes = useLoad(() => get<Freeze[]>(`/api/v1/freezes?from=${encodeURIComponent(week.toISOString())}&to=${encodeURIComponent(addDays(week, 7).toISOString())}`), [week.getTime()]);
  const { error, act, ...asking } = useChanges(freezes.reload);
  const admin = session.can('admin');

  return (
    <main id="main">
      <h1>Change freezes</h1>
      <p class="muted">While a freeze holds, no run starts on the servers it covers (an admin may override it with a reason). Times are in your zone, {browserZone()}.</p>
      <ErrorNote error={freezes.error ?? error} />
      <WeekCalendar week={week} setWeek={setWeek} freezes={freezes.data ?? []} />
      <Section title="All freezes">
        <Table
          rows={freezes.data}
          rowKey={(f) => f.id}
          mark={(f) => ({ 'data-freeze-row': f.name })}
          empty="No change freezes."
          columns={[
            { head: 'Name', cell: (f) => <><strong>{f.name}</strong>{f.managed_by ? <div class="muted small">{managedText(f.managed_by)}</div> : null}</> },
            {
              head: 'When',
              cell: (f) =>
                windowText(f) ?? (
                  <>
                    <When at={f.starts_at} /> → <When at={f.ends_at} />
                  </>
                ),
            },
            { head: 'Covers', cell: coversText },
            { head: 'Now', cell: (f) => <HoldsNow freeze={f} /> },
            { head: 'Note', cell: (f) => f.note ?? <span class="muted">—</span> },
            { head: 'Declared by', cell: (f) => f.created_by?.name ?? '—' },
          ]}
          actions={
            admin
              ? {
                  cell: (f) => (
                    <Confirmed asking={asking} id={f.id} ask="Delete" yes={`Lift ${f.name} now`} onYes={() => void act(() => api('DELETE', `/api/v1/freezes/${f.id}`))} managedBy={f.managed_by} />
                  ),
                }
              : null
          }
        />
      </Section>
      {admin ? (
        <NewFreeze create={(body) => act(() => api('POST', '/api/v1/freezes', body))} />
      ) : (
        <p class="muted" data-why-not>
          Declaring and lifting freezes takes the admin role over the whole organization; you can see them here.
        </p>
      )}
    </main>
  );
}

/** The week from Monday to Sunday (← previous, this, next →), each day with the freezes' windows in it (red while one holds now). */
function WeekCalendar({ week, setWeek, freezes }: { week: Date; setWeek: (week: Date) => void; freezes: Freeze[] }) {
  const days = Array.from({ length: 7 }, (_, i) => addDays(week, i));
  const all = freezes.flatMap(occurrences);
  const now = Date.now();
  const today = new Date().toDateString();
  const range = `${days[0]!.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })} – ${days[6]!.toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' })}`;
  return (
    <Section title={`Week of ${range}`}>
      <div class="week-nav">
        <button type="button" onClick={() => setWeek(addDays(week, -7))}>
          ← Previous week
        </button>
        <button type="button" onClick={() => setWeek(weekOf(new Date()))}>
          This week
        </button>
        <button type="button" onClick={() => setWeek(addDays(week, 7))}>
          Next week →
        </button>
      </div>
      <ol class="week" aria-label="Calendar week">
        {days.map((day) => {
          const start = day.getTime();
          const end = addDays(day, 1).getTime();
          const covering = all.filter((o) => o.start < end && o.end > start).sort((a, b) => a.start - b.start);
          const label = day.toLocaleDateString(undefined, { weekday: 'short', day: 'numeric', month: 'short' });
          return (
            <li key={start} class={`day${day.toDateString() === today ? ' today' : ''}`} aria-label={label} data-day={label}>
              <h3>{label}</h3>
              {covering.length ? (
                <ul>
                  {covering.map((o) => (
                    <li key={`${o.freeze.id}-${o.start}`} class={`occurrence${o.start <= now && now < o.end ? ' now' : ''}`} data-freeze={o.freeze.name}>
                      <strong>{o.freeze.name}</strong>
                      {partOfDay(o, start, end)}
                      <div class="small">{coversText(o.freeze)}</div>
                    </li>
                  ))}
                </ul>
              ) : (
                <p class="muted small">No freeze</p>
              )}
            </li>
          );
        })}
      </ol>
    </Section>
  );
}

/** Whether a freeze holds now (until when), or its next window. */
function HoldsNow({ freeze: f }: { freeze: Freeze }) {
  if (f.active_now) {
    return (
      <span class="status status-frozen">
        frozen{f.current_window ? ' until ' : ''}
        {f.current_window ? <When at={f.current_window.ends_at} /> : null}
      </span>
    );
  }
  if (f.next_window) {
    return (
      <span class="small">
        next <When at={f.next_window.starts_at} />
      </span>
    );
  }
  return <span class="muted">no</span>;
}

/** An admin's form: a one-off window (in the browser's time) or a recurring one (a cron and a duration in a zone). */
function NewFreeze({ create }: { create: (body: Record<string, unknown>) => Promise<boolean> }) {
  const [kind, setKind] = useState<'once' | 'recurring'>('once');
  const save = async (event: Event) => {
    const { field, form } = submitted(event);
    const tags = field('tags')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    const when =
      kind === 'once'
        ? { starts_at: new Date(field('starts_at')).toISOString(), ends_at: new Date(field('ends_at')).toISOString() }
        : { cron: field('cron'), duration: field('duration'), time_zone: field('time_zone') };
    if (await create({ name: field('name'), ...when, tags: tags.length ? tags : null, note: field('note') || null })) form.reset();
  };
  return (
    <Section title="Declare a freeze">
      <form class="grid-form" onSubmit={(e) => void save(e)} aria-label="Declare a freeze">
        <label>
          Name <input name="name" required maxLength={120} placeholder="black-friday" />
        </label>
        <fieldset>
          <legend>Kind</legend>
          <label>
            <input type="radio" name="kind" checked={kind === 'once'} onChange={() => setKind('once')} /> Once
          </label>
          <label>
            <input type="radio" name="kind" checked={kind === 'recurring'} onChange={() => setKind('recurring')} /> Recurring
          </label>
        </fieldset>
        {kind === 'once' ? (
          <>
            <label>
              Starts (your time) <input name="starts_at" type="datetime-local" required />
            </label>
            <label>
              Ends (your time) <input name="ends_at" type="datetime-local" required />
            </label>
          </>
        ) : (
          <>
            <label>
              Starts (cron) <input name="cron" required placeholder="0 8 * * 1-5" />
            </label>
            <label>
              Lasts <input name="duration" required placeholder="10h" pattern="\d{1,6}[smhdw]" />
            </label>
            <label>
              Time zone <input name="time_zone" required defaultValue={browserZone()} />
            </label>
          </>
        )}
        <label>
          Tags <input name="tags" placeholder="empty: all servers" />
          <span class="hint">Comma-separated: the servers having any of them</span>
        </label>
        <label class="wide">
          Note <input name="note" maxLength={2000} />
        </label>
        <div class="wide">
          <button type="submit" class="primary">
            Declare
          </button>
        </div>
      </form>
    </Section>
  );
}
