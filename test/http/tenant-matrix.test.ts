import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { eventually } from '../support/eventually';
import { userWithToken } from '../support/client';
import { connectSocket } from '../support/socket';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
interface Ids {
  server: string;
  deployment: string;
  run: string;
  conversation: string;
  step: string;
  plan: string;
  schedule: string;
  pipeline: string;
  pipelineRun: string;
  pipelineSchedule: string;
  secret: string;
  token: string;
  person: string;
  account: string;
  team: string;
  binding: string;
  freeze: string;
  channel: string;
  delivery: string;
  configSource: string;
}

/**
 * Every route of the API, with the body a well-meaning client would send, filled in with the
 * owner's ids. A route added to the app without a line here fails the test.
 */
const MATRIX: Record<string, (ids: Ids) => { path: string; body?: object }> = {
  'GET /api/v1/servers/:id': (i) => ({ path: `/servers/${i.server}` }),
  'GET /api/v1/servers/:id/activity': (i) => ({ path: `/servers/${i.server}/activity` }),
  'DELETE /api/v1/tokens/:id': (i) => ({ path: `/tokens/${i.token}` }),
  'POST /api/v1/servers/:id/verify': (i) => ({ path: `/servers/${i.server}/verify` }),
  'PATCH /api/v1/servers/:id': (i) => ({ path: `/servers/${i.server}`, body: { title: 'taken-over', tags: ['mine'] } }),
  'DELETE /api/v1/servers/:id': (i) => ({ path: `/servers/${i.server}` }),
  'GET /api/v1/deployments/:id': (i) => ({ path: `/deployments/${i.deployment}` }),
  'PATCH /api/v1/deployments/:id': (i) => ({ path: `/deployments/${i.deployment}`, body: { name: 'taken-over' } }),
  'DELETE /api/v1/deployments/:id': (i) => ({ path: `/deployments/${i.deployment}` }),
  'POST /api/v1/deployments/:id/run': (i) => ({ path: `/deployments/${i.deployment}/run` }),
  'GET /api/v1/deployments/:id/runs': (i) => ({ path: `/deployments/${i.deployment}/runs` }),
  'GET /api/v1/deployments/:id/runs/:runId': (i) => ({ path: `/deployments/${i.deployment}/runs/${i.run}` }),
  'POST /api/v1/deployments/:id/runs/:runId/cancel': (i) => ({ path: `/deployments/${i.deployment}/runs/${i.run}/cancel` }),
  'POST /api/v1/deployments/:id/runs/:runId/retry': (i) => ({ path: `/deployments/${i.deployment}/runs/${i.run}/retry` }),
  'POST /api/v1/deployments/:id/runs/:runId/approve': (i) => ({ path: `/deployments/${i.deployment}/runs/${i.run}/approve`, body: {} }),
  'POST /api/v1/deployments/:id/runs/:runId/reject': (i) => ({ path: `/deployments/${i.deployment}/runs/${i.run}/reject`, body: { reason: 'mine now' } }),
  'POST /api/v1/deployments/:id/runs/:runId/pause': (i) => ({ path: `/deployments/${i.deployment}/runs/${i.run}/pause`, body: { reason: 'mine now' } }),
  'POST /api/v1/deployments/:id/runs/:runId/rollback': (i) => ({ path: `/deployments/${i.deployment}/runs/${i.run}/rollback`, body: {} }),
  'POST /api/v1/deployments/:id/runs/:runId/resume': (i) => ({ path: `/deployments/${i.deployment}/runs/${i.run}/resume` }),
  'GET /api/v1/deployments/:id/runs/:runId/targets/:serverId': (i) => ({ path: `/deployments/${i.deployment}/runs/${i.run}/targets/${i.server}` }),
  'GET /api/v1/deployments/:id/runs/:runId/steps/:step/log': (i) => ({ path: `/deployments/${i.deployment}/runs/${i.run}/steps/1/log` }),
  'GET /api/v1/deployments/:id/runs/:runId/targets/:serverId/steps/:step/log': (i) => ({ path: `/deployments/${i.deployment}/runs/${i.run}/targets/${i.server}/steps/1/log` }),
  'GET /api/v1/conversations/:id/steps/:stepId/log': (i) => ({ path: `/conversations/${i.conversation}/steps/${i.step}/log` }),
  'POST /api/v1/deployments/:id/plan': (i) => ({ path: `/deployments/${i.deployment}/plan` }),
  'GET /api/v1/deployments/:id/schedules': (i) => ({ path: `/deployments/${i.deployment}/schedules` }),
  'POST /api/v1/deployments/:id/schedules': (i) => ({ path: `/deployments/${i.deployment}/schedules`, body: { name: 'mine-now', every: '1h', time_zone: 'UTC' } }),
  'GET /api/v1/deployments/:id/schedules/:scheduleId': (i) => ({ path: `/deployments/${i.deployment}/schedules/${i.schedule}` }),
  'PATCH /api/v1/deployments/:id/schedules/:scheduleId': (i) => ({ path: `/deployments/${i.deployment}/schedules/${i.schedule}`, body: { note: 'mine now' } }),
  'DELETE /api/v1/deployments/:id/schedules/:scheduleId': (i) => ({ path: `/deployments/${i.deployment}/schedules/${i.schedule}` }),
  'POST /api/v1/deployments/:id/schedules/:scheduleId/pause': (i) => ({ path: `/deployments/${i.deployment}/schedules/${i.schedule}/pause`, body: { note: 'mine now' } }),
  'POST /api/v1/deployments/:id/schedules/:scheduleId/unpause': (i) => ({ path: `/deployments/${i.deployment}/schedules/${i.schedule}/unpause` }),
  'POST /api/v1/deployments/:id/schedules/:scheduleId/trigger': (i) => ({ path: `/deployments/${i.deployment}/schedules/${i.schedule}/trigger` }),
  'GET /api/v1/deployments/:id/schedules/:scheduleId/ticks': (i) => ({ path: `/deployments/${i.deployment}/schedules/${i.schedule}/ticks` }),
  'GET /api/v1/pipelines/:id': (i) => ({ path: `/pipelines/${i.pipeline}` }),
  'PATCH /api/v1/pipelines/:id': (i) => ({ path: `/pipelines/${i.pipeline}`, body: { name: 'taken-over' } }),
  'DELETE /api/v1/pipelines/:id': (i) => ({ path: `/pipelines/${i.pipeline}` }),
  'POST /api/v1/pipelines/:id/plan': (i) => ({ path: `/pipelines/${i.pipeline}/plan` }),
  'POST /api/v1/pipelines/:id/run': (i) => ({ path: `/pipelines/${i.pipeline}/run` }),
  'GET /api/v1/pipelines/:id/runs': (i) => ({ path: `/pipelines/${i.pipeline}/runs` }),
  'GET /api/v1/pipelines/:id/runs/:runId': (i) => ({ path: `/pipelines/${i.pipeline}/runs/${i.pipelineRun}` }),
  'POST /api/v1/pipelines/:id/runs/:runId/cancel': (i) => ({ path: `/pipelines/${i.pipeline}/runs/${i.pipelineRun}/cancel` }),
  'POST /api/v1/pipelines/:id/runs/:runId/retry': (i) => ({ path: `/pipelines/${i.pipeline}/runs/${i.pipelineRun}/retry` }),
  'POST /api/v1/pipelines/:id/runs/:runId/stages/:stage/approve': (i) => ({ path: `/pipelines/${i.pipeline}/runs/${i.pipelineRun}/stages/web/approve`, body: {} }),
  'POST /api/v1/pipelines/:id/runs/:runId/stages/:stage/reject': (i) => ({ path: `/pipelines/${i.pipeline}/runs/${i.pipelineRun}/stages/web/reject`, body: { reason: 'mine now' } }),
  'GET /api/v1/pipelines/:id/schedules': (i) => ({ path: `/pipelines/${i.pipeline}/schedules` }),
  'POST /api/v1/pipelines/:id/schedules': (i) => ({ path: `/pipelines/${i.pipeline}/schedules`, body: { name: 'mine-now', every: '1h', time_zone: 'UTC' } }),
  'GET /api/v1/pipelines/:id/schedules/:scheduleId': (i) => ({ path: `/pipelines/${i.pipeline}/schedules/${i.pipelineSchedule}` }),
  'PATCH /api/v1/pipelines/:id/schedules/:scheduleId': (i) => ({ path: `/pipelines/${i.pipeline}/schedules/${i.pipelineSchedule}`, body: { note: 'mine now' } }),
  'DELETE /api/v1/pipelines/:id/schedules/:scheduleId': (i) => ({ path: `/pipelines/${i.pipeline}/schedules/${i.pipelineSchedule}` }),
  'POST /api/v1/pipelines/:id/schedules/:scheduleId/pause': (i) => ({ path: `/pipelines/${i.pipeline}/schedules/${i.pipelineSchedule}/pause`, body: { note: 'mine now' } }),
  'POST /api/v1/pipelines/:id/schedules/:scheduleId/unpause': (i) => ({ path: `/pipelines/${i.pipeline}/schedules/${i.pipelineSchedule}/unpause` }),
  'POST /api/v1/pipelines/:id/schedules/:scheduleId/trigger': (i) => ({ path: `/pipelines/${i.pipeline}/schedules/${i.pipelineSchedule}/trigger` }),
  'GET /api/v1/pipelines/:id/schedules/:scheduleId/ticks': (i) => ({ path: `/pipelines/${i.pipeline}/schedules/${i.pipelineSchedule}/ticks` }),
  'DELETE /api/v1/secrets/:name': (i) => ({ path: `/secrets/${i.secret}` }),
  'GET /api/v1/conversations/:id': (i) => ({ path: `/conversations/${i.conversation}` }),
  'POST /api/v1/conversations/:id/messages': (i) => ({ path: `/conversations/${i.conversation}/messages`, body: { message: 'uptime' } }),
  'POST /api/v1/conversations/:id/cancel': (i) => ({ path: `/conversations/${i.conversation}/cancel` }),
  'POST /api/v1/conversations/:id/steps/:stepId/approve': (i) => ({ path: `/conversations/${i.conversation}/steps/${i.step}/approve` }),
  'POST /api/v1/conversations/:id/steps/:stepId/reject': (i) => ({ path: `/conversations/${i.conversation}/steps/${i.step}/reject` }),
  'GET /api/v1/migration-plans/:id': (i) => ({ path: `/migration-plans/${i.plan}` }),
  'DELETE /api/v1/migration-plans/:id': (i) => ({ path: `/migration-plans/${i.plan}` }),
  // Routes without an id: another organization's ids in the body, or lists that must come back empty.
  'POST /api/v1/deployments': (i) => ({ path: '/deployments', body: { name: 'mine-now', server_id: i.server, steps: [{ name: 'x', command: 'true' }] } }),
  'POST /api/v1/migration-plans': (i) => ({ path: '/migration-plans', body: { title: 'mine-now', source_server_id: i.server, target_server_id: i.server } }),
  'POST /api/v1/conversations': (i) => ({ path: '/conversations', body: { chatable_type: 'server', chatable_id: i.server, message: 'uptime' } }),
  'POST /api/v1/pipelines': (i) => ({ path: '/pipelines', body: { name: 'mine-now', stages: [{ name: 'web', deployment: i.deployment }, { name: 'by-name', deployment: 'web' }] } }),
  'GET /api/v1/servers': () => ({ path: '/servers' }),
  'GET /api/v1/pipelines': () => ({ path: '/pipelines' }),
  'GET /api/v1/deployments': () => ({ path: '/deployments' }),
  'GET /api/v1/conversations': () => ({ path: '/conversations' }),
  'GET /api/v1/migration-plans': () => ({ path: '/migration-plans' }),
  'GET /api/v1/secrets': () => ({ path: '/secrets' }),
  'GET /api/v1/tokens': () => ({ path: '/tokens' }),
  // Per organization by design: a stranger's writes land in its own organization.
  'POST /api/v1/servers': () => ({ path: '/servers', body: { title: 'theirs', host: '127.0.0.1', port: 1, username: 'x', auth_method: 'password', password: 'p' } }),
  // An inventory naming the victim's server's address: a dry run sees nothing of theirs to change.
  'POST /api/v1/servers/import': () => ({ path: '/servers/import', body: { format: 'ansible-ini', source: 'theirs', content: '[web]\nh1 ansible_host=127.0.0.1 ansible_user=x\n', dry_run: true } }),
  'PUT /api/v1/secrets/:name': (i) => ({ path: `/secrets/${i.secret}`, body: { value: 'the strangers-own value' } }),
  'POST /api/v1/tokens': () => ({ path: '/tokens', body: { name: 'theirs', scopes: ['read'] } }),
  'GET /api/v1/policy': () => ({ path: '/policy' }),
  'PUT /api/v1/policy': () => ({ path: '/policy', body: { allow_destructive: true, require_approval_for: [] } }),
  'GET /api/v1/openapi.json': () => ({ path: '/openapi.json' }),
  'GET /api/v1/me': () => ({ path: '/me' }),
  'GET /api/v1/me/tokens': () => ({ path: '/me/tokens' }),
  'GET /api/v1/me/approvals': () => ({ path: '/me/approvals' }),
  'GET /api/v1/runs': () => ({ path: '/runs' }),
  'GET /api/v1/schedules': () => ({ path: '/schedules' }),
  'GET /api/v1/people': () => ({ path: '/people' }),
  'POST /api/v1/people': () => ({ path: '/people', body: { name: 'Their Person' } }),
  'GET /api/v1/people/:id': (i) => ({ path: `/people/${i.person}` }),
  'PATCH /api/v1/people/:id': (i) => ({ path: `/people/${i.person}`, body: { disabled: true } }),
  'DELETE /api/v1/people/:id': (i) => ({ path: `/people/${i.person}` }),
  'POST /api/v1/people/:id/tokens': (i) => ({ path: `/people/${i.person}/tokens`, body: { name: 'stolen' } }),
  'GET /api/v1/service-accounts': () => ({ path: '/service-accounts' }),
  'POST /api/v1/service-accounts': () => ({ path: '/service-accounts', body: { name: 'their-ci' } }),
  'GET /api/v1/service-accounts/:id': (i) => ({ path: `/service-accounts/${i.account}` }),
  'PATCH /api/v1/service-accounts/:id': (i) => ({ path: `/service-accounts/${i.account}`, body: { description: 'taken over' } }),
  'DELETE /api/v1/service-accounts/:id': (i) => ({ path: `/service-accounts/${i.account}` }),
  'POST /api/v1/service-accounts/:id/tokens': (i) => ({ path: `/service-accounts/${i.account}/tokens`, body: { name: 'stolen' } }),
  'GET /api/v1/teams': () => ({ path: '/teams' }),
  'POST /api/v1/teams': (i) => ({ path: '/teams', body: { name: 'their team', members: [i.person] } }),
  'GET /api/v1/teams/:id': (i) => ({ path: `/teams/${i.team}` }),
  'PATCH /api/v1/teams/:id': (i) => ({ path: `/teams/${i.team}`, body: { members: [] } }),
  'DELETE /api/v1/teams/:id': (i) => ({ path: `/teams/${i.team}` }),
  'GET /api/v1/role-bindings': () => ({ path: '/role-bindings' }),
  'POST /api/v1/role-bindings': (i) => ({ path: '/role-bindings', body: { role: 'admin', subject: { type: 'service_account', id: i.account } } }),
  'GET /api/v1/role-bindings/:id': (i) => ({ path: `/role-bindings/${i.binding}` }),
  'PATCH /api/v1/role-bindings/:id': (i) => ({ path: `/role-bindings/${i.binding}`, body: { role: 'admin' } }),
  'DELETE /api/v1/role-bindings/:id': (i) => ({ path: `/role-bindings/${i.binding}` }),
  'GET /api/v1/freezes': () => ({ path: '/freezes' }),
  'POST /api/v1/freezes': () => ({ path: '/freezes', body: { name: 'their-freeze', starts_at: '2099-01-01T00:00:00Z', ends_at: '2099-01-02T00:00:00Z' } }),
  'GET /api/v1/freezes/:id': (i) => ({ path: `/freezes/${i.freeze}` }),
  'PATCH /api/v1/freezes/:id': (i) => ({ path: `/freezes/${i.freeze}`, body: { ends_at: '2099-01-01T00:00:01Z' } }),
  'DELETE /api/v1/freezes/:id': (i) => ({ path: `/freezes/${i.freeze}` }),
  // Plans and applies of the stranger's own (empty) files; its export holds nothing of the owner's (checked below).
  'POST /api/v1/config/plan': () => ({ path: '/config/plan', body: { source: 'platform-repo', files: [] } }),
  'POST /api/v1/config/apply': () => ({ path: '/config/apply', body: { source: 'platform-repo', files: [] } }),
  'GET /api/v1/config/export': () => ({ path: '/config/export' }),
  'GET /api/v1/config/schema': () => ({ path: '/config/schema' }),
  'GET /api/v1/config/sources': () => ({ path: '/config/sources' }),
  'GET /api/v1/config/drift': () => ({ path: '/config/drift' }),
  'POST /api/v1/config/sources': () => ({ path: '/config/sources', body: { name: 'platform-repo', git: { url: 'git://127.0.0.1:9/theirs.git' }, run_as: 'ci-web' } }),
  'GET /api/v1/config/sources/:id': (i) => ({ path: `/config/sources/${i.configSource}` }),
  'PATCH /api/v1/config/sources/:id': (i) => ({ path: `/config/sources/${i.configSource}`, body: { prune: true } }),
  'DELETE /api/v1/config/sources/:id': (i) => ({ path: `/config/sources/${i.configSource}` }),
  'POST /api/v1/config/sources/:id/sync': (i) => ({ path: `/config/sources/${i.configSource}/sync` }),
  'GET /api/v1/notification-channels': () => ({ path: '/notification-channels' }),
  'POST /api/v1/notification-channels': () => ({ path: '/notification-channels', body: { name: 'their-hooks', type: 'webhook', url: 'http://127.0.0.1:9/hooks', events: ['run.failed'] } }),
  'GET /api/v1/notification-channels/:id': (i) => ({ path: `/notification-channels/${i.channel}` }),
  'PATCH /api/v1/notification-channels/:id': (i) => ({ path: `/notification-channels/${i.channel}`, body: { url: 'http://127.0.0.1:10/theirs' } }),
  'DELETE /api/v1/notification-channels/:id': (i) => ({ path: `/notification-channels/${i.channel}` }),
  'GET /api/v1/notification-channels/:id/deliveries': (i) => ({ path: `/notification-channels/${i.channel}/deliveries` }),
  'POST /api/v1/notification-channels/:id/deliveries/:deliveryId/redeliver': (i) => ({ path: `/notification-channels/${i.channel}/deliveries/${i.delivery}/redeliver` }),
  'POST /api/v1/notification-channels/:id/test': (i) => ({ path: `/notification-channels/${i.channel}/test` }),
  'GET /api/v1/notification-settings': () => ({ path: '/notification-settings' }),
  'PUT /api/v1/notification-settings': () => ({ path: '/notification-settings', body: { refuse_private_addresses: true } }),
  'GET /api/v1/audit': (i) => ({ path: `/audit?server=${i.server}` }),
  'GET /api/v1/audit/export': (i) => ({ path: `/audit/export?server=${i.server}` }),
  'POST /api/v1/audit/verify': () => ({ path: '/audit/verify' }),
  'GET /api/v1/audit/checkpoints': () => ({ path: '/audit/checkpoints' }),
  'GET /api/v1/audit/choices': () => ({ path: '/audit/choices' }),
};

