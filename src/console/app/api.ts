import type { Page } from './api-types';
import { session } from './session';

/** An answer of the API other than 2xx: its error envelope. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Array<{ path: string; message: string }> = [],
  ) {
    super(message);
  }
}

/** Called when the API says the session is over (signed out elsewhere, idle, token revoked). */
let onSignedOut: (reason: string) => void = () => undefined;
export const whenSignedOut = (handler: (reason: string) => void) => {
  onSignedOut = handler;
};

/** One API call with the session's cookie; writes carry its anti-forgery token. */
export async function api<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const csrf = session.get()?.csrf_token;
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: {
      Accept: 'application/json',
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...(method !== 'GET' && csrf ? { 'X-CSRF-Token': csrf } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const parsed = text ? (JSON.parse(text) as { error?: { code: string; message: string; details?: Array<{ path: string; message: string }> } }) : {};
  if (!response.ok) {
    const error = parsed.error ?? { code: 'internal_error', message: `HTTP ${response.status}` };
    if (response.status === 401 && path !== '/api/v1/session') onSignedOut(error.message);
    throw new ApiProblem(response.status, error.code, error.message, error.details);
  }
  return parsed as T;
}

export const get = <T>(path: string) => api<{ data: T }>('GET', path).then((r) => r.data);

/** Every item of a paginated list, page after page (an organization's people, teams, bindings: few enough to hold). */
export async function getAll<T>(path: string): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; ; page += 1) {
    const answer = await api<Page<T>>('GET', `${path}${path.includes('?') ? '&' : '?'}per_page=100&page=${page}`);
    items.push(...answer.data);
    if (page >= answer.meta.last_page) return items;
  }
}
