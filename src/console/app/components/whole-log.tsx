import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNote } from './common';

/** Every row is this tall (CSS `.log-line` says the same): the view computes what is on screen from it. */
const ROW = 18;
/** Lines fetched per request, and rendered beyond the screen on each side. */
const PAGE = 500;
const OVERSCAN = 30;
/** A live step's tail is read again at most this often. */
const REFRESH_MS = 250;

interface LinesAnswer {
  data: { first_line: number; lines: string[]; total_lines: number; complete: boolean };
}
interface MatchesAnswer {
  data: { matches: Array<{ line: number; text: string }>; more: boolean };
}

/**
 * A step's whole log (GET …/steps/{n}/log), however long: it opens at the tail, fetches the lines
 * that come into view as one scrolls (a page at a time), and renders only those on screen. Line
 * anchors (`#L<step>-<line>`) scroll to and highlight a line; "Follow" keeps the last line in view as
 * output arrives (the tail is read again whenever `version` changes) and lets go when one scrolls up;
 * the search runs on the server.
 */
export function WholeLog({ path, anchor, label, version, live }: { path: string; anchor: string; label: string; version: string; live: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  // The lines known so far, by number - 1 (a sparse array: only what was fetched).
  const store = useRef({ lines: [] as string[], total: -1, pending: new Set<number>(), refreshing: false, again: false, lastRefresh: 0, autoTop: 0 });
  const [, setTick] = useState(0);
  const redraw = () => setTick((n) => n + 1);
  const [follow, setFollow] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(24 * 16);
  const [search, setSearch] = useState<{ query: string; matches: Array<{ line: number; text: string }>; more: boolean } | null>(null);
  const prefix = `#L${anchor}-`;
  const target = location.hash.startsWith(prefix) ? Number(location.hash.slice(prefix.length)) || null : null;
  const s = store.current;

  const apply = ({ data }: LinesAnswer) => {
    if (data.total_lines < s.total) s.lines.length = 0;
    // The last line known may have been a partial one: it is read again with the rest.
    else if (s.total > 0) s.lines.length = Math.min(s.lines.length, s.total - 1);
    s.total = data.total_lines;
    data.lines.forEach((line, i) => (s.lines[data.first_line - 1 + i] = line));
  };

  /** Reads the tail again (one request at a time; a change meanwhile asks for one more). */
  const refresh = async () => {
    if (s.refreshing) {
      s.again = true;
      return;
    }
    s.refreshing = true;
    try {
      do {
        s.again = false;
        const wait = s.lastRefresh + REFRESH_MS - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        s.lastRefresh = Date.now();
        apply(await api<LinesAnswer>('GET', `${path}?limit=${PAGE}`));
        redraw();
      } while (s.again);
    } catch (problem) {
      setError(problem);
    } finally {
      s.refreshing = false;
    }
  };

  useEffect(() => {
    // Another step's log: forget this one's (in place: callbacks in flight hold this object).
    Object.assign(s, { lines: [], total: -1, pending: new Set(), again: false, autoTop: 0 });
    void refresh();
  }, [path]);
  useEffect(() => {
    if (s.total >= 0) void refresh();
  }, [version]);

  // Lines on screen that are not known yet: their pages are fetched.
  const first = Math.max(1, Math.floor(scrollTop / ROW) + 1 - OVERSCAN);
  const last = Math.min(Math.max(s.total, 0), Math.ceil((scrollTop + height) / ROW) + OVERSCAN);
  useEffect(() => {
    for (let line = first; line <= last; line += 1) {
      if (s.lines[line - 1] !== undefined) continue;
      const page = Math.floor((line - 1) / PAGE);
      line = (page + 1) * PAGE;
      if (s.pending.has(page)) continue;
      s.pending.add(page);
      api<LinesAnswer>('GET', `${path}?from=${page * PAGE + 1}&limit=${PAGE}`)
        .then(({ data }) => {
          data.lines.forEach((text, i) => (s.lines[data.first_line - 1 + i] = text));
          if (data.total_lines > s.total) s.total = data.total_lines;
          redraw();
        })
        .catch(setError)
        .finally(() => s.pending.delete(page));
    }
  });

  // Following: the last line in view after every change. A target line: scrolled to, centred.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    setHeight(el.clientHeight || height);
    if (target !== null && s.total >= target) el.scrollTop = Math.max(0, (target - 1) * ROW - el.clientHeight / 2 + ROW);
    else if (follow && target === null) el.scrollTop = el.scrollHeight;
    s.autoTop = el.scrollTop;
    setScrollTop(el.scrollTop);
  }, [s.total, follow, target]);
  useEffect(() => {
    if (target !== null) setFollow(false);
  }, [target]);

  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    setScrollTop(el.scrollTop);
    // Only a person scrolling up lets go of the tail (not the view's own scrolling, nor the log growing).
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < ROW;
    if (follow && !atBottom && el.scrollTop < s.autoTop - 2) setFollow(false);
    if (atBottom) s.autoTop = el.scrollTop;
  };

  const find = async (event: Event) => {
    event.preventDefault();
    const query = String(new FormData(event.currentTarget as HTMLFormElement).get('q') ?? '').trim();
    if (!query) return setSearch(null);
    try {
      const { data } = await api<MatchesAnswer>('GET', `${path}?q=${encodeURIComponent(query)}`);
      setSearch({ query, ...data });
    } catch (problem) {
      setError(problem);
    }
  };

  const total = Math.max(s.total, 0);
  const rows = [];
  for (let line = first; line <= last; line += 1) {
    const text = s.lines[line - 1];
    rows.push(
      <div class={`log-line${target === line ? ' log-line-target' : ''}`} id={`L${anchor}-${line}`} key={line}>
        <a class="log-no" href={`${prefix}${line}`} aria-label={`Line ${line}`}>
          {line}
        </a>
        <span class="log-text">{text ?? '…'}</span>
      </div>,
    );
  }
  return (
    <div class="log">
      <div class="log-bar">
        <span class="muted">{s.total < 0 ? 'Loading…' : total === 1 ? '1 line' : `${total.toLocaleString('en')} lines`}</span>
        <form class="log-search" onSubmit={find} role="search" aria-label={`Search ${label}`}>
          <input name="q" type="search" placeholder="Search the whole log" aria-label={`Search ${label}`} />
          <button type="submit">Search</button>
        </form>
        <a href={`${path}?format=raw`} download>
          Download
        </a>
        <label class="inline">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} /> Follow
        </label>
      </div>
      <ErrorNote error={error} />
      {search ? (
        <div class="log-matches" aria-live="polite">
          <span class="muted small">
            {search.matches.length}
            {search.more ? '+' : ''} line{search.matches.length === 1 ? '' : 's'} with “{search.query}”
          </span>
          <ol>
            {search.matches.slice(0, 200).map((m) => (
              <li key={m.line}>
                <a href={`${prefix}${m.line}`}>{m.line}</a> <code>{m.text.slice(0, 200)}</code>
              </li>
            ))}
          </ol>
        </div>
      ) : null}
      <div class="log-lines" ref={box} onScroll={onScroll} tabIndex={0} role="log" aria-label={label} data-live={live ? 'yes' : 'no'}>
        {total === 0 ? <div class="muted log-empty">No output yet.</div> : null}
        <div style={{ height: `${total * ROW}px`, position: 'relative' }}>
          <div style={{ position: 'absolute', top: `${(first - 1) * ROW}px`, left: 0, right: 0 }}>{rows}</div>
        </div>
      </div>
    </div>
  );
}