/** What a stranger gets: 404 for anything of another organization's; its own (empty) world otherwise. */
const EXPECTED: Record<string, number> = {
  'POST /api/v1/deployments': 422, // the server "does not exist" for it
  'POST /api/v1/migration-plans': 422,
  'POST /api/v1/pipelines': 422, // the deployment, by id or by name, "does not exist" for it
  'GET /api/v1/pipelines': 200,
  'GET /api/v1/servers': 200,
  'GET /api/v1/deployments': 200,
  'GET /api/v1/conversations': 200,
  'GET /api/v1/migration-plans': 200,
  'GET /api/v1/secrets': 200,
  'POST /api/v1/servers': 201,
  'POST /api/v1/servers/import': 200,
  'PUT /api/v1/secrets/:name': 200,
  'GET /api/v1/tokens': 200,
  'POST /api/v1/tokens': 201,
  'GET /api/v1/policy': 200,
  'PUT /api/v1/policy': 200,
  'GET /api/v1/openapi.json': 200,
  'GET /api/v1/me': 200,
  'GET /api/v1/me/tokens': 200,
  'GET /api/v1/me/approvals': 200,
  'GET /api/v1/runs': 200,
  'GET /api/v1/schedules': 200,
  'GET /api/v1/people': 200,
  'POST /api/v1/people': 201,
  'GET /api/v1/service-accounts': 200,
  'POST /api/v1/service-accounts': 201,
  'GET /api/v1/teams': 200,
  'POST /api/v1/teams': 422, // the person "does not exist" for it
  'GET /api/v1/role-bindings': 200,
  'GET /api/v1/freezes': 200,
  'POST /api/v1/freezes': 201,
  'POST /api/v1/config/plan': 200,
  'POST /api/v1/config/apply': 200,
  'GET /api/v1/config/export': 200,
  'GET /api/v1/config/schema': 200,
  'GET /api/v1/config/sources': 200,
  'GET /api/v1/config/drift': 200,
  'POST /api/v1/config/sources': 422, // the service account run_as "does not exist" for it
  'GET /api/v1/notification-channels': 200,
  'POST /api/v1/notification-channels': 201,
  'GET /api/v1/notification-settings': 200,
  'PUT /api/v1/notification-settings': 200,
  // The stranger's own trail: none of the owner's entries (below).
  'GET /api/v1/audit': 200,
  'GET /api/v1/audit/export': 200,
  'POST /api/v1/audit/verify': 200,
  'GET /api/v1/audit/checkpoints': 200,
  'GET /api/v1/audit/choices': 200,
};

