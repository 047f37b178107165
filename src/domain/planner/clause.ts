import { trimSentenceEnd } from './phrases';

/* Reading one clause of an instruction: the names, paths, counts and time windows it mentions. */

export const SERVICE_WORDS = new Set(['service', 'the', 'it', 'its', 'server', 'machine', 'system', 'all', 'a', 'an', 'please', 'them', 'that', 'this', 'status', 'logs', 'log']);

/** Names already mentioned, so "restart nginx and show its status" knows what "its" is. */
export interface Memory {
  service: string | null;
  path: string | null;
}


export const serviceName = (raw: string | undefined, memory: Memory): string | null => {
  const name = raw?.toLowerCase();
  if (name && !SERVICE_WORDS.has(name)) {
    memory.service = name.replace(/\.service$/, '');
    return memory.service;
  }
  return memory.service;
};

export const pathOf = (raw: string | undefined, memory: Memory): string | null => {
  // A sentence's full stop, or the ")" closing a remark, is not part of the path.
  if (raw) memory.path = trimSentenceEnd(raw);
  return memory.path;
};

export const count = (raw: string | undefined, fallback: number, max = 10_000) => Math.min(max, Math.max(1, Number(raw ?? fallback) || fallback));

export const TIME_UNIT = '(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)';

/** How many the clause asks for ("top 5", "the 10 largest", "last 200 lines", "20 processes"), or the fallback; "the last 2 hours" is a time, not a count. */
export function wanted(clause: string, fallback: number, max: number): number {
  const asked =
    new RegExp(`\\b(?:top|first|last|latest|largest|biggest|busiest)\\s+(\\d{1,6})\\b(?!\\s*${TIME_UNIT}\\b)`, 'i').exec(clause) ??
    /\b(\d{1,6})\s+(?:largest|biggest|busiest|heaviest|most|top|processes|files|directories|folders|lines|entries|errors|messages)\b/i.exec(clause);
  return count(asked?.[1], fallback, max);
}

/** A time window the clause asks for ("in the last 2 hours", "since yesterday", "today"): as said, and as journalctl's --since/--until. */
export interface TimeWindow {
  said: string;
  since: string;
  until?: string;
}

export function timeWindow(clause: string): TimeWindow | null {
  const units: Record<string, string> = { sec: 'second', min: 'minute', hr: 'hour' };
  const relative = new RegExp(`\\b(?:(?:in|from|for|over|during|within)\\s+)?(?:the\\s+)?(?:last|past)\\s+(?:(\\d{1,4})\\s+)?(${TIME_UNIT})\\b`, 'i').exec(clause);
  if (relative) {
    const n = Number(relative[1] ?? 1);
    const word = relative[2]!.toLowerCase().replace(/s$/, '');
    const unit = units[word] ?? word;
    return { said: relative[0].trim(), since: `${n} ${unit}${n === 1 ? '' : 's'} ago` };
  }
  const since = /\bsince\s+(yesterday|today|\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?)\b/i.exec(clause);
  if (since) return { said: since[0], since: since[1]!.toLowerCase() };
  if (/\btoday\b/i.test(clause)) return { said: 'today', since: 'today' };
  if (/\byesterday\b/i.test(clause)) return { said: 'yesterday', since: 'yesterday', until: 'today' };
  return null;
}
