import { randomBytes } from 'node:crypto';
import { bosunOperations } from '../../src/api/bosun-api';
import { ROLE_ACTIONS, ROLES, type Role } from '../../src/domain/access/roles';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { eventually } from '../support/eventually';
import { userWithToken } from '../support/client';
import { recordedRoutes } from '../../src/api/audit/recorder';
import { routeAction } from '../../src/api/audit/actions';
import { LOOPBACK_ADDRESSES } from '../support/sshd';

const FLEET_ADDRESSES = LOOPBACK_ADDRESSES.filter((host) => host !== '127.0.0.1');

/*
 * Who may do what, route by route: every route of the API × every role × a binding limited to the
 * servers tagged `web` or one for the whole organization × what the request touches (a `web` thing,
 * or a `db` one). The routes come from the app itself and their actions from the OpenAPI document
 * built from the same operations: a route added without a line here, or without an action, fails.
 * Another organization's data is the third column: test/http/tenant-matrix.test.ts.
 */

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Scope = 'web' | 'db';
type Json = any;

interface World {
  server: Record<Scope, string>;
  second: Record<Scope, string>;
  deployment: Record<Scope, string>;
  run: Record<Scope, string>;
  conversation: Record<Scope, string>;
  step: Record<Scope, string>;
  plan: Record<Scope, string>;
  schedule: Record<Scope, string>;
  pipeline: Record<Scope, string>;
  /** A finished (successful) run of each pipeline. */
  pipelineRun: Record<Scope, string>;
  pipelineSchedule: Record<Scope, string>;
  person: string;
  account: string;
  team: string;
  binding: string;
  freeze: string;
  channel: string;
  delivery: string;
  configSource: string;
}

/** What makes a fresh thing for a destructive call, as the organization's administrator. */
interface Fresh {
  server(scope: Scope): Promise<string>;
  deployment(scope: Scope): Promise<string>;
  plan(scope: Scope): Promise<string>;
  schedule(scope: Scope): Promise<string>;
  pipeline(scope: Scope): Promise<string>;
  pipelineSchedule(scope: Scope): Promise<string>;
  person(): Promise<string>;
  account(): Promise<string>;
  team(): Promise<string>;
  binding(): Promise<string>;
  secret(): Promise<string>;
  freeze(): Promise<string>;
  channel(): Promise<string>;
  configSource(): Promise<string>;
  /** A token of the caller's own (made with the caller's token). */
  ownToken(caller: string): Promise<string>;
}

/**
 * How a route is tried: the request for a thing of `scope`, and what kind of route it is —
 * `scoped`: it names a thing on servers (outside the caller's bindings it is a 404);
 * `create`: its body points at servers (outside, the answer `outside` gives);
 * `org`: about the organization, not its servers.
 */
interface Case {
  kind: 'scoped' | 'create' | 'org';
  outside?: number;
  request(scope: Scope, w: World, fresh: Fresh, caller: string): Promise<{ path: string; body?: object }> | { path: string; body?: object };
}

const n = () => randomBytes(3).toString('hex');
const scoped = (request: Case['request']): Case => ({ kind: 'scoped', request });
const org = (request: Case['request']): Case => ({ kind: 'org', request });

