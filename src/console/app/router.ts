import { useEffect, useState } from 'preact/hooks';
import { pageAt } from '../../api/console/pages';

export interface Route {
  /** The page's name (its component). */
  name: string;
  params: Record<string, string>;
}

export function match(pathname: string): Route {
  return pageAt(pathname) ?? { name: 'not-found', params: {} };
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
