import { useEffect, useState } from 'preact/hooks';

export interface Route {
  /** The page's name (its component). */
  name: string;
  params: Record<string, string>;
}

const PATTERNS: Array<[name: string, pattern: RegExp, keys: string[]]> = [
  ['sign-in', /^\/sign-in$/, []],
  ['servers', /^\/(?:servers)?$/, []],
  ['server', /^\/servers\/([0-9a-f]{24})$/, ['serverId']],
  ['server import', /^\/servers\/import$/, []],
  ['deployments', /^\/deployments$/, []],
  ['deployment', /^\/deployments\/([0-9a-f]{24})$/, ['deploymentId']],
  ['run', /^\/deployments\/([0-9a-f]{24})\/runs\/([0-9a-f]{24})$/, ['deploymentId', 'runId']],
  ['target', /^\/deployments\/([0-9a-f]{24})\/runs\/([0-9a-f]{24})\/targets\/([0-9a-f]{24})$/, ['deploymentId', 'runId', 'serverId']],
  ['conversations', /^\/conversations$/, []],
  ['conversation', /^\/conversations\/([0-9a-f]{24})$/, ['conversationId']],
  ['migration plans', /^\/migration-plans$/, []],
  ['migration plan', /^\/migration-plans\/([0-9a-f]{24})$/, ['planId']],
  ['freezes', /^\/freezes$/, []],
  ['notifications', /^\/notifications$/, []],
  ['notification channel', /^\/notifications\/([0-9a-f]{24})$/, ['channelId']],
  ['tokens', /^\/tokens$/, []],
  ['policy', /^\/policy$/, []],
  ['people', /^\/people$/, []],
  ['person', /^\/people\/([0-9a-f]{24})$/, ['personId']],
  ['service accounts', /^\/service-accounts$/, []],
  ['service account', /^\/service-accounts\/([0-9a-f]{24})$/, ['accountId']],
  ['teams', /^\/teams$/, []],
  ['team', /^\/teams\/([0-9a-f]{24})$/, ['teamId']],
  ['role bindings', /^\/role-bindings$/, []],
  ['my account', /^\/account$/, []],
  ['audit', /^\/audit$/, []],
];

export function match(pathname: string): Route {
  for (const [name, pattern, keys] of PATTERNS) {
    const found = pattern.exec(pathname);
    if (found) return { name, params: Object.fromEntries(keys.map((key, i) => [key, found[i + 1]!])) };
  }
  return { name: 'not-found', params: {} };
}

const listeners = new Set<() => void>();

/** Goes to a console URL without reloading the page (the back button works). */
export function navigate(url: string, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  listeners.forEach((listener) => listener());
}

addEventListener('popstate', () => listeners.forEach((listener) => listener()));

// Same-origin links are followed in the page; modified clicks (new tab) are left to the browser.
addEventListener('click', (event) => {
  const link = (event.target as Element | null)?.closest?.('a');
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  if (link.target || link.origin !== location.origin || link.hasAttribute('download') || link.pathname.startsWith('/api/') || link.pathname.startsWith('/docs')) return;
  event.preventDefault();
  navigate(link.pathname + link.search + link.hash);
});

/** The current location, re-rendered on every navigation. */
export function useLocation() {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((n) => n + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return { pathname: location.pathname, search: location.search, hash: location.hash };
}