const CASES: Record<string, Case> = {
  'GET /api/v1/servers': org(() => ({ path: '/servers' })),
  'POST /api/v1/servers': { kind: 'create', outside: 403, request: (s) => ({ path: '/servers', body: { title: `new-${n()}`, host: `127.0.9.${Math.floor(Math.random() * 250) + 1}`, port: 1, username: `u${n()}`, auth_method: 'password', password: 'p', tags: [s] } }) },
  'POST /api/v1/servers/import': { kind: 'create', outside: 403, request: (s) => ({ path: '/servers/import', body: { format: 'ansible-ini', source: `inv-${n()}`, content: `[${s}]\nh-${n()} ansible_host=127.0.9.${Math.floor(Math.random() * 250) + 1} ansible_user=u${n()}`, dry_run: true } }) },
  'GET /api/v1/servers/:id': scoped((s, w) => ({ path: `/servers/${w.server[s]}` })),
  'GET /api/v1/servers/:id/activity': scoped((s, w) => ({ path: `/servers/${w.server[s]}/activity` })),
  'PATCH /api/v1/servers/:id': scoped((s, w) => ({ path: `/servers/${w.server[s]}`, body: { title: `${s}-a` } })),
  'POST /api/v1/servers/:id/verify': scoped((s, w) => ({ path: `/servers/${w.server[s]}/verify` })),
  'DELETE /api/v1/servers/:id': scoped(async (s, _w, f) => ({ path: `/servers/${await f.server(s)}` })),
  'GET /api/v1/deployments': org(() => ({ path: '/deployments' })),
  'POST /api/v1/deployments': { kind: 'create', outside: 422, request: (s, w) => ({ path: '/deployments', body: { name: `d-${n()}`, server_id: w.server[s], steps: [{ name: 'x', command: 'true' }] } }) },
  'GET /api/v1/deployments/:id': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}` })),
  'PATCH /api/v1/deployments/:id': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}`, body: { name: `deploy-${s}` } })),
  'DELETE /api/v1/deployments/:id': scoped(async (s, _w, f) => ({ path: `/deployments/${await f.deployment(s)}` })),
  'POST /api/v1/deployments/:id/run': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/run` })),
  'POST /api/v1/deployments/:id/plan': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/plan` })),
  'GET /api/v1/deployments/:id/runs': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/runs` })),
  'GET /api/v1/deployments/:id/runs/:runId': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/runs/${w.run[s]}` })),
  'POST /api/v1/deployments/:id/runs/:runId/cancel': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/runs/${w.run[s]}/cancel` })),
  // A finished run: past the gate, each answers 409 (nothing waits, nothing runs).
  'POST /api/v1/deployments/:id/runs/:runId/approve': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/runs/${w.run[s]}/approve`, body: { comment: 'looks good' } })),
  'POST /api/v1/deployments/:id/runs/:runId/reject': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/runs/${w.run[s]}/reject`, body: { reason: 'not now' } })),
  'POST /api/v1/deployments/:id/runs/:runId/pause': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/runs/${w.run[s]}/pause`, body: { reason: 'looking' } })),
  'POST /api/v1/deployments/:id/runs/:runId/rollback': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/runs/${w.run[s]}/rollback`, body: {} })),
  'POST /api/v1/deployments/:id/runs/:runId/resume': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/runs/${w.run[s]}/resume` })),
  'GET /api/v1/deployments/:id/schedules': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/schedules` })),
  'POST /api/v1/deployments/:id/schedules': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/schedules`, body: { name: `sched-${n()}`, every: '24h', time_zone: 'UTC', paused: true } })),
  'GET /api/v1/deployments/:id/schedules/:scheduleId': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/schedules/${w.schedule[s]}` })),
  'PATCH /api/v1/deployments/:id/schedules/:scheduleId': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/schedules/${w.schedule[s]}`, body: { note: `changed ${n()}` } })),
  'DELETE /api/v1/deployments/:id/schedules/:scheduleId': scoped(async (s, w, f) => ({ path: `/deployments/${w.deployment[s]}/schedules/${await f.schedule(s)}` })),
  'POST /api/v1/deployments/:id/schedules/:scheduleId/pause': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/schedules/${w.schedule[s]}/pause`, body: { note: 'looking' } })),
  'POST /api/v1/deployments/:id/schedules/:scheduleId/unpause': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/schedules/${w.schedule[s]}/unpause`, body: { note: 'done' } })),
  'POST /api/v1/deployments/:id/schedules/:scheduleId/trigger': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/schedules/${w.schedule[s]}/trigger` })),
  'GET /api/v1/deployments/:id/schedules/:scheduleId/ticks': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/schedules/${w.schedule[s]}/ticks` })),
  'POST /api/v1/deployments/:id/runs/:runId/retry': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/runs/${w.run[s]}/retry` })),
  'GET /api/v1/deployments/:id/runs/:runId/targets/:serverId': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/runs/${w.run[s]}/targets/${w.server[s]}` })),
  'GET /api/v1/deployments/:id/runs/:runId/steps/:step/log': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/runs/${w.run[s]}/steps/1/log` })),
  'GET /api/v1/deployments/:id/runs/:runId/targets/:serverId/steps/:step/log': scoped((s, w) => ({ path: `/deployments/${w.deployment[s]}/runs/${w.run[s]}/targets/${w.server[s]}/steps/1/log` })),
  'GET /api/v1/pipelines': org(() => ({ path: '/pipelines' })),
  'POST /api/v1/pipelines/:id/plan': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/plan` })),
  'POST /api/v1/pipelines/:id/run': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/run` })),
  'GET /api/v1/pipelines/:id/runs': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/runs` })),
  'GET /api/v1/pipelines/:id/runs/:runId': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/runs/${w.pipelineRun[s]}` })),
  // A finished pipeline run: past the gate, each answers 409 (nothing waits, nothing runs, nothing to retry).
  'POST /api/v1/pipelines/:id/runs/:runId/cancel': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/runs/${w.pipelineRun[s]}/cancel` })),
  'POST /api/v1/pipelines/:id/runs/:runId/retry': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/runs/${w.pipelineRun[s]}/retry` })),
  'POST /api/v1/pipelines/:id/runs/:runId/stages/:stage/approve': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/runs/${w.pipelineRun[s]}/stages/only/approve`, body: { comment: 'looks good' } })),
  'POST /api/v1/pipelines/:id/runs/:runId/stages/:stage/reject': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/runs/${w.pipelineRun[s]}/stages/only/reject`, body: { reason: 'not now' } })),
  // A stage's deployment the caller may not read is no deployment of its organization: 422.
  'POST /api/v1/pipelines': { kind: 'create', outside: 422, request: (s, w) => ({ path: '/pipelines', body: { name: `p-${n()}`, stages: [{ name: 'only', deployment: w.deployment[s] }] } }) },
  'GET /api/v1/pipelines/:id': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}` })),
  'PATCH /api/v1/pipelines/:id': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}`, body: { description: `changed ${n()}` } })),
  'DELETE /api/v1/pipelines/:id': scoped(async (s, _w, f) => ({ path: `/pipelines/${await f.pipeline(s)}` })),
  'GET /api/v1/pipelines/:id/schedules': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/schedules` })),
  'POST /api/v1/pipelines/:id/schedules': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/schedules`, body: { name: `sched-${n()}`, every: '24h', time_zone: 'UTC', paused: true } })),
  'GET /api/v1/pipelines/:id/schedules/:scheduleId': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/schedules/${w.pipelineSchedule[s]}` })),
  'PATCH /api/v1/pipelines/:id/schedules/:scheduleId': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/schedules/${w.pipelineSchedule[s]}`, body: { note: `changed ${n()}` } })),
  'DELETE /api/v1/pipelines/:id/schedules/:scheduleId': scoped(async (s, w, f) => ({ path: `/pipelines/${w.pipeline[s]}/schedules/${await f.pipelineSchedule(s)}` })),
  'POST /api/v1/pipelines/:id/schedules/:scheduleId/pause': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/schedules/${w.pipelineSchedule[s]}/pause`, body: { note: 'looking' } })),
  'POST /api/v1/pipelines/:id/schedules/:scheduleId/unpause': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/schedules/${w.pipelineSchedule[s]}/unpause`, body: { note: 'done' } })),
  'POST /api/v1/pipelines/:id/schedules/:scheduleId/trigger': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/schedules/${w.pipelineSchedule[s]}/trigger` })),
  'GET /api/v1/pipelines/:id/schedules/:scheduleId/ticks': scoped((s, w) => ({ path: `/pipelines/${w.pipeline[s]}/schedules/${w.pipelineSchedule[s]}/ticks` })),
  'GET /api/v1/conversations': org(() => ({ path: '/conversations' })),
  'POST /api/v1/conversations': { kind: 'create', outside: 404, request: (s, w) => ({ path: '/conversations', body: { chatable_type: 'server', chatable_id: w.server[s], message: 'show uptime' } }) },
  'GET /api/v1/conversations/:id': scoped((s, w) => ({ path: `/conversations/${w.conversation[s]}` })),
  'GET /api/v1/conversations/:id/steps/:stepId/log': scoped((s, w) => ({ path: `/conversations/${w.conversation[s]}/steps/${w.step[s]}/log` })),
  'POST /api/v1/conversations/:id/messages': scoped((s, w) => ({ path: `/conversations/${w.conversation[s]}/messages`, body: { message: 'show the hostname' } })),
  'POST /api/v1/conversations/:id/cancel': scoped((s, w) => ({ path: `/conversations/${w.conversation[s]}/cancel` })),
  'POST /api/v1/conversations/:id/steps/:stepId/approve': scoped((s, w) => ({ path: `/conversations/${w.conversation[s]}/steps/${w.step[s]}/approve` })),
  'POST /api/v1/conversations/:id/steps/:stepId/reject': scoped((s, w) => ({ path: `/conversations/${w.conversation[s]}/steps/${w.step[s]}/reject` })),
  'GET /api/v1/migration-plans': org(() => ({ path: '/migration-plans' })),
  'POST /api/v1/migration-plans': { kind: 'create', outside: 422, request: (s, w) => ({ path: '/migration-plans', body: { title: `move-${n()}`, source_server_id: w.server[s], target_server_id: w.second[s] } }) },
  'GET /api/v1/migration-plans/:id': scoped((s, w) => ({ path: `/migration-plans/${w.plan[s]}` })),
  'DELETE /api/v1/migration-plans/:id': scoped(async (s, _w, f) => ({ path: `/migration-plans/${await f.plan(s)}` })),
  'GET /api/v1/secrets': org(() => ({ path: '/secrets' })),
  'PUT /api/v1/secrets/:name': org(() => ({ path: `/secrets/s_${n()}`, body: { value: 'a value' } })),
  'DELETE /api/v1/secrets/:name': org(async (_s, _w, f) => ({ path: `/secrets/${await f.secret()}` })),
  'GET /api/v1/policy': org(() => ({ path: '/policy' })),
  'PUT /api/v1/policy': org(() => ({ path: '/policy', body: { allow_destructive: false, require_approval_for: ['read', 'change', 'destructive'] } })),
  'GET /api/v1/tokens': org(() => ({ path: '/tokens' })),
  'POST /api/v1/tokens': org(() => ({ path: '/tokens', body: { name: `t-${n()}`, scopes: ['read'] } })),
  'DELETE /api/v1/tokens/:id': org(async (_s, _w, f, caller) => ({ path: `/tokens/${await f.ownToken(caller)}` })),
  'GET /api/v1/me': org(() => ({ path: '/me' })),
  'GET /api/v1/me/tokens': org(() => ({ path: '/me/tokens' })),
  'GET /api/v1/me/approvals': org(() => ({ path: '/me/approvals' })),
  'GET /api/v1/runs': org(() => ({ path: '/runs' })),
  'GET /api/v1/schedules': org(() => ({ path: '/schedules' })),
  'GET /api/v1/openapi.json': org(() => ({ path: '/openapi.json' })),
  'GET /api/v1/people': org(() => ({ path: '/people' })),
  'POST /api/v1/people': org(() => ({ path: '/people', body: { name: `Person ${n()}` } })),
  'GET /api/v1/people/:id': org((_s, w) => ({ path: `/people/${w.person}` })),
  'PATCH /api/v1/people/:id': org((_s, w) => ({ path: `/people/${w.person}`, body: { email: null } })),
  'DELETE /api/v1/people/:id': org(async (_s, _w, f) => ({ path: `/people/${await f.person()}` })),
  'POST /api/v1/people/:id/tokens': org((_s, w) => ({ path: `/people/${w.person}/tokens`, body: { name: `t-${n()}` } })),
  'GET /api/v1/service-accounts': org(() => ({ path: '/service-accounts' })),
  'POST /api/v1/service-accounts': org(() => ({ path: '/service-accounts', body: { name: `sa-${n()}` } })),
  'GET /api/v1/service-accounts/:id': org((_s, w) => ({ path: `/service-accounts/${w.account}` })),
  'PATCH /api/v1/service-accounts/:id': org((_s, w) => ({ path: `/service-accounts/${w.account}`, body: { description: 'nightly jobs' } })),
  'DELETE /api/v1/service-accounts/:id': org(async (_s, _w, f) => ({ path: `/service-accounts/${await f.account()}` })),
  'POST /api/v1/service-accounts/:id/tokens': org((_s, w) => ({ path: `/service-accounts/${w.account}/tokens`, body: { name: `t-${n()}` } })),
  'GET /api/v1/teams': org(() => ({ path: '/teams' })),
  'POST /api/v1/teams': org(() => ({ path: '/teams', body: { name: `team ${n()}` } })),
  'GET /api/v1/teams/:id': org((_s, w) => ({ path: `/teams/${w.team}` })),
  'PATCH /api/v1/teams/:id': org((_s, w) => ({ path: `/teams/${w.team}`, body: { oidc_groups: ['ops'] } })),
  'DELETE /api/v1/teams/:id': org(async (_s, _w, f) => ({ path: `/teams/${await f.team()}` })),
  'GET /api/v1/role-bindings': org(() => ({ path: '/role-bindings' })),
  'POST /api/v1/role-bindings': org((_s, w) => ({ path: '/role-bindings', body: { role: 'viewer', subject: { type: 'service_account', id: w.account } } })),
  'GET /api/v1/role-bindings/:id': org((_s, w) => ({ path: `/role-bindings/${w.binding}` })),
  'PATCH /api/v1/role-bindings/:id': org((_s, w) => ({ path: `/role-bindings/${w.binding}`, body: { max_targets_per_run: null } })),
  'DELETE /api/v1/role-bindings/:id': org(async (_s, _w, f) => ({ path: `/role-bindings/${await f.binding()}` })),
  // Freezes far in the future: they freeze none of the runs here.
  'GET /api/v1/freezes': org(() => ({ path: '/freezes' })),
  'POST /api/v1/freezes': org(() => ({ path: '/freezes', body: { name: `f-${n()}`, starts_at: '2099-01-01T00:00:00Z', ends_at: '2099-01-02T00:00:00Z' } })),
  'GET /api/v1/freezes/:id': org((_s, w) => ({ path: `/freezes/${w.freeze}` })),
  'PATCH /api/v1/freezes/:id': org((_s, w) => ({ path: `/freezes/${w.freeze}`, body: { note: 'checked' } })),
  'DELETE /api/v1/freezes/:id': org(async (_s, _w, f) => ({ path: `/freezes/${await f.freeze()}` })),
  // Definitions in Git: files with no document change nothing (a kind's own rule is tested in test/config/apply.test.ts).
  'POST /api/v1/config/plan': org(() => ({ path: '/config/plan', body: { source: `src-${n()}`, files: [] } })),
  'POST /api/v1/config/apply': org(() => ({ path: '/config/apply', body: { source: `src-${n()}`, files: [] } })),
  'GET /api/v1/config/export': org(() => ({ path: '/config/export' })),
  'GET /api/v1/config/schema': org(() => ({ path: '/config/schema' })),
  // A source whose repository nothing serves: a sync started here fails as unreachable, changing nothing.
  'GET /api/v1/config/sources': org(() => ({ path: '/config/sources' })),
  'POST /api/v1/config/sources': org(() => ({ path: '/config/sources', body: { name: `src-${n()}`, git: { url: 'git://127.0.0.1:9/none.git' }, run_as: 'nightly' } })),
  'GET /api/v1/config/sources/:id': org((_s, w) => ({ path: `/config/sources/${w.configSource}` })),
  'PATCH /api/v1/config/sources/:id': org((_s, w) => ({ path: `/config/sources/${w.configSource}`, body: { prune: false } })),
  'DELETE /api/v1/config/sources/:id': org(async (_s, _w, f) => ({ path: `/config/sources/${await f.configSource()}` })),
  'POST /api/v1/config/sources/:id/sync': org((_s, w) => ({ path: `/config/sources/${w.configSource}/sync` })),
  // Nothing drifted: readers of the whole organization see the kinds they may read (an empty list).
  'GET /api/v1/config/drift': org(() => ({ path: '/config/drift' })),
  'GET /api/v1/notification-channels': org(() => ({ path: '/notification-channels' })),
  'POST /api/v1/notification-channels': org(() => ({ path: '/notification-channels', body: { name: `c-${n()}`, type: 'webhook', url: 'http://127.0.0.1:9/hooks', events: ['run.failed'] } })),
  'GET /api/v1/notification-channels/:id': org((_s, w) => ({ path: `/notification-channels/${w.channel}` })),
  'PATCH /api/v1/notification-channels/:id': org((_s, w) => ({ path: `/notification-channels/${w.channel}`, body: { events: ['run.failed', 'run.succeeded'] } })),
  'DELETE /api/v1/notification-channels/:id': org(async (_s, _w, f) => ({ path: `/notification-channels/${await f.channel()}` })),
  'GET /api/v1/notification-channels/:id/deliveries': org((_s, w) => ({ path: `/notification-channels/${w.channel}/deliveries` })),
  'POST /api/v1/notification-channels/:id/deliveries/:deliveryId/redeliver': org((_s, w) => ({ path: `/notification-channels/${w.channel}/deliveries/${w.delivery}/redeliver` })),
  'POST /api/v1/notification-channels/:id/test': org((_s, w) => ({ path: `/notification-channels/${w.channel}/test` })),
  'GET /api/v1/notification-settings': org(() => ({ path: '/notification-settings' })),
  'PUT /api/v1/notification-settings': org(() => ({ path: '/notification-settings', body: { refuse_private_addresses: false } })),
  'GET /api/v1/audit': org(() => ({ path: '/audit' })),
  'GET /api/v1/audit/export': org(() => ({ path: '/audit/export?action=freeze.create' })),
  'POST /api/v1/audit/verify': org(() => ({ path: '/audit/verify' })),
  'GET /api/v1/audit/checkpoints': org(() => ({ path: '/audit/checkpoints' })),
  'GET /api/v1/audit/choices': org(() => ({ path: '/audit/choices' })),
};