describe('tenant isolation, route by route', () => {
  let bosun: SharedBosun;
  let owner: string;
  let stranger: string;
  let ids: Ids;
  const call = (token: string, method: Method, path: string, body?: object) => {
    const request = bosun.api[method](`/api/v1${path}`).set(bearer(token));
    return body ? request.send(body) : request;
  };

  beforeAll(async () => {
    bosun = await sharedBosun();
    owner = await bosun.token('owners');
    stranger = await bosun.token('strangers');
    const server = await userWithToken(bosun, owner).addServer({ host: '127.0.0.11' });
    const other = await userWithToken(bosun, owner).addServer({ host: '127.0.0.12' });
    await call(owner, 'put', '/policy', { allow_destructive: false, require_approval_for: ['read', 'change', 'destructive'] });
    const deployment = (await call(owner, 'post', '/deployments', { name: 'web', server_id: server, steps: [{ name: 'hello', command: 'echo hello' }] })).body.data.id;
    const run = await userWithToken(bosun, owner).runToEnd(deployment);
    await call(owner, 'put', '/secrets/db_password', { value: 'owners-secret-value' });
    const plan = (await call(owner, 'post', '/migration-plans', { title: 'move', source_server_id: server, target_server_id: other })).body.data.id;
    // Every step waits for approval: the conversation stays open, with a step to approve or reject.
    const conversation = (await call(owner, 'post', '/conversations', { chatable_type: 'server', chatable_id: server, message: 'show uptime' })).body.data.id;
    const waiting = await eventually(async () => (await call(owner, 'get', `/conversations/${conversation}`)).body.data, (c) => c.status === 'awaiting_approval');
    const schedule = (await call(owner, 'post', `/deployments/${deployment}/schedules`, { name: 'nightly', every: '24h', time_zone: 'UTC', paused: true })).body.data.id;
    const pipeline = (await call(owner, 'post', '/pipelines', { name: 'release', stages: [{ name: 'web', deployment: 'web' }] })).body.data.id;
    const pipelineRun = (await call(owner, 'post', `/pipelines/${pipeline}/run`, {})).body.run_id;
    await eventually(async () => (await call(owner, 'get', `/pipelines/${pipeline}/runs/${pipelineRun}`)).body.data.status, (status) => status === 'success');
    const pipelineSchedule = (await call(owner, 'post', `/pipelines/${pipeline}/schedules`, { name: 'nightly', every: '24h', time_zone: 'UTC', paused: true })).body.data.id;
    const token = (await call(owner, 'get', '/tokens')).body.data[0].id;
    const person = (await call(owner, 'post', '/people', { name: 'Alice' })).body.data.id;
    const account = (await call(owner, 'post', '/service-accounts', { name: 'ci-web' })).body.data.id;
    const team = (await call(owner, 'post', '/teams', { name: 'web team', members: [person] })).body.data.id;
    const binding = (await call(owner, 'post', '/role-bindings', { role: 'viewer', subject: { type: 'team', id: team } })).body.data.id;
    // A freeze far in the future: the owner's runs here are not frozen by it.
    const freeze = (await call(owner, 'post', '/freezes', { name: 'black-friday', starts_at: '2099-11-27T00:00:00Z', ends_at: '2099-11-30T00:00:00Z' })).body.data.id;
    const channel = (await call(owner, 'post', '/notification-channels', { name: 'ops-hooks', type: 'webhook', url: 'http://127.0.0.1:9/hooks', events: ['run.failed'] })).body.data.id;
    await call(owner, 'post', `/notification-channels/${channel}/test`);
    const delivery = (await eventually(async () => (await call(owner, 'get', `/notification-channels/${channel}/deliveries`)).body.data, (d) => d.length === 1))[0].id;
    const configSource = (await call(owner, 'post', '/config/sources', { name: 'platform-repo', git: { url: 'git://127.0.0.1:9/platform.git' }, run_as: 'ci-web' })).body.data.id;
    ids = { server, deployment, run: run.id, conversation, step: waiting.steps[0].id, plan, schedule, pipeline, pipelineRun, pipelineSchedule, secret: 'db_password', token, person, account, team, binding, freeze, channel, delivery, configSource };
  });
  afterAll(() => bosun.stop());

  test('every route is in the matrix', async () => {
    // The console's session is the caller's own (test/http/console-session.test.ts), not an organization's data;
    // the routes under /session come before any sign-in (test/e2e/oidc-sign-in.test.ts).
    const api = (await bosun.routes()).filter((r) => r.includes(' /api/v1/') && !r.endsWith(' /api/v1/session') && !r.includes(' /api/v1/session/'));
    expect(api.sort()).toEqual(Object.keys(MATRIX).sort());
  });

  test('another organization’s token gets 404 for every route that names the owner’s data, and sees none of it in lists', async () => {
    // The owner's tokens as they are (another test adds one): the stranger's attempts change none.
    const ownersTokens = async () => (await call(owner, 'get', '/tokens')).body.data.map((t: { id: string; revoked_at: string | null }) => [t.id, t.revoked_at]);
    const tokensBefore = await ownersTokens();
    expect(tokensBefore).toContainEqual([ids.token, null]);
    const results: Record<string, number> = {};
    for (const [route, fill] of Object.entries(MATRIX)) {
      const method = route.split(' ')[0]!.toLowerCase() as Method;
      const { path, body } = fill(ids);
      const res = await call(stranger, method, path, body);
      results[route] = res.status;
      if (res.status === 404) expect(res.body.error.code).toBe('not_found');
      if (res.status === 200 && Array.isArray(res.body.data)) {
        const owners = new Set(Object.values(ids));
        expect(res.body.data.filter((item: { id?: string }) => item.id && owners.has(item.id))).toEqual([]);
      }
    }
    expect(results).toEqual(Object.fromEntries(Object.keys(MATRIX).map((route) => [route, EXPECTED[route] ?? 404])));

    // The stranger's export holds nothing of the owner's definitions.
    const exported = ((await call(stranger, 'get', '/config/export')).body.data.files as Array<{ content: string }>).map((f) => f.content).join('\n');
    expect(exported).not.toMatch(/black-friday|ops-hooks|name: web\b|name: release\b/);
    // The owner's world is as it was.
    expect((await call(owner, 'get', `/deployments/${ids.deployment}`)).body.data.name).toBe('web');
    // Its run, and the one its pipeline's stage ran.
    expect((await call(owner, 'get', `/deployments/${ids.deployment}/runs`)).body.meta.total).toBe(2);
    expect((await call(owner, 'get', `/pipelines/${ids.pipeline}`)).body.data).toMatchObject({ name: 'release', stages: [{ name: 'web', deployment: { id: ids.deployment, name: 'web' } }] });
    const conversation = (await call(owner, 'get', `/conversations/${ids.conversation}`)).body.data;
    expect([conversation.status, conversation.messages.length, conversation.steps[0].approval.decision]).toEqual(['awaiting_approval', 1, null]);
    expect((await call(owner, 'get', `/migration-plans/${ids.plan}`)).status).toBe(200);
    expect((await call(owner, 'get', `/servers/${ids.server}`)).status).toBe(200);
    expect((await call(owner, 'get', '/secrets')).body.data).toEqual([expect.objectContaining({ name: 'db_password' })]);
    expect((await call(owner, 'get', '/policy')).body.data.require_approval_for).toEqual(['read', 'change', 'destructive']);
    expect(await ownersTokens()).toEqual(tokensBefore);
    expect((await call(owner, 'get', `/freezes/${ids.freeze}`)).body.data).toMatchObject({ name: 'black-friday', ends_at: '2099-11-30T00:00:00.000Z' });
    expect((await call(owner, 'get', `/notification-channels/${ids.channel}`)).body.data).toMatchObject({ name: 'ops-hooks', url: 'http://127.0.0.1:9/hooks' });
    expect((await call(owner, 'get', '/notification-settings')).body.data).toEqual({ refuse_private_addresses: false });
    expect((await call(owner, 'get', `/config/sources/${ids.configSource}`)).body.data).toMatchObject({ name: 'platform-repo', prune: false, run_as: { name: 'ci-web' } });
  });

  test('the audit trail shows, exports and verifies an organization’s own entries only', async () => {
    const owners = await eventually(async () => (await call(owner, 'get', `/audit?server=${ids.server}&per_page=100`)).body.data as { hash: string }[], (list) => list.length > 0);
    // The stranger's trail holds its own refused attempts on the owner's ids, and nothing of the owner's.
    const theirs = (await call(stranger, 'get', `/audit?server=${ids.server}&per_page=100`)).body.data as { hash: string; outcome: string }[];
    expect(new Set(theirs.map((entry) => entry.outcome))).toEqual(new Set(['not_found']));
    const everything = (await call(stranger, 'get', '/audit/export')).text;
    for (const entry of owners) expect(everything).not.toContain(entry.hash);
    const strangers = (await call(stranger, 'post', '/audit/verify')).body;
    const ownersVerdict = (await call(owner, 'post', '/audit/verify')).body;
    expect([strangers.ok, ownersVerdict.ok]).toEqual([true, true]);
  });

  test('a read-only token of the owner’s own organization is refused every write with 403', async () => {
    const reader = await bosun.token('owners', ['read']);
    // A plan is a POST that writes nothing: the read scope may ask for it.
    const writes = Object.entries(MATRIX).filter(([route]) => !route.startsWith('GET ') && !['POST /api/v1/deployments/:id/plan', 'POST /api/v1/pipelines/:id/plan'].includes(route));
    // Any identity makes tokens for itself (never wider than the calling token), and revokes only its own.
    const own: Record<string, [number, string | undefined]> = { 'POST /api/v1/tokens': [201, undefined], 'DELETE /api/v1/tokens/:id': [404, 'not_found'] };
    for (const [route, fill] of writes) {
      const { path, body } = fill(ids);
      const res = await call(reader, route.split(' ')[0]!.toLowerCase() as Method, path, body);
      expect([route, res.status, res.body.error?.code]).toEqual([route, ...(own[route] ?? [403, 'forbidden'])]);
    }
  });

  test('Socket.IO never delivers another organization’s events, even for guessed or real ids', async () => {
    const owners = userWithToken(bosun, owner);
    const socket = await connectSocket(bosun.url, stranger);
    const received: string[] = [];
    socket.onAny((event) => received.push(event));
    try {
      // A run and a conversation of the owner's that change while the stranger tries (this test's own: the other tests' ids stay as they are).
      const { id: deployment } = await owners.defineDeployment(ids.server, [{ name: 'wait', command: 'echo started; sleep 30' }]);
      const { run_id: run } = await owners.trigger(deployment);
      const { id: conversation } = await owners.startConversation(ids.server, 'show uptime');
      const step = (await owners.waitForConversation(conversation, (c) => c.status === 'awaiting_approval')).steps[0].id;
      const ownersRun = await owners.subscribe(run);
      const ownersConversation = await owners.subscribeConversation(conversation);

      for (const request of [{ run_id: run }, { run_id: ids.run }, { run_id: '0123456789abcdef01234567' }]) {
        expect(await socket.emitWithAck('subscribe', request)).toMatchObject({ ok: false, error: { code: 'not_found' } });
      }
      for (const request of [{ conversation_id: conversation }, { conversation_id: conversation, step_ids: [step] }, { conversation_id: ids.conversation }, { conversation_id: ids.conversation, step_ids: [ids.step] }]) {
        expect(await socket.emitWithAck('subscribe_conversation', request)).toMatchObject({ ok: false, error: { code: 'not_found' } });
      }
      // The owner's run and conversation change meanwhile, to their ends...
      await owners.waitForRun(deployment, run, (r) => r.steps[0].output.includes('started'));
      await owners.cancelRun(deployment, run);
      expect((await owners.request('post', `/conversations/${conversation}/cancel`)).status).toBe(202);
      // ...which the owner's socket was sent; anything sent to the stranger's socket with them arrived before the answer to a later request on it.
      await ownersRun.until((e) => e.status === 'cancelled');
      await eventually(async () => ownersConversation.updates().at(-1)?.status, (s) => s === 'cancelled');
      expect(await socket.emitWithAck('subscribe', { run_id: run })).toMatchObject({ ok: false, error: { code: 'not_found' } });
      expect(received).toEqual([]);
    } finally {
      owners.close();
      socket.close();
    }
  });
});
