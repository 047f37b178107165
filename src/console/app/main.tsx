import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, whenSignedOut } from './api';
import type { SessionView } from './api-types';
import { closeSocket, pageSocket, whenSessionEnded } from './live';
import { match, navigate, useLocation } from './router';
import { session } from './session';
import { Deployment } from './pages/deployment';
import { Deployments } from './pages/deployments';
import { Pipelines } from './pages/pipelines';
import { PipelinePage } from './pages/pipeline';
import { PipelineRunPage } from './pages/pipeline-run';
import { Run, Target } from './pages/run';
import { Server } from './pages/server';
import { Servers } from './pages/servers';
import { SignIn } from './pages/sign-in';
import { Conversation } from './pages/conversation';
import { Conversations } from './pages/conversations';
import { MigrationPlan, MigrationPlans } from './pages/migration-plans';
import { Policy, Tokens } from './pages/admin';
import { Freezes } from './pages/freezes';
import { ServerImport } from './pages/server-import';
import { NotificationChannelPage, NotificationChannels } from './pages/notifications';
import { Account } from './pages/account';
import { IdentityPage } from './pages/identity';
import { People } from './pages/people';
import { RoleBindings } from './pages/role-bindings';
import { ServiceAccounts } from './pages/service-accounts';
import { Team, Teams } from './pages/teams';
import { Audit } from './pages/audit';
import { Dashboard } from './pages/dashboard';
import { SchedulesPage } from './pages/schedules';
import { ConfigPage } from './pages/config';
import { Header } from './components/nav';

let notice: string | null = null;

/** The session is over: back to sign-in, saying why, and coming back here afterwards. */
function signedOut(message: string) {
  if (!session.get() && location.pathname === '/sign-in') return;
  closeSocket();
  session.set(null);
  notice = message;
  const here = location.pathname + location.search + location.hash;
  navigate(here.startsWith('/sign-in') ? '/sign-in' : `/sign-in?next=${encodeURIComponent(here)}`, { replace: true });
}
whenSignedOut(signedOut);
whenSessionEnded(signedOut);

async function signOut() {
  try {
    await api('DELETE', '/api/v1/session');
  } finally {
    closeSocket();
    session.set(null);
    notice = 'Signed out.';
    navigate('/sign-in', { replace: true });
  }
}

function App() {
  const { pathname } = useLocation();
  const [current, setCurrent] = useState<SessionView | null>(session.get());
  const [checked, setChecked] = useState(false);
  useEffect(() => session.subscribe(setCurrent), []);
  useEffect(() => {
    // A reloaded page asks for its session (the cookie is sent by the browser, unseen by this code).
    api<{ data: SessionView }>('GET', '/api/v1/session')
      .then(({ data }) => session.set(data))
      .catch(() => undefined)
      .finally(() => setChecked(true));
  }, []);
  useEffect(() => {
    if (current) pageSocket();
  }, [current]);
  useEffect(() => {
    // One address per page: `/` is the dashboard (the audit trail, for an auditor who reads nothing else).
    if (pathname === '/' && current) navigate(session.can('read') || !session.can('audit:read') ? '/dashboard' : '/audit', { replace: true });
  }, [pathname, current]);
  const route = match(pathname);
  useEffect(() => {
    if (checked && !current && route.name !== 'sign-in') signedOut('Sign in to continue.');
  }, [checked, current, route.name]);
  useEffect(() => {
    document.title = `${route.name === 'sign-in' ? 'Sign in' : route.name.replace(/^./, (c) => c.toUpperCase())} · Bosun`;
  }, [route.name]);

  if (!checked) return <p class="muted">Loading…</p>;
  if (route.name === 'sign-in' || !current) return <SignIn notice={notice} />;
  const p = route.params;
  return (
    <>
      <Header current={current} signOut={signOut} />
      {route.name === 'dashboard' ? <Dashboard /> : null}
      {route.name === 'schedules' ? <SchedulesPage /> : null}
      {route.name === 'servers' ? <Servers /> : null}
      {route.name === 'server' ? <Server serverId={p.serverId!} /> : null}
      {route.name === 'server import' ? <ServerImport /> : null}
      {route.name === 'deployments' ? <Deployments /> : null}
      {route.name === 'deployment' ? <Deployment deploymentId={p.deploymentId!} /> : null}
      {route.name === 'run' ? <Run deploymentId={p.deploymentId!} runId={p.runId!} /> : null}
      {route.name === 'target' ? <Target deploymentId={p.deploymentId!} runId={p.runId!} serverId={p.serverId!} /> : null}
      {route.name === 'pipelines' ? <Pipelines /> : null}
      {route.name === 'pipeline' ? <PipelinePage pipelineId={p.pipelineId!} /> : null}
      {route.name === 'pipeline run' ? <PipelineRunPage pipelineId={p.pipelineId!} runId={p.pipelineRunId!} /> : null}
      {route.name === 'conversations' ? <Conversations /> : null}
      {route.name === 'conversation' ? <Conversation conversationId={p.conversationId!} /> : null}
      {route.name === 'migration plans' ? <MigrationPlans /> : null}
      {route.name === 'migration plan' ? <MigrationPlan planId={p.planId!} /> : null}
      {route.name === 'freezes' ? <Freezes /> : null}
      {route.name === 'notifications' ? <NotificationChannels /> : null}
      {route.name === 'notification channel' ? <NotificationChannelPage channelId={p.channelId!} /> : null}
      {route.name === 'tokens' ? <Tokens /> : null}
      {route.name === 'policy' ? <Policy /> : null}
      {route.name === 'people' ? <People /> : null}
      {route.name === 'person' ? <IdentityPage kind="person" id={p.personId!} /> : null}
      {route.name === 'service accounts' ? <ServiceAccounts /> : null}
      {route.name === 'service account' ? <IdentityPage kind="service_account" id={p.accountId!} /> : null}
      {route.name === 'teams' ? <Teams /> : null}
      {route.name === 'team' ? <Team teamId={p.teamId!} /> : null}
      {route.name === 'role bindings' ? <RoleBindings /> : null}
      {route.name === 'my account' ? <Account /> : null}
      {route.name === 'audit' ? <Audit /> : null}
      {route.name === 'config' ? <ConfigPage /> : null}
      {route.name === 'not-found' ? (
        <main id="main">
          <h1>Not found</h1>
          <p>
            No page at <code>{pathname}</code>. <a href="/dashboard">Dashboard</a>
          </p>
        </main>
      ) : null}
    </>
  );
}

render(<App />, document.getElementById('app')!);
