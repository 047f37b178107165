import { useEffect, useRef } from 'preact/hooks';
import type { SessionView } from '../api-types';
import { session } from '../session';
import { useWaitingForMe } from '../waiting';

interface Item {
  href: string;
  label: string;
  /** Whether this session's rights show it. */
  shown: boolean;
}

/** Where a person works (Operate) and where an organization is governed (Govern): one line at 1,280 px, the second a menu. */
function groups(): { operate: Item[]; govern: Item[] } {
  const reads = session.can('read');
  const admin = session.can('admin');
  return {
    operate: [
      { href: '/dashboard', label: 'Dashboard', shown: reads },
      { href: '/servers', label: 'Servers', shown: reads },
      { href: '/deployments', label: 'Deployments', shown: reads },
      { href: '/pipelines', label: 'Pipelines', shown: reads },
      { href: '/schedules', label: 'Schedules', shown: reads },
      { href: '/conversations', label: 'Conversations', shown: reads },
      { href: '/migration-plans', label: 'Migrations', shown: reads },
      { href: '/freezes', label: 'Freezes', shown: reads },
    ].filter((item) => item.shown),
    govern: [
      { href: '/people', label: 'People', shown: admin },
      { href: '/teams', label: 'Teams', shown: admin },
      { href: '/service-accounts', label: 'Service accounts', shown: admin },
      { href: '/role-bindings', label: 'Role bindings', shown: admin },
      { href: '/tokens', label: 'Tokens', shown: admin },
      { href: '/policy', label: 'Policy', shown: reads },
      { href: '/config', label: 'Config', shown: reads },
      { href: '/notifications', label: 'Notifications', shown: admin },
      { href: '/audit', label: 'Audit', shown: session.can('audit:read') },
    ].filter((item) => item.shown),
  };
}

const isHere = (href: string, here: string) => here === href || here.startsWith(`${href}/`) || (href === '/dashboard' && here === '/');

/** The count of runs waiting for my approval, beside Dashboard: live, and said in words to a screen reader. */
function WaitingCount() {
  const waiting = useWaitingForMe();
  if (!waiting?.length) return null;
  const n = waiting.length;
  return (
    <span class="badge" data-waiting-count={n} title={`${n} run${n === 1 ? '' : 's'} waiting for your approval`}>
      {n}
      <span class="visually-hidden"> waiting for you</span>
    </span>
  );
}

export function Header({ current, signOut }: { current: SessionView; signOut: () => Promise<void> }) {
  const menu = useRef<HTMLDetailsElement>(null);
  const here = location.pathname;
  const { operate, govern } = groups();
  // A page chosen from the menu closes it.
  useEffect(() => {
    if (menu.current) menu.current.open = false;
  }, [here]);
  const link = ({ href, label }: Item) => (
    <a href={href} aria-current={isHere(href, here) ? 'page' : undefined}>
      {label}
      {href === '/dashboard' ? <WaitingCount /> : null}
    </a>
  );
  const governing = govern.find((item) => isHere(item.href, here));
  return (
    <header class="top">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <span class="brand">Bosun</span>
      <nav aria-label="Main">
        <ul class="nav-group" aria-label="Operate">
          {operate.map((item) => (
            <li key={item.href}>{link(item)}</li>
          ))}
        </ul>
        {govern.length && !operate.length ? (
          // An auditor's console has nothing to operate: its governing pages are the navigation.
          <ul class="nav-group" aria-label="Govern">
            {govern.map((item) => (
              <li key={item.href}>{link(item)}</li>
            ))}
          </ul>
        ) : govern.length ? (
          <details class="nav-menu" ref={menu}>
            <summary aria-current={governing ? 'page' : undefined}>{governing ? `Govern: ${governing.label}` : 'Govern'}</summary>
            <ul aria-label="Govern">
              {govern.map((item) => (
                <li key={item.href}>{link(item)}</li>
              ))}
            </ul>
          </details>
        ) : null}
      </nav>
      <a class="who" href="/account" aria-current={here === '/account' ? 'page' : undefined} title={`Signed in with the token ${current.token_name}`}>
        <span class="visually-hidden">My account: </span>
        {current.identity.name} · {current.organization}
      </a>
      <button type="button" onClick={() => void signOut()}>
        Sign out
      </button>
    </header>
  );
}