/** Routes only people may use once past the gate (the matrix's callers are service accounts, and the steps wait). */
const PEOPLE_ONLY = new Set(['POST /api/v1/conversations/:id/steps/:stepId/approve', 'POST /api/v1/conversations/:id/steps/:stepId/reject']);

const OPERATIONS = new Map(bosunOperations.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op]));

/** Whether a caller with `role`, bound to `web` servers or to all, may make this request about a `scope` thing. */
function allowed(route: string, role: Role, binding: 'web' | 'all', scope: Scope): boolean {
  const op = OPERATIONS.get(route)!;
  if (op.scope === null || op.scope === 'any') return true;
  const has = ROLE_ACTIONS[role].includes(op.scope);
  if (op.everywhere) return has && binding === 'all';
  if (CASES[route]!.kind === 'org') return has;
  return has && (binding === 'all' || scope === 'web');
}

/**
 * The refusal expected when not allowed: a role without the action anywhere is refused before
 * anything is looked up (403); outside every binding a thing does not exist for the caller (404).
 */
function refusal(route: string, role: Role, binding: 'web' | 'all', scope: Scope): number {
  const c = CASES[route]!;
  const action = OPERATIONS.get(route)!.scope;
  if (action && action !== 'any' && !ROLE_ACTIONS[role].includes(action)) return 403;
  const outside = binding === 'web' && scope === 'db';
  if (outside && c.kind === 'scoped') return 404;
  if (outside && c.kind === 'create') return c.outside!;
  return 403;
}

