/**
 * The console's pages: each name (the page's component in the console's router) and its URL, with
 * `:name` for an id (24 hex digits). One list for both sides: the server answers the console's page
 * on each of these URLs (a reload, a pasted link), and the console routes itself by the same list,
 * so a page the console shows is never a 404 when loaded directly. `/` is the dashboard too
 * (for a browser; JSON clients get the API's links: app.ts).
 */
export const CONSOLE_PAGES = [
  { name: 'sign-in', path: '/sign-in' },
  { name: 'dashboard', path: '/dashboard' },
  { name: 'servers', path: '/servers' },
  { name: 'server import', path: '/servers/import' },
  { name: 'server', path: '/servers/:serverId' },
  { name: 'deployments', path: '/deployments' },
  { name: 'deployment', path: '/deployments/:deploymentId' },
  { name: 'run', path: '/deployments/:deploymentId/runs/:runId' },
  { name: 'target', path: '/deployments/:deploymentId/runs/:runId/targets/:serverId' },
  { name: 'pipelines', path: '/pipelines' },
  { name: 'pipeline', path: '/pipelines/:pipelineId' },
  { name: 'pipeline run', path: '/pipelines/:pipelineId/runs/:pipelineRunId' },
  { name: 'conversations', path: '/conversations' },
  { name: 'conversation', path: '/conversations/:conversationId' },
  { name: 'migration plans', path: '/migration-plans' },
  { name: 'migration plan', path: '/migration-plans/:planId' },
  { name: 'freezes', path: '/freezes' },
  { name: 'schedules', path: '/schedules' },
  { name: 'notifications', path: '/notifications' },
  { name: 'notification channel', path: '/notifications/:channelId' },
  { name: 'tokens', path: '/tokens' },
  { name: 'policy', path: '/policy' },
  { name: 'people', path: '/people' },
  { name: 'person', path: '/people/:personId' },
  { name: 'service accounts', path: '/service-accounts' },
  { name: 'service account', path: '/service-accounts/:accountId' },
  { name: 'teams', path: '/teams' },
  { name: 'team', path: '/teams/:teamId' },
  { name: 'role bindings', path: '/role-bindings' },
  { name: 'my account', path: '/account' },
  { name: 'audit', path: '/audit' },
  { name: 'config', path: '/config' },
] as const;

export type ConsolePageName = (typeof CONSOLE_PAGES)[number]['name'];

/** A page's URL as a pattern: its ids are 24 hex digits (`/servers/import` is not a server). */
function pagePattern(path: string): { pattern: RegExp; keys: string[] } {
  const keys: string[] = [];
  const source = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:([A-Za-z]+)/g, (_, key: string) => {
    keys.push(key);
    return '([0-9a-f]{24})';
  });
  return { pattern: new RegExp(`^${source}$`), keys };
}

const PATTERNS = CONSOLE_PAGES.map((page) => ({ name: page.name, ...pagePattern(page.path) }));

/** The page a console URL's path shows, with its ids; null when it is none of them. */
export function pageAt(pathname: string): { name: ConsolePageName; params: Record<string, string> } | null {
  if (pathname === '/') return { name: 'dashboard', params: {} };
  for (const { name, pattern, keys } of PATTERNS) {
    const found = pattern.exec(pathname);
    if (found) return { name, params: Object.fromEntries(keys.map((key, i) => [key, found[i + 1]!])) };
  }
  return null;
}
