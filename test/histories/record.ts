/**
 * Records the workflow histories the replay test (test/workflows/replay.test.ts) replays: real runs on
 * the real stack (mongod, the Temporal dev server, sshd), one JSON file per workflow in this folder.
 *
 *   npm run record:histories            # every scenario
 *   npm run record:histories -- copy    # the scenarios whose name contains "copy"
 *
 * Record again (and commit the files) after a deliberate, patched change of a workflow; keep the old
 * files too while workflows recorded by the old code may still be running somewhere.
 */
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { RulesPlanner } from '../../src/domain/planner/rules';
import type { PlanContext, Planner, PlanResult } from '../../src/domain/planner/types';
import { serverHealthSweepWorkflowId, auditChainWorkflowId, auditCheckpointWorkflowId, configSyncTickWorkflowId, conversationWorkflowId, deploymentRunWorkflowId, fleetTargetGroupWorkflowId, notificationDeliveryWorkflowId, notificationDispatchWorkflowId, requestedRunWorkflowId, bufferedRunWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { personToken as addPersonToken, userWithToken } from '../support/client';
import globalSetup from '../support/global-setup';
import globalTeardown from '../support/global-teardown';
import { sharedServices } from '../support/shared';
import { sharedFolder } from '../support/trees';
import { NotificationEventModel } from '../../src/domain/notifications/model';
import { pipelineRunWorkflowId } from '../../src/domain/contracts/pipelines';
import { GitServer } from '../support/git-server';
import { ConfigSourceModel } from '../../src/domain/config-sources/model';
import { ServerModel } from '../../src/domain/servers/model';

const OUT = path.join(__dirname);
const FINAL = ['success', 'failed', 'cancelled', 'completed'];
/** Health sweeps a few seconds apart: the recorded sweep's history holds some. */
const HEALTH_INTERVAL_SECONDS = 2;

/** The built-in rules, and a re-plan that tries another way once (as an LLM planner would). */
class ReplanningRules implements Planner {
  readonly name = 'rules-with-replan';
  readonly maxReplans = 1;
  private readonly rules = new RulesPlanner();
  plan(instruction: string, context: PlanContext): Promise<PlanResult> {
    return this.rules.plan(instruction, context);
  }
  replan(_instruction: string, context: PlanContext): Promise<PlanResult> {
    return this.rules.plan('show the hostname', context);
  }
}

interface Context {
  bosun: Bosun;
  token: string;
  serverId: string;
  api: (method: 'get' | 'post' | 'put', url: string, body?: object) => Promise<{ status: number; body: { data: Record<string, unknown>; run_id?: string } }>;
  /** The same, as a person: only people decide on conversation steps. */
  decide: Context['api'];
}

/** Saves a workflow's history once it closed (or, `open`, as it stands: a long-lived workflow). */
async function save(name: string, handle: WorkflowHandle, { open = false } = {}): Promise<void> {
  if (!open) await eventually(() => handle.describe(), (d) => d.status.name !== 'RUNNING', 60_000);
  // The Temporal CLI's JSON, as `temporal workflow show --output json` prints it: what replay reads.
  const { temporalBinary, temporalAddress } = sharedServices();
  const json = execFileSync(temporalBinary, ['workflow', 'show', '--address', temporalAddress, '--workflow-id', handle.workflowId, '--output', 'json'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const file = path.join(OUT, `${name}.json`);
  writeFileSync(file, json.endsWith('\n') ? json : `${json}\n`);
  console.log(`recorded ${path.relative(process.cwd(), file)} (${(JSON.parse(json) as { events: unknown[] }).events.length} events)`);
}

async function deploy(ctx: Context, name: string, steps: object[], during?: (runId: string, deploymentId: string) => Promise<void>) {
  const created = await ctx.api('post', '/api/v1/deployments', { name, server_id: ctx.serverId, steps });
  const deploymentId = created.body.data.id as string;
  const runId = (await ctx.api('post', `/api/v1/deployments/${deploymentId}/run`)).body.run_id!;
  await during?.(runId, deploymentId);
  await eventually(async () => (await ctx.api('get', `/api/v1/deployments/${deploymentId}/runs/${runId}`)).body.data.status as string, (s) => FINAL.includes(s), 60_000);
  return ctx.bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId));
}

async function converse(ctx: Context, body: object, during?: (id: string) => Promise<void>) {
  const id = (await ctx.api('post', '/api/v1/conversations', body)).body.data.id as string;
  await during?.(id);
  await eventually(async () => (await ctx.api('get', `/api/v1/conversations/${id}`)).body.data.status as string, (s) => FINAL.includes(s), 60_000);
  return ctx.bosun.temporal.workflow.getHandle(conversationWorkflowId(id));
}

/** A command that waits (up to 30 s) until the test writes `go` into `work`. */
const untilGo = (work: string) => `i=0; while [ ! -e ${work}/go ] && [ $i -lt 300 ]; do i=$((i+1)); sleep 0.1; done`;

const scenarios: Record<string, (ctx: Context) => Promise<void>> = {
  async 'deployment-retried-and-failed'(ctx) {
    const marker = path.join(sharedFolder('bosun-history-'), 'tried-once');
    const handle = await deploy(ctx, 'retried-and-failed', [
      { name: 'build', command: 'echo building' },
      { name: 'flaky', command: `test -f ${marker} || { touch ${marker}; exit 1; }`, retries: 1 },
      { name: 'long', command: 'sleep 3; echo done' },
      { name: 'migrate', command: 'echo migrating; exit 3' },
      { name: 'restart', command: 'echo never' },
    ]);
    await save('deployment-retried-and-failed', handle);
  },

  async 'deployment-queued'(ctx) {
    // A run holds the server; the next one, triggered behind it, is started by the server's queue when its turn comes.
    const hold = (await ctx.api('post', '/api/v1/deployments', { name: 'hold-one', server_id: ctx.serverId, steps: [{ name: 'hold', command: 'sleep 2' }] })).body.data.id as string;
    const held = (await ctx.api('post', `/api/v1/deployments/${hold}/run`)).body.run_id!;
    await eventually(async () => (await ctx.api('get', `/api/v1/deployments/${hold}/runs/${held}`)).body.data.status as string, (s) => s === 'running', 30_000);
    const handle = await deploy(ctx, 'queued', [{ name: 'after', command: 'echo after the other run' }]);
    await save('deployment-queued-success', handle);
    // The server's queue that gave it its turn: still open, waiting for the next run that must wait.
    await save('server-run-queue', ctx.bosun.temporal.workflow.getHandle(`server-run-queue-${ctx.serverId}`), { open: true });
  },

  async 'server-verification-and-health'(ctx) {
    await save('server-verification', ctx.bosun.temporal.workflow.getHandle(`server-verify-${ctx.serverId}`));
    // The organization's health sweep, started by the verification, after two sweeps (HEALTH_INTERVAL_SECONDS apart).
    const organizationId = String((await ServerModel.findById(ctx.serverId, { organization_id: 1 }).lean())!.organization_id);
    const sweep = ctx.bosun.temporal.workflow.getHandle(serverHealthSweepWorkflowId(organizationId));
    await eventually(async () => ((await sweep.fetchHistory()).events ?? []).filter((e) => e.activityTaskCompletedEventAttributes).length, (n) => n >= 2, 60_000);
    await save('server-health-sweep', sweep, { open: true });
  },

  async 'deployment-cancelled'(ctx) {
    const handle = await deploy(ctx, 'cancelled', [{ name: 'soak', command: 'sleep 60' }, { name: 'after', command: 'true' }], async (runId, deploymentId) => {
      await eventually(async () => ((await ctx.api('get', `/api/v1/deployments/${deploymentId}/runs/${runId}`)).body.data.steps as Array<{ status: string }>)[0]!.status, (s) => s === 'running');
      await ctx.api('post', `/api/v1/deployments/${deploymentId}/runs/${runId}/cancel`);
    });
    await save('deployment-cancelled', handle);
  },

  async 'deployment-fleet'(ctx) {
    const user = userWithToken(ctx.bosun, ctx.token);
    const servers = [ctx.serverId, await user.addServer({ host: '127.0.0.5' }), await user.addServer({ host: '127.0.0.6' })];
    // Batches of one; the second target fails, so the third batch is skipped.
    const created = await ctx.api('post', '/api/v1/deployments', {
      name: 'fleet',
      targets: { server_ids: servers },
      strategy: { batch_size: 1 },
      parameters: [{ name: 'version', required: true }],
      steps: [
        { name: 'show', command: 'echo "v$BOSUN_PARAM_VERSION"' },
        { name: 'check', command: 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3); [ "$here" != 127.0.0.5 ]' },
      ],
    });
    const deploymentId = created.body.data.id as string;
    // A one-server run holds the first server: its target waits for the queue to give it its turn;
    // the second target, with nothing ahead of it, takes its turn itself.
    const hold = (await ctx.api('post', '/api/v1/deployments', { name: 'hold', server_id: servers[0], steps: [{ name: 'hold', command: 'sleep 2' }] })).body.data.id as string;
    const held = (await ctx.api('post', `/api/v1/deployments/${hold}/run`)).body.run_id!;
    await eventually(async () => (await ctx.api('get', `/api/v1/deployments/${hold}/runs/${held}`)).body.data.status as string, (s) => s === 'running', 30_000);
    const runId = (await ctx.api('post', `/api/v1/deployments/${deploymentId}/run`, { parameters: { version: '1.4.2' } })).body.run_id!;
    await eventually(async () => (await ctx.api('get', `/api/v1/deployments/${deploymentId}/runs/${runId}`)).body.data.status as string, (s) => FINAL.includes(s), 60_000);
    await save('deployment-fleet-failed', ctx.bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId)));
    // Each batch's targets in a group's workflow (batches of one: a group of one each).
    await save('deployment-target-group-queued-success', ctx.bosun.temporal.workflow.getHandle(fleetTargetGroupWorkflowId(runId, 1, 1)));
    await save('deployment-target-group-failed', ctx.bosun.temporal.workflow.getHandle(fleetTargetGroupWorkflowId(runId, 2, 1)));
    // The queue that ran the one-server run, then gave the first target its turn: still open.
    await save('server-run-queue-turns', ctx.bosun.temporal.workflow.getHandle(`server-run-queue-${servers[0]}`), { open: true });
  },

  async 'deployment-fleet-guarded'(ctx) {
    const user = userWithToken(ctx.bosun, ctx.token);
    const servers = [ctx.serverId, await user.addServer({ host: '127.0.0.7' })];
    const approver = await personToken(ctx, 'Approver');
    const asApprover = (url: string, body: object) => ctx.bosun.api.post(url).set(bearer(approver)).send(body);
    // Batches of one, a gate before the second: paused during the first, resumed, then approved.
    const created = await ctx.api('post', '/api/v1/deployments', {
      name: 'guarded',
      targets: { server_ids: servers },
      strategy: { batch_size: 1, gates: [{ before_batch: 2, approvals: 1, expires_in: '1h' }] },
      steps: [{ name: 'soak', command: 'sleep 2' }],
    });
    const deploymentId = created.body.data.id as string;
    const runPath = (runId: string) => `/api/v1/deployments/${deploymentId}/runs/${runId}`;
    const statusOf = async (runId: string) => (await ctx.api('get', runPath(runId))).body.data.status as string;
    const runId = (await ctx.api('post', `/api/v1/deployments/${deploymentId}/run`)).body.run_id!;
    await eventually(async () => ((await ctx.api('get', runPath(runId))).body.data.targets as Array<{ status: string }>)[0]!.status, (s) => s === 'running', 30_000);
    await ctx.api('post', `${runPath(runId)}/pause`, { reason: 'recording a pause' });
    await eventually(() => statusOf(runId), (s) => s === 'paused', 30_000);
    await ctx.api('post', `${runPath(runId)}/resume`, {});
    await eventually(() => statusOf(runId), (s) => s === 'awaiting_approval', 30_000);
    expect200(await asApprover(`${runPath(runId)}/approve`, { comment: 'recorded' }));
    await eventually(() => statusOf(runId), (s) => FINAL.includes(s), 60_000);
    await save('deployment-fleet-paused-and-approved', ctx.bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId)));

    // A gate before anything runs, rejected.
    const gated = (await ctx.api('post', '/api/v1/deployments', { name: 'gated-first', targets: { server_ids: servers }, strategy: { gates: [{ before_batch: 1, approvals: 1 }] }, steps: [{ name: 'never', command: 'true' }] })).body.data.id as string;
    const second = (await ctx.api('post', `/api/v1/deployments/${gated}/run`)).body.run_id!;
    const secondPath = `/api/v1/deployments/${gated}/runs/${second}`;
    await eventually(async () => (await ctx.api('get', secondPath)).body.data.status as string, (s) => s === 'awaiting_approval', 30_000);
    expect200(await asApprover(`${secondPath}/reject`, { reason: 'recorded rejection' }));
    await eventually(async () => (await ctx.api('get', secondPath)).body.data.status as string, (s) => FINAL.includes(s), 60_000);
    await save('deployment-fleet-gate-rejected', ctx.bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(second)));

    // A gate nobody decides: it expires.
    const expiring = (await ctx.api('post', '/api/v1/deployments', { name: 'gate-expires', targets: { server_ids: servers }, strategy: { gates: [{ before_batch: 1, approvals: 1, expires_in: '2s' }] }, steps: [{ name: 'never', command: 'true' }] })).body.data.id as string;
    const third = (await ctx.api('post', `/api/v1/deployments/${expiring}/run`)).body.run_id!;
    await eventually(async () => (await ctx.api('get', `/api/v1/deployments/${expiring}/runs/${third}`)).body.data.status as string, (s) => FINAL.includes(s), 60_000);
    await save('deployment-fleet-gate-expired', ctx.bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(third)));

    // A gate open longer than an hour warns of its expiry an hour before (run.approval_expiring), then is approved.
    const warned = (await ctx.api('post', '/api/v1/deployments', { name: 'gate-warns', targets: { server_ids: servers }, strategy: { gates: [{ before_batch: 1, approvals: 1, expires_in: '3602s' }] }, steps: [{ name: 'after', command: 'true' }] })).body.data.id as string;
    const fourth = (await ctx.api('post', `/api/v1/deployments/${warned}/run`)).body.run_id!;
    const fourthHandle = ctx.bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(fourth));
    // The warning is recorded (its notification event) once the timer an hour before expiry fired.
    await eventually(() => NotificationEventModel.exists({ type: 'run.approval_expiring', 'subject.id': fourth }), (found) => found !== null, 30_000);
    expect200(await asApprover(`/api/v1/deployments/${warned}/runs/${fourth}/approve`, { comment: 'approved after the warning' }));
    await eventually(async () => (await ctx.api('get', `/api/v1/deployments/${warned}/runs/${fourth}`)).body.data.status as string, (s) => FINAL.includes(s), 60_000);
    await save('deployment-fleet-gate-warned', fourthHandle);
  },

  async 'pipeline-release'(ctx) {
    const user = userWithToken(ctx.bosun, ctx.token);
    const other = await user.addServer({ host: '127.0.0.11' });
    const define = async (name: string, server: string, command: string, parameters: object[] = []) =>
      (await ctx.api('post', '/api/v1/deployments', { name, server_id: server, parameters, steps: [{ name: 'do', command }] })).body.data.id as string;
    const build = await define('pl-build', ctx.serverId, 'echo "artifact=web.tgz" >> "$BOSUN_OUTPUT"');
    const ship = await define('pl-ship', other, 'echo "$BOSUN_PARAM_ARTIFACT"', [{ name: 'artifact', required: true }]);
    const check = await define('pl-check', ctx.serverId, 'echo checked');
    const fail = await define('pl-fail', other, 'exit 1');
    const pipeline = (
      await ctx.api('post', '/api/v1/pipelines', {
        name: 'recorded-release',
        stages: [
          { name: 'build', deployment: build },
          { name: 'ship', deployment: ship, needs: ['build'], gate: { approvals: 1, expires_in: '1h' }, parameters: { artifact: '${{ stages.build.outputs.artifact }}' } },
          { name: 'check', deployment: check, needs: ['build'] },
          { name: 'smoke', deployment: fail, needs: ['ship', 'check'] },
          { name: 'after', deployment: check, needs: ['smoke'] },
          { name: 'page', deployment: check, needs: ['smoke'], when: 'failure' },
          { name: 'cleanup', deployment: check, needs: ['after'], when: 'always' },
        ],
      })
    ).body.data.id as string;
    const runPath = (runId: string) => `/api/v1/pipelines/${pipeline}/runs/${runId}`;
    const approver = await addPersonToken(user, 'Ines', 'approver');
    // A gate approved by a person, fan-out and fan-in, a failed stage, a failure stage, an always stage.
    const runId = (await ctx.api('post', `/api/v1/pipelines/${pipeline}/run`)).body.run_id!;
    await eventually(async () => (await ctx.api('get', runPath(runId))).body.data.status as string, (s) => s === 'awaiting_approval', 60_000);
    const approved = await ctx.bosun.api.post(`${runPath(runId)}/stages/ship/approve`).set(bearer(approver.token)).send({ comment: 'recorded' });
    if (approved.status !== 200) throw new Error(`approve: ${approved.status} ${JSON.stringify(approved.body)}`);
    await eventually(async () => (await ctx.api('get', runPath(runId))).body.data.status as string, (s) => FINAL.includes(s), 60_000);
    await save('pipeline-release', ctx.bosun.temporal.workflow.getHandle(pipelineRunWorkflowId(runId)));
    // Cancelled while its gate waits.
    const cancelled = (await ctx.api('post', `/api/v1/pipelines/${pipeline}/run`)).body.run_id!;
    await eventually(async () => (await ctx.api('get', runPath(cancelled))).body.data.status as string, (s) => s === 'awaiting_approval', 60_000);
    await ctx.api('post', `${runPath(cancelled)}/cancel`);
    await eventually(async () => (await ctx.api('get', runPath(cancelled))).body.data.status as string, (s) => FINAL.includes(s), 60_000);
    await save('pipeline-cancelled', ctx.bosun.temporal.workflow.getHandle(pipelineRunWorkflowId(cancelled)));
  },

  async 'notifications-and-audit'(ctx) {
    // A receiver that refuses the first notification and takes the rest: the dispatcher makes the first attempt itself, and
    // hands the refused delivery to its subject's workflow, which goes on from attempt 2 (`attemptsMade`).
    let received = 0;
    const receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead((received += 1) === 1 ? 503 : 204).end()));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const channel = (await ctx.api('post', '/api/v1/notification-channels', { name: 'recorded-hook', type: 'webhook', url, events: ['run.succeeded'] })).body.data.id as string;
      const created = await ctx.api('post', '/api/v1/deployments', { name: 'told', server_id: ctx.serverId, steps: [{ name: 'hello', command: 'echo hello' }] });
      const runId = (await ctx.api('post', `/api/v1/deployments/${created.body.data.id as string}/run`)).body.run_id!;
      await eventually(async () => ((await ctx.api('get', `/api/v1/notification-channels/${channel}/deliveries`)).body.data as unknown as Array<{ status: string }>).map((d) => d.status), (s) => s.includes('delivered'), 60_000);
      // Long-lived workflows, saved as they stand: the delivery's (it ends after a minute idle), the dispatcher, the trail's chainer and clock.
      await save('notification-delivery', ctx.bosun.temporal.workflow.getHandle(notificationDeliveryWorkflowId(channel, { kind: 'run', id: runId })), { open: true });
      await save('notification-dispatch', ctx.bosun.temporal.workflow.getHandle(notificationDispatchWorkflowId(ctx.bosun.taskQueue)), { open: true });
      await eventually(async () => (await ctx.api('get', `/api/v1/audit?run=${runId}`)).body.data as unknown as unknown[], (entries) => entries.length > 0, 30_000);
      await save('audit-chain', ctx.bosun.temporal.workflow.getHandle(auditChainWorkflowId(ctx.bosun.taskQueue)), { open: true });
      await save('audit-checkpoints', ctx.bosun.temporal.workflow.getHandle(auditCheckpointWorkflowId(ctx.bosun.taskQueue)), { open: true });
    } finally {
      receiver.close();
    }
  },

  async 'deployment-fleet-health-rollback'(ctx) {
    const user = userWithToken(ctx.bosun, ctx.token);
    const servers = [ctx.serverId, await user.addServer({ host: '127.0.0.8' })];
    // A soak and a health check after each batch; the second server's check fails, so the run halts and rolls back both.
    const created = await ctx.api('post', '/api/v1/deployments', {
      name: 'health-and-rollback',
      targets: { server_ids: servers },
      strategy: { batch_size: 1, health_check: { command: 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3); [ "$here" != 127.0.0.8 ]', soak_seconds: 1, retries: 1, interval_seconds: 1 } },
      steps: [{ name: 'release', command: 'echo released' }],
      rollback: { steps: [{ name: 'restore', command: 'echo "restoring: $BOSUN_ROLLBACK_REASON"' }] },
    });
    const deploymentId = created.body.data.id as string;
    const runId = (await ctx.api('post', `/api/v1/deployments/${deploymentId}/run`)).body.run_id!;
    const run = await eventually(async () => (await ctx.api('get', `/api/v1/deployments/${deploymentId}/runs/${runId}`)).body.data as { status: string; targets: Array<{ rollback: { run_id: string } | null }> }, (r) => FINAL.includes(r.status), 120_000);
    await save('deployment-fleet-health-rollback', ctx.bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId)));
    // A rollback run: a one-server run started by its fleet run, taking its server's turn itself.
    await save('deployment-rollback-run', ctx.bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(run.targets[0]!.rollback!.run_id)));
  },

  async 'deployment-fleet-window'(ctx) {
    const user = userWithToken(ctx.bosun, ctx.token);
    const servers = [ctx.serverId, await user.addServer({ host: '127.0.0.12' }), await user.addServer({ host: '127.0.0.13' })];
    const approver = await personToken(ctx, 'Windower');
    // A rolling window of two, a health check per target (the second's fails, one failure allowed), a gate before the third target: approved.
    const created = await ctx.api('post', '/api/v1/deployments', {
      name: 'windowed',
      targets: { server_ids: servers },
      strategy: { max_concurrency: 2, max_failures: 1, gates: [{ before_target: 3, approvals: 1, expires_in: '1h' }], health_check: { command: 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3); [ "$here" != 127.0.0.12 ]' } },
      steps: [{ name: 'release', command: 'echo released' }],
    });
    const deploymentId = created.body.data.id as string;
    const runPath = `/api/v1/deployments/${deploymentId}/runs/`;
    const runId = (await ctx.api('post', `/api/v1/deployments/${deploymentId}/run`)).body.run_id!;
    await eventually(async () => (await ctx.api('get', runPath + runId)).body.data.status as string, (s) => s === 'awaiting_approval', 60_000);
    expect200(await ctx.bosun.api.post(`${runPath}${runId}/approve`).set(bearer(approver)).send({ comment: 'recorded' }));
    await eventually(async () => (await ctx.api('get', runPath + runId)).body.data.status as string, (s) => FINAL.includes(s), 60_000);
    await save('deployment-fleet-window', ctx.bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId)));
  },

  async 'deployment-rollback-requested'(ctx) {
    const created = await ctx.api('post', '/api/v1/deployments', {
      name: 'rollback-on-request',
      targets: { server_ids: [ctx.serverId] },
      steps: [{ name: 'release', command: 'echo broken; exit 1' }],
      rollback: { automatic: false, steps: [{ name: 'restore', command: 'echo "restoring: $BOSUN_ROLLBACK_REASON"' }] },
    });
    const deploymentId = created.body.data.id as string;
    const runPath = (runId: string) => `/api/v1/deployments/${deploymentId}/runs/${runId}`;
    const runId = (await ctx.api('post', `/api/v1/deployments/${deploymentId}/run`)).body.run_id!;
    await eventually(async () => (await ctx.api('get', runPath(runId))).body.data.status as string, (s) => FINAL.includes(s), 60_000);
    await ctx.api('post', `${runPath(runId)}/rollback`, { reason: 'recorded' });
    await save('deployment-rollback-requested', ctx.bosun.temporal.workflow.getHandle(`deployment-rollback-${runId}`));
  },

  async 'deployment-fleet-frozen'(ctx) {
    const user = userWithToken(ctx.bosun, ctx.token);
    const servers = [ctx.serverId, await user.addServer({ host: '127.0.0.10' })];
    const work = sharedFolder('bosun-frozen-');
    // The first batch waits for a file; a freeze is declared meanwhile, so the second batch waits for it; lifting it lets the run finish.
    const created = await ctx.api('post', '/api/v1/deployments', {
      name: 'meets-a-freeze',
      targets: { server_ids: servers },
      strategy: { batch_size: 1 },
      steps: [{ name: 'release', command: `${untilGo(work)}; echo released` }],
    });
    const deploymentId = created.body.data.id as string;
    const runPath = (runId: string) => `/api/v1/deployments/${deploymentId}/runs/${runId}`;
    const runId = (await ctx.api('post', `/api/v1/deployments/${deploymentId}/run`)).body.run_id!;
    await eventually(async () => ((await ctx.api('get', runPath(runId))).body.data.targets as Array<{ status: string }>)[0]!.status, (s) => s === 'running', 30_000);
    const freeze = (await ctx.api('post', '/api/v1/freezes', { name: 'recorded-freeze', starts_at: new Date(Date.now() - 1000).toISOString(), ends_at: new Date(Date.now() + 3600_000).toISOString(), tags: null })).body.data.id as string;
    writeFileSync(`${work}/go`, '');
    await eventually(async () => (await ctx.api('get', runPath(runId))).body.data.status as string, (s) => s === 'frozen', 30_000);
    await ctx.bosun.api.delete(`/api/v1/freezes/${freeze}`).set(bearer(ctx.token));
    await eventually(async () => (await ctx.api('get', runPath(runId))).body.data.status as string, (s) => FINAL.includes(s), 120_000);
    await save('deployment-fleet-frozen', ctx.bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId)));
  },

  async 'deployment-one-server-frozen'(ctx) {
    const work = sharedFolder('bosun-one-frozen-');
    // A run holds the server until a file appears; a second queues behind it; a freeze is declared, so the second's turn comes frozen; lifting it lets it run.
    const hold = (await ctx.api('post', '/api/v1/deployments', { name: 'holds-the-server', server_id: ctx.serverId, steps: [{ name: 'hold', command: untilGo(work) }] })).body.data.id as string;
    const holding = (await ctx.api('post', `/api/v1/deployments/${hold}/run`)).body.run_id!;
    await eventually(async () => (await ctx.api('get', `/api/v1/deployments/${hold}/runs/${holding}`)).body.data.status as string, (s) => s === 'running', 30_000);
    const created = await ctx.api('post', '/api/v1/deployments', { name: 'queued-into-a-freeze', server_id: ctx.serverId, steps: [{ name: 'release', command: 'echo released' }] });
    const deploymentId = created.body.data.id as string;
    const runPath = (runId: string) => `/api/v1/deployments/${deploymentId}/runs/${runId}`;
    const runId = (await ctx.api('post', `/api/v1/deployments/${deploymentId}/run`)).body.run_id!;
    const freeze = (await ctx.api('post', '/api/v1/freezes', { name: 'recorded-queue-freeze', starts_at: new Date(Date.now() - 1000).toISOString(), ends_at: new Date(Date.now() + 3600_000).toISOString(), tags: null })).body.data.id as string;
    writeFileSync(`${work}/go`, '');
    await eventually(async () => (await ctx.api('get', runPath(runId))).body.data.status as string, (s) => s === 'frozen', 30_000);
    await ctx.bosun.api.delete(`/api/v1/freezes/${freeze}`).set(bearer(ctx.token));
    await eventually(async () => (await ctx.api('get', runPath(runId))).body.data.status as string, (s) => FINAL.includes(s), 120_000);
    await save('deployment-one-server-frozen', ctx.bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId)));
  },

  async 'schedule-tick-buffered'(ctx) {
    const work = sharedFolder('bosun-buffered-');
    const created = await ctx.api('post', '/api/v1/deployments', { name: 'buffered', server_id: ctx.serverId, steps: [{ name: 'hold', command: untilGo(work) }] });
    const deploymentId = created.body.data.id as string;
    const schedule = (await ctx.api('post', `/api/v1/deployments/${deploymentId}/schedules`, { name: 'by-hand', cron: '0 0 1 1 *', time_zone: 'UTC' })).body.data.id as string;
    const ticks = `/api/v1/deployments/${deploymentId}/schedules/${schedule}/ticks`;
    // A first run-now holds; a second, buffer_one, waits for it to end, then fires.
    await ctx.api('post', `/api/v1/deployments/${deploymentId}/schedules/${schedule}/trigger`);
    await eventually(async () => (await ctx.api('get', ticks)).body.data as unknown as unknown[], (list) => list.length === 1, 60_000);
    expect200(await ctx.bosun.api.post(`/api/v1/deployments/${deploymentId}/schedules/${schedule}/trigger`).set(bearer(ctx.token)).send({ overlap: 'buffer_one' }), 202);
    writeFileSync(`${work}/go`, '');
    await eventually(async () => (await ctx.api('get', ticks)).body.data as unknown as unknown[], (list) => list.length === 2, 60_000);
    await save('schedule-tick-buffered', ctx.bosun.temporal.workflow.getHandle(bufferedRunWorkflowId(schedule)));
  },

  async 'schedule-tick'(ctx) {
    const created = await ctx.api('post', '/api/v1/deployments', { name: 'scheduled', server_id: ctx.serverId, steps: [{ name: 'backup', command: 'echo backup' }] });
    const deploymentId = created.body.data.id as string;
    const schedule = (await ctx.api('post', `/api/v1/deployments/${deploymentId}/schedules`, { name: 'nightly', cron: '30 2 * * *', time_zone: 'Europe/Berlin' })).body.data.id as string;
    // A run now: the same workflow as the clock's ticks, which start it, wait for its run and record the tick.
    const { scheduled_at: at } = (await ctx.api('post', `/api/v1/deployments/${deploymentId}/schedules/${schedule}/trigger`)).body as unknown as { scheduled_at: string };
    await eventually(async () => (await ctx.api('get', `/api/v1/deployments/${deploymentId}/schedules/${schedule}/ticks`)).body.data as unknown as unknown[], (ticks) => ticks.length > 0, 60_000);
    await save('schedule-tick', ctx.bosun.temporal.workflow.getHandle(requestedRunWorkflowId(schedule, at)));
  },

  async 'conversation-approval-and-replan'(ctx) {
    await ctx.api('put', '/api/v1/policy', { allow_destructive: false, require_approval_for: ['read'] });
    try {
      const handle = await converse(ctx, { chatable_type: 'server', chatable_id: ctx.serverId, message: 'tail /nonexistent/app.log' }, async (id) => {
        // Approve every step that waits (the first, then the re-plan's).
        for (let approved = 0; approved < 2; ) {
          const conversation = (await ctx.api('get', `/api/v1/conversations/${id}`)).body.data as { status: string; steps: Array<{ id: string; status: string; approval: { decision: string | null } | null }> };
          if (FINAL.includes(conversation.status)) break;
          const waiting = conversation.steps.find((s) => s.status === 'pending' && s.approval && s.approval.decision === null);
          if (waiting && conversation.status === 'awaiting_approval') {
            await ctx.decide('post', `/api/v1/conversations/${id}/steps/${waiting.id}/approve`);
            approved += 1;
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      });
      await save('conversation-approval-and-replan', handle);
    } finally {
      await ctx.api('put', '/api/v1/policy', { allow_destructive: false, require_approval_for: ['destructive'] });
    }
  },

  async 'conversation-failed'(ctx) {
    await save('conversation-failed', await converse(ctx, { chatable_type: 'server', chatable_id: ctx.serverId, message: 'show disk usage and reboot the server' }));
  },

  async 'conversation-rejected'(ctx) {
    await ctx.api('put', '/api/v1/policy', { allow_destructive: false, require_approval_for: ['read'] });
    try {
      const handle = await converse(ctx, { chatable_type: 'server', chatable_id: ctx.serverId, message: 'show the hostname' }, async (id) => {
        const waiting = await eventually(
          async () => (await ctx.api('get', `/api/v1/conversations/${id}`)).body.data as { status: string; steps: Array<{ id: string }> },
          (c) => c.status === 'awaiting_approval',
        );
        await ctx.decide('post', `/api/v1/conversations/${id}/steps/${waiting.steps[0]!.id}/reject`);
      });
      await save('conversation-rejected', handle);
    } finally {
      await ctx.api('put', '/api/v1/policy', { allow_destructive: false, require_approval_for: ['destructive'] });
    }
  },

  async 'conversation-migration-copy'(ctx) {
    const target = await userWithToken(ctx.bosun, ctx.token).addServer({ host: '127.0.0.4' });
    const plan = await ctx.api('post', '/api/v1/migration-plans', { title: 'app to new box', source_server_id: ctx.serverId, target_server_id: target });
    const work = sharedFolder('bosun-history-copy-');
    const from = path.join(work, 'www');
    mkdirSync(from, { recursive: true });
    writeFileSync(path.join(from, 'index.html'), '<h1>hello</h1>\n');
    const handle = await converse(ctx, { chatable_type: 'migration_plan', chatable_id: plan.body.data.id, message: `copy ${from} to the target at ${path.join(work, 'srv/www')}` });
    await save('conversation-migration-copy', handle);
  },

  /** A config source's sync asked for (fetch, plan, apply), then its schedule's tick finding no sync running and starting one. */
  async 'config-sync'(ctx) {
    const git = await GitServer.start();
    try {
      const title = (await ctx.api('get', `/api/v1/servers/${ctx.serverId}`)).body.data.title as string;
      const repo = await git.repository('recorded');
      await repo.commit({ 'web.yaml': `kind: Deployment\nname: synced\nspec:\n  server: ${title}\n  steps:\n    - name: hello\n      command: echo synced\n` });
      const account = (await ctx.api('post', '/api/v1/service-accounts', { name: 'recorded-sync' })).body.data.id as string;
      await ctx.api('post', '/api/v1/role-bindings', { role: 'admin', subject: { type: 'service_account', id: account } });
      const source = (await ctx.api('post', '/api/v1/config/sources', { name: 'recorded-repo', git: { url: repo.gitUrl }, run_as: 'recorded-sync' })).body.data;
      const asked = (await ctx.api('post', `/api/v1/config/sources/${source.id as string}/sync`, {})).body.data;
      await save('config-sync', ctx.bosun.temporal.workflow.getHandle(asked.workflow_id as string));
      await repo.commit({ 'web.yaml': `kind: Deployment\nname: synced\nspec:\n  server: ${title}\n  steps:\n    - name: hello\n      command: echo ticked\n` });
      const organizationId = String((await ConfigSourceModel.findById(source.id, { organization_id: 1 }).lean())!.organization_id);
      const tick = await ctx.bosun.temporal.workflow.start('configSyncWorkflow', {
        taskQueue: ctx.bosun.taskQueue!,
        workflowId: `${configSyncTickWorkflowId(source.id as string)}-recorded`,
        args: [{ sourceId: source.id as string, organizationId, tick: true }],
      });
      await save('config-sync-tick', tick);
    } finally {
      await git.stop();
    }
  },
};

/** A person with the approver role over every server, and a token of theirs. */
async function personToken(ctx: Context, name: string): Promise<string> {
  const person = (await ctx.api('post', '/api/v1/people', { name })).body.data.id as string;
  await ctx.api('post', '/api/v1/role-bindings', { role: 'approver', subject: { type: 'person', id: person } });
  return (await ctx.api('post', `/api/v1/people/${person}/tokens`, { name: `${name.toLowerCase()}-token` })).body.data.token as string;
}

function expect200(res: { status: number; body: unknown }, status = 200) {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
}

async function main() {
  const only = process.argv[2];
  process.env.TEST_LOG_LEVEL ??= 'silent';
  await globalSetup();
  const bosun = await startBosun({ planner: new ReplanningRules(), healthIntervalSeconds: HEALTH_INTERVAL_SECONDS });
  try {
    const token = await bosun.token('histories');
    const serverId = await userWithToken(bosun, token).addServer({ host: '127.0.0.3' });
    const as = (bearerToken: string): Context['api'] => async (method, url, body) => {
      const res = await bosun.api[method](url).set(bearer(bearerToken)).send(body);
      if (res.status >= 400) throw new Error(`${method.toUpperCase()} ${url}: ${res.status} ${JSON.stringify(res.body)}`);
      return res;
    };
    const api = as(token);
    const decide = as((await addPersonToken(userWithToken(bosun, token), 'Hana', 'operator')).token);
    for (const [name, scenario] of Object.entries(scenarios)) {
      if (only && !name.includes(only)) continue;
      await scenario({ bosun, token, serverId, api, decide });
    }
  } finally {
    await bosun.stop();
    await globalTeardown();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
