// The lines of a step's whole log that a view has read: its tail, kept fresh, and the pages it scrolls to.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';

/** Lines fetched per request. */
export const PAGE = 500;
/** A live step's tail is read again at most this often. */
const REFRESH_MS = 250;

interface LinesAnswer {
  data: { first_line: number; lines: string[]; total_lines: number; complete: boolean };
}

/** What is known of a log: its lines by number - 1 (a sparse array: only what was fetched), how many there are (-1: not read yet), and whether its tail was read after the step ended. */
export interface KnownLines {
  lines: string[];
  total: number;
  complete: boolean;
}

/**
 * Reads a log (GET …/steps/{n}/log at `path`): its tail at once and again whenever `version` changes
 * (one request at a time, at most every 250 ms); `fetchPages(first, last)` fetches the pages holding
 * lines not known yet. Every answer redraws the view.
 */
export function useLogLines(path: string, version: string, onError: (problem: unknown) => void) {
  const store = useRef({ lines: [] as string[], total: -1, complete: false, pending: new Set<number>(), refreshing: false, again: false, lastRefresh: 0 });
  const [, setTick] = useState(0);
  const redraw = () => setTick((n) => n + 1);
  const s = store.current;

  const apply = ({ data }: LinesAnswer) => {
    if (data.total_lines < s.total) s.lines.length = 0;
    // The last line known may have been a partial one: it is read again with the rest.
    else if (s.total > 0) s.lines.length = Math.min(s.lines.length, s.total - 1);
    s.total = data.total_lines;
    s.complete = data.complete;
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
      onError(problem);
    } finally {
      s.refreshing = false;
    }
  };

  useEffect(() => {
    // Another step's log: forget this one's (in place: callbacks in flight hold this object).
    Object.assign(s, { lines: [], total: -1, complete: false, pending: new Set(), again: false });
    void refresh();
  }, [path]);
  useEffect(() => {
    if (s.total >= 0) void refresh();
  }, [version]);

  const fetchPages = (first: number, last: number) => {
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
        .catch(onError)
        .finally(() => s.pending.delete(page));
    }
  };

  return { known: s as KnownLines, fetchPages };
}
