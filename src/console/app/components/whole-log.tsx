import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNote } from './common';
import { useLogLines } from './log-lines';

/** Every row is this tall (CSS `.log-line` says the same): the view computes what is on screen from it. */
const ROW = 18;
/** Lines rendered beyond the screen on each side. */
const OVERSCAN = 30;

interface MatchesAnswer {
  data: { matches: Array<{ line: number; text: string }>; more: boolean };
}
/** A search's answer: the first lines matching its query, and whether more did. */
type Search = MatchesAnswer['data'] & { query: string };

/**
 * A step's whole log (GET …/steps/{n}/log), however long: it opens at the tail, fetches the lines
 * that come into view as one scrolls (a page at a time), and renders only those on screen. Line
 * anchors (`#L<step>-<line>`) scroll to and highlight a line; "Follow" keeps the last line in view as
 * output arrives (the tail is read again whenever `version` changes), lets go when one scrolls up and
 * unticks once the step has ended (its tail read then, and in view);
 * the search runs on the server.
 */
export function WholeLog({ path, anchor, label, version, live }: { path: string; anchor: string; label: string; version: string; live: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  const { known: s, fetchPages } = useLogLines(path, version, setError);
  // Where the view itself last scrolled to: a person scrolling above it lets go of the tail.
  const autoTop = useRef(0);
  const [follow, setFollow] = useState(true);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(24 * 16);
  const [search, setSearch] = useState<Search | null>(null);
  const prefix = `#L${anchor}-`;
  const target = location.hash.startsWith(prefix) ? Number(location.hash.slice(prefix.length)) || null : null;

  useEffect(() => {
    autoTop.current = 0;
  }, [path]);

  // Lines on screen that are not known yet: their pages are fetched.
  const first = Math.max(1, Math.floor(scrollTop / ROW) + 1 - OVERSCAN);
  const last = Math.min(Math.max(s.total, 0), Math.ceil((scrollTop + height) / ROW) + OVERSCAN);
  useEffect(() => fetchPages(first, last));

  // Following: the last line in view after every change. A target line: scrolled to, centred.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    setHeight(el.clientHeight || height);
    if (target !== null && s.total >= target) el.scrollTop = Math.max(0, (target - 1) * ROW - el.clientHeight / 2 + ROW);
    else if (follow && target === null) el.scrollTop = el.scrollHeight;
    autoTop.current = el.scrollTop;
    setScrollTop(el.scrollTop);
  }, [s.total, follow, target]);
  useEffect(() => {
    if (target !== null) setFollow(false);
  }, [target]);
  // The step ended and its last lines are in view (the layout effect above ran first): nothing more to follow.
  useEffect(() => {
    if (s.complete) setFollow(false);
  }, [s.complete]);

  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    setScrollTop(el.scrollTop);
    // Only a person scrolling up lets go of the tail (not the view's own scrolling, nor the log growing).
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < ROW;
    if (follow && !atBottom && el.scrollTop < autoTop.current - 2) setFollow(false);
    if (atBottom) autoTop.current = el.scrollTop;
  };

  const total = Math.max(s.total, 0);
  const rows = [];
  for (let line = first; line <= last; line += 1) {
    rows.push(
      <div class={`log-line${target === line ? ' log-line-target' : ''}`} id={`L${anchor}-${line}`} key={line}>
        <a class="log-no" href={`${prefix}${line}`} aria-label={`Line ${line}`}>
          {line}
        </a>
        <span class="log-text">{s.lines[line - 1] ?? '…'}</span>
      </div>,
    );
  }
  return (
    <div class="log">
      <LogBar path={path} label={label} count={s.total < 0 ? 'Loading…' : total === 1 ? '1 line' : `${total.toLocaleString('en')} lines`} follow={follow} setFollow={setFollow} onFound={setSearch} onError={setError} />
      <ErrorNote error={error} />
      {search ? <Matches search={search} prefix={prefix} /> : null}
      <div class="log-lines" ref={box} onScroll={onScroll} tabIndex={0} role="log" aria-label={label} data-live={live ? 'yes' : 'no'}>
        {total === 0 ? <div class="muted log-empty">No output yet.</div> : null}
        <div style={{ height: `${total * ROW}px`, position: 'relative' }}>
          <div style={{ position: 'absolute', top: `${(first - 1) * ROW}px`, left: 0, right: 0 }}>{rows}</div>
        </div>
      </div>
    </div>
  );
}

/** Above the log: how many lines, the search (on the server, over the whole log), Download, Follow. */
function LogBar({ path, label, count, follow, setFollow, onFound, onError }: {
  path: string;
  label: string;
  count: string;
  follow: boolean;
  setFollow: (follow: boolean) => void;
  onFound: (search: Search | null) => void;
  onError: (problem: unknown) => void;
}) {
  const find = async (event: Event) => {
    event.preventDefault();
    const query = String(new FormData(event.currentTarget as HTMLFormElement).get('q') ?? '').trim();
    if (!query) return onFound(null);
    try {
      const { data } = await api<MatchesAnswer>('GET', `${path}?q=${encodeURIComponent(query)}`);
      onFound({ query, ...data });
    } catch (problem) {
      onError(problem);
    }
  };
  return (
    <div class="log-bar">
      <span class="muted">{count}</span>
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
  );
}

/** The lines a search found (the first 200 shown), each a link to its line. */
function Matches({ search, prefix }: { search: Search; prefix: string }) {
  return (
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
  );
}
