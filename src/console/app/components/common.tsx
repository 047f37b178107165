import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiProblem } from '../api';

/** A status as text with its colour: never colour alone. */
export function Status({ value }: { value: string | null | undefined }) {
  const text = value ?? '—';
  return <span class={`status status-${text}`}>{text}</span>;
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const problem = error instanceof ApiProblem ? error : null;
  return (
    <div class="error-note" role="alert">
      <strong>{problem ? `${problem.status} ${problem.code}` : 'Error'}</strong>: {(error as Error).message}
      {problem?.details.length ? (
        <ul>
          {problem.details.map((d) => (
            <li key={d.path}>
              <code>{d.path}</code>: {d.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>;
  const date = new Date(at);
  return (
    <time dateTime={at} title={date.toISOString()}>
      {date.toLocaleString()}
    </time>
  );
}

export const seconds = (s: number | null | undefined) =>
  s === null || s === undefined ? '—' : s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;

/** From `from` to `to`, or until now, counting every second, while `to` is not there yet (as the API counts `duration_seconds`). */
export function Elapsed({ from, to }: { from: string | null; to: string | null }) {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    if (!from || to) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [from, to]);
  if (!from) return <>{seconds(null)}</>;
  return <>{seconds(Math.max(0, Math.round(((to ? Date.parse(to) : now) - Date.parse(from)) / 1000)))}</>;
}

/** A run's targets counted by status, in words ("1 success, 2 running"), the statuses with none left out. */
export const summaryText = (s: Record<'success' | 'failed' | 'running' | 'queued' | 'skipped' | 'cancelled', number>) =>
  (['success', 'failed', 'running', 'queued', 'skipped', 'cancelled'] as const)
    .filter((k) => s[k] > 0)
    .map((k) => `${s[k]} ${k}`)
    .join(', ');

/**
 * Loads something and keeps it fresh: again when `deps` change, every `pollMs` while `poll` says so,
 * and when the tab comes back into view.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], { pollMs = 0, poll }: { pollMs?: number; poll?: (data: T) => boolean } = {}) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const latest = useRef(0);
  const reload = useCallback(async () => {
    const call = ++latest.current;
    try {
      const data = await load();
      if (call === latest.current) setState({ data, loading: false });
    } catch (error) {
      if (call === latest.current) setState((previous) => ({ ...previous, error, loading: false }));
    }
  }, deps);
  useEffect(() => {
    setState({ loading: true });
    void reload();
    const onVisible = () => document.visibilityState === 'visible' && void reload();
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      latest.current += 1;
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [reload]);
  const data = state.data;
  const polling = pollMs > 0 && data !== undefined && !!poll?.(data);
  useEffect(() => {
    if (!polling) return;
    const timer = setInterval(() => void reload(), pollMs);
    return () => clearInterval(timer);
  }, [polling, reload, pollMs]);
  return { ...state, reload };
}

export function Section({ title, children, actions, id }: { title: string; children: ComponentChildren; actions?: ComponentChildren; id?: string }) {
  return (
    <section class="panel" aria-label={title} id={id}>
      <header class="panel-head">
        <h2>{title}</h2>
        {actions ? <div class="actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

/**
 * A list page's changes: each runs, then the page reloads what it shows; a failure is kept for the
 * page to show, and a row waiting for its "are you sure" is remembered (one at a time).
 */
export function useChanges(reload: () => Promise<unknown>) {
  const [error, setError] = useState<unknown>(null);
  const [confirm, setConfirm] = useState<string | null>(null);
  const act = async (call: () => Promise<unknown>) => {
    setError(null);
    try {
      await call();
      setConfirm(null);
      await reload();
      return true;
    } catch (problem) {
      setError(problem);
      return false;
    }
  };
  return { error, confirm, setConfirm, act };
}

/** A submitted form's fields, each trimmed ('' when absent), and the form to reset. */
export function submitted(event: Event): { field: (name: string) => string; all: (name: string) => string[]; form: HTMLFormElement } {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const data = new FormData(form);
  return { field: (name) => String(data.get(name) ?? '').trim(), all: (name) => data.getAll(name).map(String), form };
}