/** `work` on each of `items`, at most `width` at once; the results in the items' order. */
async function inTurns<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  return results;
}

describe('permissions, route by route: every role, bound to some servers or to all', () => {
  let bosun: SharedBosun;
  let admin: string;
  let w: World;
  let fresh: Fresh;
  const call = (token: string, method: Method, path: string, body?: object) => {
    const request = bosun.api[method](`/api/v1${path}`).set(bearer(token));
    return body ? request.send(body) : request;
  };
  const created = async (token: string, method: Method, path: string, body?: object) => {
    const res = await call(token, method, path, body);
    if (res.status !== 201) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.id as string;
  };

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await bosun.token('acme');
    const ops = userWithToken(bosun, admin);
    const hosts = FLEET_ADDRESSES.slice(0, 4);
    const server = (tag: Scope) => {
      const host = hosts.shift()!;
      return ops.addServer({ host, tags: [tag], title: `${tag}-${host}` });
    };
    const servers = { web: await server('web'), db: await server('db') };
    const second = { web: await server('web'), db: await server('db') };
    await call(admin, 'put', '/policy', { allow_destructive: false, require_approval_for: ['read', 'change', 'destructive'] });
    const deployment = { web: (await ops.defineDeployment(servers.web, [{ name: 'hello', command: 'echo hello' }], 'deploy-web')).id, db: (await ops.defineDeployment(servers.db, [{ name: 'hello', command: 'echo hello' }], 'deploy-db')).id };
    const run = { web: (await ops.runToEnd(deployment.web)).id, db: (await ops.runToEnd(deployment.db)).id };
    const conversation: Record<Scope, string> = { web: '', db: '' };
    const step: Record<Scope, string> = { web: '', db: '' };
    for (const s of ['web', 'db'] as const) {
      conversation[s] = (await ops.startConversation(servers[s], 'show uptime')).id;
      step[s] = (await ops.waitForConversation(conversation[s], (c: Json) => c.status === 'awaiting_approval')).steps[0].id;
    }
    const plan = {
      web: await created(admin, 'post', '/migration-plans', { title: 'web move', source_server_id: servers.web, target_server_id: second.web }),
      db: await created(admin, 'post', '/migration-plans', { title: 'db move', source_server_id: servers.db, target_server_id: second.db }),
    };
    const schedule = {
      web: await created(admin, 'post', `/deployments/${deployment.web}/schedules`, { name: 'nightly', every: '24h', time_zone: 'UTC', paused: true }),
      db: await created(admin, 'post', `/deployments/${deployment.db}/schedules`, { name: 'nightly', every: '24h', time_zone: 'UTC', paused: true }),
    };
    const newPipeline = (s: Scope) => created(admin, 'post', '/pipelines', { name: `release-${s}-${n()}`, stages: [{ name: 'only', deployment: deployment[s] }] });
    const pipeline = { web: await newPipeline('web'), db: await newPipeline('db') };
    const pipelineRun: Record<Scope, string> = { web: '', db: '' };
    for (const s of ['web', 'db'] as const) {
      pipelineRun[s] = (await call(admin, 'post', `/pipelines/${pipeline[s]}/run`, {})).body.run_id;
      await eventually(async () => (await call(admin, 'get', `/pipelines/${pipeline[s]}/runs/${pipelineRun[s]}`)).body.data.status, (status) => status === 'success');
    }
    const newPipelineSchedule = (s: Scope) => created(admin, 'post', `/pipelines/${pipeline[s]}/schedules`, { name: `spare-${n()}`, every: '24h', time_zone: 'UTC', paused: true });
    const pipelineSchedule = { web: await newPipelineSchedule('web'), db: await newPipelineSchedule('db') };
    const person = await created(admin, 'post', '/people', { name: 'Alice' });
    const account = await created(admin, 'post', '/service-accounts', { name: 'nightly' });
    const team = await created(admin, 'post', '/teams', { name: 'web team', members: [person] });
    const binding = await created(admin, 'post', '/role-bindings', { role: 'viewer', subject: { type: 'team', id: team } });
    const futureFreeze = () => ({ name: `f-${n()}`, starts_at: '2099-01-01T00:00:00Z', ends_at: '2099-01-02T00:00:00Z' });
    const freeze = await created(admin, 'post', '/freezes', futureFreeze());
    // A channel (to a port nothing listens on) with a delivery: its test ping's.
    const newChannel = () => created(admin, 'post', '/notification-channels', { name: `c-${n()}`, type: 'webhook', url: 'http://127.0.0.1:9/hooks', events: ['run.failed'] });
    const channel = await newChannel();
    await call(admin, 'post', `/notification-channels/${channel}/test`);
    const delivery = (await eventually(async () => (await call(admin, 'get', `/notification-channels/${channel}/deliveries`)).body.data as { id: string }[], (d) => d.length === 1))[0]!.id;
    const newConfigSource = () => created(admin, 'post', '/config/sources', { name: `src-${n()}`, git: { url: 'git://127.0.0.1:9/none.git' }, run_as: 'nightly' });
    const configSource = await newConfigSource();
    w = { server: servers, second, deployment, run, conversation, step, plan, schedule, pipeline, pipelineRun, pipelineSchedule, person, account, team, binding, freeze, channel, delivery, configSource };

    let spare = 1;
    fresh = {
      server: async (s) => created(admin, 'post', '/servers', { title: `spare-${spare}`, host: `127.0.8.${spare++}`, port: 1, username: 'x', auth_method: 'password', password: 'p', tags: [s] }),
      deployment: async (s) => created(admin, 'post', '/deployments', { name: `spare-${n()}`, server_id: servers[s], steps: [{ name: 'x', command: 'true' }] }),
      plan: async (s) => created(admin, 'post', '/migration-plans', { title: `spare-${n()}`, source_server_id: servers[s], target_server_id: second[s] }),
      schedule: async (s) => created(admin, 'post', `/deployments/${deployment[s]}/schedules`, { name: `spare-${n()}`, every: '24h', time_zone: 'UTC', paused: true }),
      pipeline: newPipeline,
      pipelineSchedule: newPipelineSchedule,
      person: async () => created(admin, 'post', '/people', { name: `Spare ${n()}` }),
      account: async () => created(admin, 'post', '/service-accounts', { name: `spare-${n()}` }),
      team: async () => created(admin, 'post', '/teams', { name: `spare ${n()}` }),
      binding: async () => created(admin, 'post', '/role-bindings', { role: 'viewer', subject: { type: 'service_account', id: account } }),
      secret: async () => {
        const name = `s_${n()}`;
        await call(admin, 'put', `/secrets/${name}`, { value: 'a value' });
        return name;
      },
      freeze: async () => created(admin, 'post', '/freezes', futureFreeze()),
      channel: newChannel,
      configSource: newConfigSource,
      ownToken: async (caller) => created(caller, 'post', '/tokens', { name: `own-${n()}`, scopes: ['read'] }),
    };
  }, 180_000);
  afterAll(() => bosun.stop());

  test('every route is in the matrix, and every authenticated one names its action', async () => {
    // The console's sign-in routes come before any identity (test/http/console-session.test.ts, test/e2e/oidc-sign-in.test.ts).
    const api = (await bosun.routes()).filter((r) => r.includes(' /api/v1/') && !r.endsWith(' /api/v1/session') && !r.includes(' /api/v1/session/'));
    expect(api.sort()).toEqual(Object.keys(CASES).sort());
    // Only the document itself is read without a token.
    for (const route of api.filter((r) => r !== 'GET /api/v1/openapi.json')) expect([route, OPERATIONS.get(route)?.scope]).toEqual([route, expect.anything()]);
  });

  test.each(ROLES.flatMap((role) => [[role, 'web'] as const, [role, 'all'] as const]))('%s bound to %s servers: allowed where its role and binding reach, 403 or 404 elsewhere', async (role, binding) => {
    const subject = await created(admin, 'post', '/service-accounts', { name: `${role}-${binding}-${n()}` });
    await created(admin, 'post', '/role-bindings', { role, subject: { type: 'service_account', id: subject }, ...(binding === 'web' ? { servers: { tags: ['web'] } } : {}) });
    const token = (await call(admin, 'post', `/service-accounts/${subject}/tokens`, { name: `t-${n()}` })).body.data.token as string;

    // Every route × both scopes, a few requests at a time (each request stands alone: what one changes
    // is its own fresh thing, or a field no other reads), the outcomes in the matrix's order.
    const calls = Object.entries(CASES).flatMap(([route, c]) => (['web', 'db'] as const).map((scope) => ({ route, c, scope })));
    const expected = calls.map(({ route, scope }) => `${route} [${scope}] ${allowed(route, role, binding, scope) ? 'passed' : refusal(route, role, binding, scope)}`);
    const outcomes = await inTurns(calls, 4, async ({ route, c, scope }) => {
      const method = route.split(' ')[0]!.toLowerCase() as Method;
      const { path, body } = await c.request(scope, w, fresh, token);
      const res = await call(token, method, path, body);
      const ok = allowed(route, role, binding, scope);
      // Allowed: past the gate, whatever the route then answers (a finished run cannot be cancelled: 409).
      // Past the gate, a decision on a conversation's step is a person's: a service account's is 403 people_only (409 once the step no longer waits).
      const pastGate = PEOPLE_ONLY.has(route) ? (res.status === 403 && res.body.error?.code === 'people_only') || res.status === 409 : res.status < 500 && ![401, 403, 404].includes(res.status);
      return `${route} [${scope}] ${ok ? (pastGate ? 'passed' : res.status) : res.status}`;
    });
    expect(outcomes).toEqual(expected);

    // Lists show what the binding reaches, and nothing else (an auditor reads none of them).
    if (!ROLE_ACTIONS[role].includes('read')) return;
    const listed = async (path: string) => ((await call(token, 'get', path)).body.data as { id: string }[]).map((item) => item.id);
    const reach = (s: Scope) => binding === 'all' || s === 'web';
    for (const s of ['web', 'db'] as const) {
      expect([s, (await listed('/servers?per_page=100')).includes(w.server[s])]).toEqual([s, reach(s)]);
      expect([s, (await listed('/deployments?per_page=100')).includes(w.deployment[s])]).toEqual([s, reach(s)]);
      expect([s, (await listed('/pipelines?per_page=100')).includes(w.pipeline[s])]).toEqual([s, reach(s)]);
      expect([s, (await listed('/conversations?per_page=100')).includes(w.conversation[s])]).toEqual([s, reach(s)]);
      expect([s, (await listed('/migration-plans?per_page=100')).includes(w.plan[s])]).toEqual([s, reach(s)]);
    }
  }, 180_000);

  test('every route that changes something leaves an entry in the audit trail, named from the route, with its outcome', async () => {
    // The routes come from the app: a route added later is called here too (it needs its line in CASES above).
    const recorded = (await bosun.routes()).filter(recordedRoutes(bosunOperations));
    expect(recorded.length).toBeGreaterThan(40);
    const started = new Date().toISOString();
    for (const route of recorded) {
      const method = route.split(' ')[0]!.toLowerCase() as Method;
      const { path, body } = await CASES[route]!.request('web', w, fresh, admin);
      await call(admin, method, path, body);
    }
    const trail = async () =>
      (await call(admin, 'get', `/audit/export?since=${started}`)).text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Json);
    const entries = await eventually(trail, (list) => recorded.every((route) => list.some((e: Json) => e.details.route === route && e.outcome !== 'pending')));
    for (const route of recorded) {
      const entry = entries.find((e: Json) => e.details.route === route)!;
      expect([route, entry.action, entry.actor.id, typeof entry.outcome]).toEqual([route, routeAction(route).action, expect.any(String), 'string']);
    }
    expect((await call(admin, 'post', '/audit/verify')).body).toMatchObject({ ok: true, first_broken: null });
  }, 180_000);

  test('a run touching more servers than a binding allows is refused, naming the limit; a run within it is not', async () => {
    const fleet = await created(admin, 'post', '/deployments', { name: `fleet-${n()}`, targets: { server_ids: [w.server.web, w.second.web] }, steps: [{ name: 'x', command: 'true' }] });
    const ci = await created(admin, 'post', '/service-accounts', { name: `ci-${n()}` });
    const limit = await created(admin, 'post', '/role-bindings', { role: 'operator', subject: { type: 'service_account', id: ci }, max_targets_per_run: 1 });
    const token = (await call(admin, 'post', `/service-accounts/${ci}/tokens`, { name: `ci-${n()}` })).body.data.token as string;
    const runs = async () => (await call(admin, 'get', `/deployments/${fleet}/runs`)).body.meta.total;

    const refused = await call(token, 'post', `/deployments/${fleet}/run`);
    expect([refused.status, refused.body.error.message]).toEqual([403, expect.stringContaining('at most 1 server(s) per run')]);
    expect(await runs()).toBe(0);
    expect((await call(token, 'post', `/deployments/${w.deployment.web}/run`)).status).toBe(202);

    await call(admin, 'patch', `/role-bindings/${limit}`, { max_targets_per_run: 2 });
    expect((await call(token, 'post', `/deployments/${fleet}/run`)).status).toBe(202);
    expect(await runs()).toBe(1);
  });

  test('a fleet trigger reaching a server outside the binding is refused with 403 naming it, and no run is created', async () => {
    const both = await created(admin, 'post', '/deployments', { name: `both-${n()}`, targets: { server_ids: [w.server.web, w.server.db] }, steps: [{ name: 'x', command: 'true' }] });
    const web = await created(admin, 'post', '/service-accounts', { name: `web-ci-${n()}` });
    await created(admin, 'post', '/role-bindings', { role: 'operator', subject: { type: 'service_account', id: web }, servers: { tags: ['web'] }, deployments: [both] });
    const token = (await call(admin, 'post', `/service-accounts/${web}/tokens`, { name: `web-ci-${n()}` })).body.data.token as string;
    const refused = await call(token, 'post', `/deployments/${both}/run`);
    expect(refused.status).toBe(403);
    expect(refused.body.error.details).toEqual([{ path: `servers/${w.server.db}`, message: expect.stringContaining('outside the role bindings') }]);
    expect((await call(admin, 'get', `/deployments/${both}/runs`)).body.meta.total).toBe(0);

    // Run by someone who may: the web team sees the run, and its web server's part, not the other's.
    const run = (await call(admin, 'post', `/deployments/${both}/run`)).body.run_id as string;
    expect((await call(token, 'get', `/deployments/${both}/runs/${run}`)).status).toBe(200);
    expect((await call(token, 'get', `/deployments/${both}/runs/${run}/targets/${w.server.web}`)).status).toBe(200);
    expect((await call(token, 'get', `/deployments/${both}/runs/${run}/targets/${w.server.db}`)).status).toBe(404);
    expect((await call(token, 'get', `/deployments/${both}/runs/${run}/targets/${w.server.db}/steps/1/log`)).status).toBe(404);
  });

  test('a token narrows its identity’s rights and never widens them', async () => {
    const narrow = (await call(admin, 'post', '/tokens', { name: `narrow-${n()}`, scopes: ['read'] })).body.data.token as string;
    expect((await call(narrow, 'post', `/deployments/${w.deployment.web}/run`)).status).toBe(403);
    const wider = await call(narrow, 'post', '/tokens', { name: `wider-${n()}`, scopes: ['admin'] });
    expect([wider.status, wider.body.error.message]).toEqual([403, expect.stringContaining('scopes its own lacks: admin')]);

    const viewer = await created(admin, 'post', '/service-accounts', { name: `viewer-${n()}` });
    await created(admin, 'post', '/role-bindings', { role: 'viewer', subject: { type: 'service_account', id: viewer } });
    const everything = (await call(admin, 'post', `/service-accounts/${viewer}/tokens`, { name: `all-${n()}`, scopes: ['admin'] })).body.data.token as string;
    expect((await call(everything, 'post', `/deployments/${w.deployment.web}/run`)).status).toBe(403);
    expect((await call(everything, 'get', `/deployments/${w.deployment.web}`)).status).toBe(200);
  });

  test('a role binding changed while a run is in flight does not change that run', async () => {
    const slow = await created(admin, 'post', '/deployments', { name: `slow-${n()}`, server_id: w.server.web, steps: [{ name: 'wait', command: 'sleep 2; echo done' }] });
    const ci = await created(admin, 'post', '/service-accounts', { name: `ci-${n()}` });
    const grant = await created(admin, 'post', '/role-bindings', { role: 'operator', subject: { type: 'service_account', id: ci } });
    const token = (await call(admin, 'post', `/service-accounts/${ci}/tokens`, { name: `ci-${n()}` })).body.data.token as string;
    const trigger = await call(token, 'post', `/deployments/${slow}/run`);
    expect(trigger.status).toBe(202);
    expect((await call(admin, 'delete', `/role-bindings/${grant}`)).status).toBe(204);
    const done = await eventually(async () => (await call(admin, 'get', `/deployments/${slow}/runs/${trigger.body.run_id}`)).body.data, (r: Json) => ['success', 'failed'].includes(r.status));
    expect(done.status).toBe('success');
    // Its rights are gone for the next one.
    expect((await call(token, 'post', `/deployments/${slow}/run`)).status).toBe(403);
  });
});
